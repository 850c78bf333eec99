package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/bank"
)

// lockTransaction reads a transaction under its row lock: every change of
// a transaction's reconciliation starts here, so two of them on one
// transaction run one after the other.
func lockTransaction(ctx context.Context, tx pgx.Tx, tenantID, id string) (bank.Transaction, string, error) {
	rows, err := tx.Query(ctx, `SELECT `+transactionColumns+` FROM bank.transactions WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tenantID, id)
	if err != nil {
		return bank.Transaction{}, "", err
	}
	t, err := pgx.CollectExactlyOneRow(rows, scanTransaction)
	if err != nil {
		return bank.Transaction{}, "", db.NotFound(err, "bank transaction %s not found", id)
	}
	var account string
	if err := tx.QueryRow(ctx, `SELECT account_number FROM bank.accounts WHERE tenant_id = $1 AND id = $2`, tenantID, t.BankAccountID).Scan(&account); err != nil {
		return bank.Transaction{}, "", err
	}
	return t, account, nil
}

const reconciliationColumns = `id, bank_transaction_id, seq, mode, candidate_kind, intent_id::text, account_number, amount::text, currency,
	COALESCE(clearing_intent_id::text, ''), state, COALESCE(match_group_id::text, '')`

func scanReconciliation(row pgx.Row, r *bank.Reconciliation) error {
	var amount string
	if err := row.Scan(&r.ID, &r.BankTransactionID, &r.Seq, &r.Mode, &r.CandidateKind, &r.IntentID, &r.OpenItemAccount, &amount, &r.Currency,
		&r.ClearingIntentID, &r.State, &r.MatchGroupID); err != nil {
		return err
	}
	r.Amount = money.MustParse(amount)
	return nil
}

// live is the transaction's pending or active reconciliation, if any.
func live(ctx context.Context, tx pgx.Tx, tenantID, txID string) (*bank.Reconciliation, error) {
	var r bank.Reconciliation
	err := scanReconciliation(tx.QueryRow(ctx, `SELECT `+reconciliationColumns+` FROM bank.reconciliations
		WHERE tenant_id = $1 AND bank_transaction_id = $2 AND state IN ('pending', 'active')`, tenantID, txID), &r)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.TenantID = tenantID
	return &r, nil
}

func alreadyReconciled(id string) error {
	return errs.E(errs.Conflict, "bank transaction %s is already reconciled; unmatch it first", id)
}

// nextSeq numbers the transaction's next reconciliation.
func nextSeq(ctx context.Context, tx pgx.Tx, tenantID, txID string) (int, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT COALESCE(max(seq) + 1, 0) FROM bank.reconciliations WHERE tenant_id = $1 AND bank_transaction_id = $2`, tenantID, txID).Scan(&n)
	return n, err
}

// LinkBooking implements bank.ReconcileStore.
func (s *Store) LinkBooking(ctx context.Context, tenantID, txID, intentID string) (bank.Reconciliation, error) {
	var rec bank.Reconciliation
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		t, account, err := lockTransaction(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		if l, err := live(ctx, tx, tenantID, txID); err != nil {
			return err
		} else if l != nil || t.Status == bankv1.StatusReconciled {
			return alreadyReconciled(txID)
		}
		var bk bank.LedgerBooking
		var amount string
		var reversed, explained *string
		err = tx.QueryRow(ctx, `SELECT intent_id::text, account_number, amount::text, reversed_by::text, explained_by::text
			FROM bank.ledger_bookings WHERE tenant_id = $1 AND intent_id = $2 AND account_number = $3 FOR UPDATE`,
			tenantID, intentID, account).Scan(&bk.IntentID, &bk.AccountNumber, &amount, &reversed, &explained)
		if errors.Is(err, pgx.ErrNoRows) {
			return &errs.Error{Code: errs.NotFound, Message: fmt.Sprintf("no bank booking of intent %s on the bank account's ledger account %s", intentID, account),
				Err: bank.ErrNoBankBooking}
		}
		if err != nil {
			return err
		}
		switch {
		case reversed != nil:
			return errs.E(errs.Conflict, "the booking of intent %s was reversed by %s", intentID, *reversed)
		case explained != nil:
			return errs.E(errs.Conflict, "the booking of intent %s already explains bank transaction %s", intentID, *explained)
		}
		bk.Amount = money.MustParse(amount)
		if err := bank.CheckBooking(t, bk); err != nil {
			return err
		}
		seq, err := nextSeq(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		rec = bank.Reconciliation{ID: newID(), TenantID: tenantID, BankTransactionID: txID, BankAccountID: t.BankAccountID, Seq: seq,
			Mode: bankv1.ModeBankBooking, CandidateKind: bankv1.CandidateBankBooking, IntentID: intentID, OpenItemAccount: account,
			BankLedgerAccount: account, Amount: money.New(t.Amount.Abs()), Currency: t.Currency, State: bank.StateActive, Tx: t}
		if err := insertReconciliation(ctx, tx, rec, t.Status); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE bank.ledger_bookings SET explained_by = $3 WHERE tenant_id = $1 AND intent_id = $2 AND account_number = $4`,
			tenantID, intentID, txID, account); err != nil {
			return err
		}
		if err := setStatus(ctx, tx, tenantID, txID, bankv1.StatusReconciled); err != nil {
			return err
		}
		return putEvent(ctx, tx, bankv1.EventTransactionReconciled, rec, "")
	})
	if err != nil {
		return bank.Reconciliation{}, errs.Wrap("postgres.LinkBooking", err)
	}
	return rec, nil
}

func insertReconciliation(ctx context.Context, tx pgx.Tx, r bank.Reconciliation, prior string) error {
	var clearing, group *string
	if r.ClearingIntentID != "" {
		clearing = &r.ClearingIntentID
	}
	if r.MatchGroupID != "" {
		group = &r.MatchGroupID
	}
	_, err := tx.Exec(ctx, `INSERT INTO bank.reconciliations (id, tenant_id, bank_transaction_id, seq, mode, candidate_kind, intent_id,
			account_number, amount, currency, clearing_intent_id, state, prior_status, match_group_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, $10, $11, $12, $13, $14)`,
		r.ID, r.TenantID, r.BankTransactionID, r.Seq, r.Mode, r.CandidateKind, r.IntentID, r.OpenItemAccount, r.Amount.String(), r.Currency,
		clearing, r.State, prior, group)
	return err
}

func setStatus(ctx context.Context, tx pgx.Tx, tenantID, txID, status string) error {
	_, err := tx.Exec(ctx, `UPDATE bank.transactions SET status = $3 WHERE tenant_id = $1 AND id = $2`, tenantID, txID, status)
	return err
}

// putEvent writes the reconciled or unmatched event of r.
func putEvent(ctx context.Context, tx pgx.Tx, subject string, r bank.Reconciliation, reversal string) error {
	ev := bankv1.TransactionReconciled{TenantID: r.TenantID, ReconciliationID: r.ID, BankTransactionID: r.BankTransactionID,
		BankAccountID: r.BankAccountID, Mode: r.Mode, IntentID: r.IntentID, ReversalIntentID: reversal, TxDate: r.Tx.TxDate,
		Allocations: []bankv1.Allocation{{IntentID: r.IntentID, CandidateKind: r.CandidateKind, Amount: r.Amount, Currency: r.Currency}}}
	if r.Mode == bankv1.ModeOpenItem {
		ev.IntentID = r.ClearingIntentID
		ev.Allocations[0].OpenItemAccount = r.OpenItemAccount
	}
	_, err := outbox.Put(ctx, tx, Schema.Schema, subject, ev)
	return err
}

// ClaimOpenItem implements bank.ReconcileStore.
func (s *Store) ClaimOpenItem(ctx context.Context, tenantID, txID, intentID, account, kind string) (bank.Reconciliation, error) {
	var rec bank.Reconciliation
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		t, bankAccount, err := lockTransaction(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		l, err := live(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		if l != nil {
			// A pending claim of the same target is a retry after a crash or
			// a timeout: resume it.
			if l.State == bank.StatePending && l.Mode == bankv1.ModeOpenItem && l.IntentID == intentID && (account == "" || account == l.OpenItemAccount) {
				rec = *l
				rec.Tx, rec.BankAccountID, rec.BankLedgerAccount = t, t.BankAccountID, bankAccount
				rec.OpenItemRef, err = itemRef(ctx, tx, tenantID, intentID, l.OpenItemAccount)
				return err
			}
			return alreadyReconciled(txID)
		}
		if t.Status == bankv1.StatusReconciled {
			return alreadyReconciled(txID)
		}
		rows, err := tx.Query(ctx, `SELECT `+openItemColumns+`
			FROM bank.open_items
			WHERE tenant_id = $1 AND intent_id = $2 AND ($3 = '' OR account_number = $3) AND reversed_by IS NULL
			ORDER BY account_number FOR UPDATE`, tenantID, intentID, account)
		if err != nil {
			return err
		}
		items, err := pgx.CollectRows(rows, scanOpenItem)
		if err != nil {
			return err
		}
		switch {
		case len(items) == 0 && account != "":
			return errs.NotFoundf("intent %s has no open item on account %s", intentID, account)
		case len(items) == 0:
			return errs.NotFoundf("intent %s is no open item and no bank booking of the transaction's bank account", intentID)
		case len(items) > 1:
			return errs.Invalid("intent "+intentID+" has open items on several accounts", errs.Field("open_item_account", "required: the account of the open item to settle"))
		}
		it := items[0]
		if err := bank.CheckOpenItem(t, it, kind); err != nil {
			return err
		}
		seq, err := nextSeq(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		rec = bank.Reconciliation{ID: newID(), TenantID: tenantID, BankTransactionID: txID, BankAccountID: t.BankAccountID, Seq: seq,
			Mode: bankv1.ModeOpenItem, CandidateKind: bank.KindOf(it), IntentID: intentID, OpenItemAccount: it.AccountNumber,
			BankLedgerAccount: bankAccount, Amount: money.New(t.Amount.Abs()), Currency: t.Currency,
			ClearingIntentID: bank.ClearingIntentID(tenantID, txID, seq), State: bank.StatePending, Tx: t, OpenItemRef: it.ExternalReference}
		if err := insertReconciliation(ctx, tx, rec, t.Status); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE bank.open_items SET allocated_amount = allocated_amount + $4::numeric
			WHERE tenant_id = $1 AND intent_id = $2 AND account_number = $3`, tenantID, intentID, it.AccountNumber, rec.Amount.String()); err != nil {
			return err
		}
		return setStatus(ctx, tx, tenantID, txID, bankv1.StatusReconciled)
	})
	if err != nil {
		return bank.Reconciliation{}, errs.Wrap("postgres.ClaimOpenItem", err)
	}
	return rec, nil
}

func itemRef(ctx context.Context, tx pgx.Tx, tenantID, intentID, account string) (*string, error) {
	var ref *string
	err := tx.QueryRow(ctx, `SELECT external_reference FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2 AND account_number = $3`,
		tenantID, intentID, account).Scan(&ref)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return ref, err
}

// ConfirmPosted implements bank.ReconcileStore. The clearing booking's
// own line on the bank's ledger account is explained by the transaction:
// marked here when the projection already has it, and by the projection
// when it comes later (it looks the clearing intent up).
func (s *Store) ConfirmPosted(ctx context.Context, tenantID, id string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var r bank.Reconciliation
		if err := scanReconciliation(tx.QueryRow(ctx, `SELECT `+reconciliationColumns+` FROM bank.reconciliations WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
			tenantID, id), &r); err != nil {
			return err
		}
		switch r.State {
		case bank.StateActive:
			return nil
		case bank.StatePending:
		default:
			return errs.E(errs.Conflict, "the reconciliation of bank transaction %s was undone meanwhile", r.BankTransactionID)
		}
		r.TenantID = tenantID
		t, _, err := lockTransaction(ctx, tx, tenantID, r.BankTransactionID)
		if err != nil {
			return err
		}
		r.Tx, r.BankAccountID = t, t.BankAccountID
		if _, err := tx.Exec(ctx, `UPDATE bank.reconciliations SET state = 'active', updated_at = now() WHERE tenant_id = $1 AND id = $2`, tenantID, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE bank.ledger_bookings SET explained_by = $3 WHERE tenant_id = $1 AND intent_id = $2 AND explained_by IS NULL`,
			tenantID, r.ClearingIntentID, r.BankTransactionID); err != nil {
			return err
		}
		return putEvent(ctx, tx, bankv1.EventTransactionReconciled, r, "")
	})
	return errs.Wrap("postgres.ConfirmPosted", err)
}

// AbandonClaim implements bank.ReconcileStore.
func (s *Store) AbandonClaim(ctx context.Context, tenantID, id string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var r bank.Reconciliation
		if err := scanReconciliation(tx.QueryRow(ctx, `SELECT `+reconciliationColumns+` FROM bank.reconciliations WHERE tenant_id = $1 AND id = $2`,
			tenantID, id), &r); err != nil {
			return err
		}
		if _, _, err := lockTransaction(ctx, tx, tenantID, r.BankTransactionID); err != nil {
			return err
		}
		return release(ctx, tx, tenantID, id, "abandoned", nil)
	})
	return errs.Wrap("postgres.AbandonClaim", err)
}

// release ends a pending or active reconciliation in state: its
// allocation or link goes and the transaction gets its prior status back.
// The caller holds the transaction's lock.
func release(ctx context.Context, tx pgx.Tx, tenantID, id, state string, reversal *string) error {
	var r bank.Reconciliation
	var prior string
	var amount string
	err := tx.QueryRow(ctx, `UPDATE bank.reconciliations SET state = $3, reversal_intent_id = $4, updated_at = now()
		WHERE tenant_id = $1 AND id = $2 AND state IN ('pending', 'active')
		RETURNING bank_transaction_id, mode, intent_id::text, account_number, amount::text, prior_status`,
		tenantID, id, state, reversal).Scan(&r.BankTransactionID, &r.Mode, &r.IntentID, &r.OpenItemAccount, &amount, &prior)
	if errors.Is(err, pgx.ErrNoRows) {
		return errs.E(errs.Conflict, "the reconciliation was undone meanwhile")
	}
	if err != nil {
		return err
	}
	if r.Mode == bankv1.ModeOpenItem {
		_, err = tx.Exec(ctx, `UPDATE bank.open_items SET allocated_amount = allocated_amount - $4::numeric
			WHERE tenant_id = $1 AND intent_id = $2 AND account_number = $3`, tenantID, r.IntentID, r.OpenItemAccount, amount)
	} else {
		_, err = tx.Exec(ctx, `UPDATE bank.ledger_bookings SET explained_by = NULL
			WHERE tenant_id = $1 AND intent_id = $2 AND account_number = $3 AND explained_by = $4`, tenantID, r.IntentID, r.OpenItemAccount, r.BankTransactionID)
	}
	if err != nil {
		return err
	}
	var evidenced bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bank.evidence WHERE tenant_id = $1 AND bank_transaction_id = $2)`,
		tenantID, r.BankTransactionID).Scan(&evidenced); err != nil {
		return err
	}
	status := bankv1.StatusOpen
	if evidenced || prior == bankv1.StatusEvidenced {
		status = bankv1.StatusEvidenced
	}
	return setStatus(ctx, tx, tenantID, r.BankTransactionID, status)
}

// ActiveReconciliation implements bank.ReconcileStore.
func (s *Store) ActiveReconciliation(ctx context.Context, tenantID, txID string) (bank.Reconciliation, error) {
	var rec bank.Reconciliation
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM bank.transactions WHERE tenant_id = $1 AND id = $2`, tenantID, txID).Scan(&one); err != nil {
			return db.NotFound(err, "bank transaction %s not found", txID)
		}
		l, err := live(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		if l == nil {
			return errs.E(errs.Conflict, "bank transaction %s is not reconciled", txID)
		}
		rec = *l
		return nil
	})
	if err != nil {
		return bank.Reconciliation{}, errs.Wrap("postgres.ActiveReconciliation", err)
	}
	return rec, nil
}

// Unmatch implements bank.ReconcileStore.
func (s *Store) Unmatch(ctx context.Context, tenantID, txID, id string, reversal *string) (bankv1.Unmatched, error) {
	var out bankv1.Unmatched
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		t, _, err := lockTransaction(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		l, err := live(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		if l == nil || l.ID != id {
			return errs.E(errs.Conflict, "bank transaction %s is not reconciled", txID)
		}
		if err := release(ctx, tx, tenantID, id, "unmatched", reversal); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT status FROM bank.transactions WHERE tenant_id = $1 AND id = $2`, tenantID, txID).Scan(&out.Status); err != nil {
			return err
		}
		l.Tx, l.BankAccountID = t, t.BankAccountID
		rv := ""
		if reversal != nil {
			rv = *reversal
		}
		out.OK, out.BankTransactionID, out.Mode, out.ReversalIntentID = true, txID, l.Mode, reversal
		if l.State == bank.StatePending {
			return nil // never announced as reconciled, so nothing to take back
		}
		return putEvent(ctx, tx, bankv1.EventTransactionUnmatched, *l, rv)
	})
	if err != nil {
		return bankv1.Unmatched{}, errs.Wrap("postgres.Unmatch", err)
	}
	return out, nil
}

// PutEvidence implements bank.ReconcileStore.
func (s *Store) PutEvidence(ctx context.Context, tenantID, txID string, ev bankv1.Evidence, metadata json.RawMessage) (bankv1.Evidence, error) {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		t, _, err := lockTransaction(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		var meta any
		if metadata != nil {
			meta = string(metadata)
		}
		// A replaced evidence keeps its id: it is the transaction's one.
		if err := tx.QueryRow(ctx, `INSERT INTO bank.evidence (id, tenant_id, bank_transaction_id, evidence_type, title, note, document_id, metadata)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
			ON CONFLICT (tenant_id, bank_transaction_id) DO UPDATE SET evidence_type = EXCLUDED.evidence_type, title = EXCLUDED.title,
				note = EXCLUDED.note, document_id = EXCLUDED.document_id, metadata = EXCLUDED.metadata, updated_at = now()
			RETURNING id`, ev.ID, tenantID, txID, ev.EvidenceType, ev.Title, ev.Note, ev.DocumentID, meta).Scan(&ev.ID); err != nil {
			return err
		}
		if t.Status == bankv1.StatusOpen {
			return setStatus(ctx, tx, tenantID, txID, bankv1.StatusEvidenced)
		}
		return nil
	})
	if err != nil {
		return bankv1.Evidence{}, errs.Wrap("postgres.PutEvidence", err)
	}
	return ev, nil
}

// Evidence implements bank.ReconcileStore.
func (s *Store) Evidence(ctx context.Context, tenantID, txID string) (*bankv1.Evidence, error) {
	var out *bankv1.Evidence
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM bank.transactions WHERE tenant_id = $1 AND id = $2`, tenantID, txID).Scan(&one); err != nil {
			return db.NotFound(err, "bank transaction %s not found", txID)
		}
		var ev bankv1.Evidence
		err := tx.QueryRow(ctx, `SELECT id::text, evidence_type, title, note, document_id::text FROM bank.evidence
			WHERE tenant_id = $1 AND bank_transaction_id = $2`, tenantID, txID).Scan(&ev.ID, &ev.EvidenceType, &ev.Title, &ev.Note, &ev.DocumentID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		out = &ev
		return nil
	})
	if err != nil {
		return nil, errs.Wrap("postgres.Evidence", err)
	}
	return out, nil
}
