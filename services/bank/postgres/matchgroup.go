package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/bank"
)

// Match groups: the group row, its transactions and allocations, and one
// reconciliation per transaction (mode match_group). Lock order, so that
// nothing deadlocks: the group's row, then its transactions in id order,
// then the open items in key order. A claim locks no group row (it
// inserts its own).

// loadGroupState reads what a group is decided on; with lock, under the
// rows' locks (transactions in id order, then items in key order).
func loadGroupState(ctx context.Context, tx pgx.Tx, tenantID string, txIDs []string, items []bank.ItemKey, lock bool) (bank.GroupState, error) {
	st := bank.GroupState{Transactions: map[string]bank.Transaction{}, BankLedgerAccounts: map[string]string{}, Items: map[bank.ItemKey]bank.OpenItem{}}
	forUpdate := ""
	if lock {
		forUpdate = " FOR UPDATE"
	}
	sorted := slices.Sorted(slices.Values(txIDs))
	rows, err := tx.Query(ctx, `SELECT `+transactionColumns+` FROM bank.transactions WHERE tenant_id = $1 AND id = ANY($2::uuid[]) ORDER BY id`+forUpdate,
		tenantID, sorted)
	if err != nil {
		return st, err
	}
	txs, err := pgx.CollectRows(rows, scanTransaction)
	if err != nil {
		return st, err
	}
	for _, t := range txs {
		st.Transactions[t.ID] = t
	}
	rows, err = tx.Query(ctx, `SELECT id::text, account_number FROM bank.accounts WHERE tenant_id = $1`, tenantID)
	if err != nil {
		return st, err
	}
	var id, number string
	if _, err := pgx.ForEachRow(rows, []any{&id, &number}, func() error {
		st.BankLedgerAccounts[id] = number
		return nil
	}); err != nil {
		return st, err
	}
	intents, accounts := make([]string, len(items)), make([]string, len(items))
	for i, k := range items {
		intents[i], accounts[i] = k.IntentID, k.Account
	}
	rows, err = tx.Query(ctx, `SELECT `+openItemColumns+` FROM bank.open_items
		WHERE tenant_id = $1 AND reversed_by IS NULL
			AND (intent_id::text, account_number) IN (SELECT i, a FROM unnest($2::text[], $3::text[]) AS u (i, a))
		ORDER BY intent_id, account_number`+forUpdate, tenantID, intents, accounts)
	if err != nil {
		return st, err
	}
	its, err := pgx.CollectRows(rows, scanOpenItem)
	if err != nil {
		return st, err
	}
	for _, it := range its {
		st.Items[bank.ItemKey{IntentID: it.IntentID, Account: it.AccountNumber}] = it
	}
	st.Pending, err = pendingGroup(ctx, tx, tenantID, sorted)
	return st, err
}

// pendingGroup is the pending group that claims exactly these
// transactions, if any.
func pendingGroup(ctx context.Context, tx pgx.Tx, tenantID string, sorted []string) (*bank.MatchGroup, error) {
	var groupID *string
	var groups, n int
	err := tx.QueryRow(ctx, `SELECT min(match_group_id::text), count(DISTINCT match_group_id), count(*) FILTER (WHERE state = 'pending')
		FROM bank.reconciliations WHERE tenant_id = $1 AND bank_transaction_id = ANY($2::uuid[]) AND state IN ('pending', 'active')`,
		tenantID, sorted).Scan(&groupID, &groups, &n)
	if err != nil || groupID == nil || groups != 1 || n != len(sorted) {
		return nil, err
	}
	var members int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM bank.match_group_transactions WHERE tenant_id = $1 AND match_group_id = $2`,
		tenantID, *groupID).Scan(&members); err != nil || members != len(sorted) {
		return nil, err
	}
	g, err := readGroup(ctx, tx, tenantID, *groupID, false)
	if err != nil || g.State != bank.StatePending {
		return nil, err
	}
	return &g, nil
}

func readGroup(ctx context.Context, tx pgx.Tx, tenantID, id string, lock bool) (bank.MatchGroup, error) {
	q := `SELECT id::text, clearing_intent_id::text, state, input_hash, booking, bank_account_id::text FROM bank.match_groups WHERE tenant_id = $1 AND id = $2`
	if lock {
		q += ` FOR UPDATE`
	}
	g := bank.MatchGroup{TenantID: tenantID}
	var booking []byte
	err := tx.QueryRow(ctx, q, tenantID, id).Scan(&g.ID, &g.ClearingIntentID, &g.State, &g.InputHash, &booking, &g.Clearing.BankAccountID)
	if errors.Is(err, pgx.ErrNoRows) {
		return g, errs.NotFoundf("match group %s not found", id)
	}
	if err != nil {
		return g, err
	}
	return g, json.Unmarshal(booking, &g.Clearing.Booking)
}

// GroupState implements bank.MatchGroupStore.
func (s *Store) GroupState(ctx context.Context, tenantID string, txIDs []string, items []bank.ItemKey) (bank.GroupState, error) {
	var st bank.GroupState
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		st, err = loadGroupState(ctx, tx, tenantID, txIDs, items, false)
		return err
	})
	if err != nil {
		return bank.GroupState{}, errs.Wrap("postgres.GroupState", err)
	}
	return st, nil
}

// ClaimMatchGroup implements bank.MatchGroupStore.
func (s *Store) ClaimMatchGroup(ctx context.Context, tenantID string, txIDs []string, items []bank.ItemKey, inputHash string, input bankv1.MatchGroupInput,
	decide func(bank.GroupState) (bank.Clearing, error)) (bank.MatchGroup, error) {
	var g bank.MatchGroup
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		st, err := loadGroupState(ctx, tx, tenantID, txIDs, items, true)
		if err != nil {
			return err
		}
		if st.Pending != nil && st.Pending.InputHash == inputHash {
			g = *st.Pending // the same request raced us, or a retry: resume it
			return nil
		}
		cl, err := decide(st)
		if err != nil {
			return err
		}
		sorted := slices.Sorted(slices.Values(txIDs))
		seq, err := nextSeq(ctx, tx, tenantID, sorted[0])
		if err != nil {
			return err
		}
		g = bank.MatchGroup{TenantID: tenantID, State: bank.StatePending, InputHash: inputHash, Clearing: cl}
		g.ID = bank.MatchGroupID(tenantID, sorted, seq)
		g.ClearingIntentID = bank.MatchGroupIntentID(tenantID, g.ID)
		in, err := json.Marshal(input)
		if err != nil {
			return err
		}
		booking, err := json.Marshal(cl.Booking)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO bank.match_groups (id, tenant_id, bank_account_id, clearing_intent_id, state, input, input_hash, booking)
			VALUES ($1, $2, $3, $4, 'pending', $5::jsonb, $6, $7::jsonb)`,
			g.ID, tenantID, cl.BankAccountID, g.ClearingIntentID, string(in), inputHash, string(booking)); err != nil {
			return err
		}
		for _, t := range cl.Transactions {
			if _, err := tx.Exec(ctx, `INSERT INTO bank.match_group_transactions (tenant_id, match_group_id, bank_transaction_id, amount)
				VALUES ($1, $2, $3, $4::numeric)`, tenantID, g.ID, t.ID, t.Amount.String()); err != nil {
				return err
			}
			seq, err := nextSeq(ctx, tx, tenantID, t.ID)
			if err != nil {
				return err
			}
			rec := bank.Reconciliation{ID: newID(), TenantID: tenantID, BankTransactionID: t.ID, Seq: seq, Mode: bankv1.ModeMatchGroup,
				CandidateKind: bankv1.ModeMatchGroup, IntentID: g.ClearingIntentID, OpenItemAccount: cl.BankLedgerAccount, Amount: t.Amount,
				Currency: bank.DefaultCurrency, ClearingIntentID: g.ClearingIntentID, State: bank.StatePending, MatchGroupID: g.ID}
			if err := insertReconciliation(ctx, tx, rec, t.Status); err != nil {
				return err
			}
			if err := setStatus(ctx, tx, tenantID, t.ID, bankv1.StatusReconciled); err != nil {
				return err
			}
		}
		for _, a := range cl.Allocations {
			var doc *string
			if a.DocAmount != nil {
				d := a.DocAmount.String()
				doc = &d
			}
			if _, err := tx.Exec(ctx, `INSERT INTO bank.match_group_allocations (tenant_id, match_group_id, intent_id, account_number, candidate_kind,
					bank_amount, settled_amount, currency, doc_amount)
				VALUES ($1, $2, $3, $4, $5, $6::numeric, $7::numeric, $8, $9::numeric)`,
				tenantID, g.ID, a.Item.IntentID, a.Item.Account, a.CandidateKind, a.BankAmount.String(), a.Settled.String(), a.Currency, doc); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE bank.open_items SET allocated_amount = allocated_amount + $4::numeric,
					allocated_doc_amount = allocated_doc_amount + COALESCE($5::numeric, 0)
				WHERE tenant_id = $1 AND intent_id = $2 AND account_number = $3`,
				tenantID, a.Item.IntentID, a.Item.Account, a.Settled.String(), doc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return bank.MatchGroup{}, errs.Wrap("postgres.ClaimMatchGroup", err)
	}
	return g, nil
}

// lockGroupTransactions locks a group's transactions in id order.
func lockGroupTransactions(ctx context.Context, tx pgx.Tx, tenantID, groupID string) error {
	rows, err := tx.Query(ctx, `SELECT id FROM bank.transactions WHERE tenant_id = $1
		AND id IN (SELECT bank_transaction_id FROM bank.match_group_transactions WHERE tenant_id = $1 AND match_group_id = $2)
		ORDER BY id FOR UPDATE`, tenantID, groupID)
	if err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// member is a transaction's reconciliation in a group.
type member struct {
	reconciliationID, txID, prior, txDate, bankAccountID string
}

// liveMembers are the group's reconciliations still pending or active.
func liveMembers(ctx context.Context, tx pgx.Tx, tenantID, groupID string) ([]member, error) {
	rows, err := tx.Query(ctx, `SELECT r.id::text, r.bank_transaction_id::text, r.prior_status, to_char(t.booking_date, 'YYYY-MM-DD'), t.bank_account_id::text
		FROM bank.reconciliations r JOIN bank.transactions t ON t.tenant_id = r.tenant_id AND t.id = r.bank_transaction_id
		WHERE r.tenant_id = $1 AND r.match_group_id = $2 AND r.state IN ('pending', 'active')
		ORDER BY r.bank_transaction_id`, tenantID, groupID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (member, error) {
		var m member
		err := r.Scan(&m.reconciliationID, &m.txID, &m.prior, &m.txDate, &m.bankAccountID)
		return m, err
	})
}

// groupAllocations are the allocations as the events carry them: an FX
// item's in its document currency, with the bank money beside it.
func groupAllocations(ctx context.Context, tx pgx.Tx, tenantID, groupID string) ([]bankv1.Allocation, error) {
	rows, err := tx.Query(ctx, `SELECT intent_id::text, account_number, candidate_kind, bank_amount::text, settled_amount::text, currency, doc_amount::text
		FROM bank.match_group_allocations WHERE tenant_id = $1 AND match_group_id = $2 ORDER BY intent_id, account_number`, tenantID, groupID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (bankv1.Allocation, error) {
		var a bankv1.Allocation
		var bankAmount, settled string
		var doc *string
		if err := r.Scan(&a.IntentID, &a.OpenItemAccount, &a.CandidateKind, &bankAmount, &settled, &a.Currency, &doc); err != nil {
			return a, err
		}
		a.Amount = money.MustParse(settled)
		if doc != nil {
			a.Amount = money.MustParse(*doc)
		}
		b := money.MustParse(bankAmount)
		a.BankAmount = &b
		return a, nil
	})
}

// putGroupEvents writes the reconciled or unmatched event of each member.
func putGroupEvents(ctx context.Context, tx pgx.Tx, subject, tenantID, groupID, clearing, reversal string, members []member) error {
	allocs, err := groupAllocations(ctx, tx, tenantID, groupID)
	if err != nil {
		return err
	}
	for _, m := range members {
		ev := bankv1.TransactionReconciled{TenantID: tenantID, ReconciliationID: m.reconciliationID, BankTransactionID: m.txID,
			BankAccountID: m.bankAccountID, Mode: bankv1.ModeMatchGroup, IntentID: clearing, ReversalIntentID: reversal, TxDate: m.txDate,
			Allocations: allocs, MatchGroupID: groupID}
		if _, err := outbox.Put(ctx, tx, Schema.Schema, subject, ev); err != nil {
			return err
		}
	}
	return nil
}

// ConfirmMatchGroup implements bank.MatchGroupStore.
func (s *Store) ConfirmMatchGroup(ctx context.Context, tenantID, groupID string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		g, err := readGroup(ctx, tx, tenantID, groupID, true)
		if err != nil {
			return err
		}
		switch g.State {
		case bank.StateActive:
			return nil
		case bank.StatePending:
		default:
			return errs.E(errs.Conflict, "match group %s was undone meanwhile", groupID)
		}
		if err := lockGroupTransactions(ctx, tx, tenantID, groupID); err != nil {
			return err
		}
		members, err := liveMembers(ctx, tx, tenantID, groupID)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE bank.match_groups SET state = 'active', updated_at = now() WHERE tenant_id = $1 AND id = $2`, tenantID, groupID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE bank.reconciliations SET state = 'active', updated_at = now()
			WHERE tenant_id = $1 AND match_group_id = $2 AND state = 'pending'`, tenantID, groupID); err != nil {
			return err
		}
		if len(members) > 0 {
			// The clearing booking's line on the bank's ledger account is
			// explained by the group (named by its first transaction).
			if _, err := tx.Exec(ctx, `UPDATE bank.ledger_bookings SET explained_by = $3 WHERE tenant_id = $1 AND intent_id = $2 AND explained_by IS NULL`,
				tenantID, g.ClearingIntentID, members[0].txID); err != nil {
				return err
			}
		}
		return putGroupEvents(ctx, tx, bankv1.EventTransactionReconciled, tenantID, groupID, g.ClearingIntentID, "", members)
	})
	return errs.Wrap("postgres.ConfirmMatchGroup", err)
}

// releaseGroup ends a live group in state: the allocations go, every
// member's reconciliation ends and its transaction gets its prior status
// back. It answers the group's state before and its members. The caller
// holds the group's and the transactions' locks.
func releaseGroup(ctx context.Context, tx pgx.Tx, tenantID, groupID, state string, reversal *string) (string, []member, error) {
	var prev string
	if err := tx.QueryRow(ctx, `SELECT state FROM bank.match_groups WHERE tenant_id = $1 AND id = $2`, tenantID, groupID).Scan(&prev); err != nil {
		return "", nil, err
	}
	if prev != bank.StatePending && prev != bank.StateActive {
		return "", nil, errs.E(errs.Conflict, "match group %s was undone meanwhile", groupID)
	}
	members, err := liveMembers(ctx, tx, tenantID, groupID)
	if err != nil {
		return "", nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE bank.match_groups SET state = $3, reversal_intent_id = $4, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
		tenantID, groupID, state, reversal); err != nil {
		return "", nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE bank.reconciliations SET state = $3, reversal_intent_id = $4, updated_at = now()
		WHERE tenant_id = $1 AND match_group_id = $2 AND state IN ('pending', 'active')`, tenantID, groupID, state, reversal); err != nil {
		return "", nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE bank.open_items o SET allocated_amount = o.allocated_amount - a.settled_amount,
			allocated_doc_amount = o.allocated_doc_amount - COALESCE(a.doc_amount, 0)
		FROM bank.match_group_allocations a
		WHERE o.tenant_id = $1 AND a.tenant_id = $1 AND a.match_group_id = $2 AND o.intent_id = a.intent_id AND o.account_number = a.account_number`,
		tenantID, groupID); err != nil {
		return "", nil, err
	}
	for _, m := range members {
		var evidenced bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bank.evidence WHERE tenant_id = $1 AND bank_transaction_id = $2)`,
			tenantID, m.txID).Scan(&evidenced); err != nil {
			return "", nil, err
		}
		status := bankv1.StatusOpen
		if evidenced || m.prior == bankv1.StatusEvidenced {
			status = bankv1.StatusEvidenced
		}
		if err := setStatus(ctx, tx, tenantID, m.txID, status); err != nil {
			return "", nil, err
		}
	}
	return prev, members, nil
}

// AbandonMatchGroup implements bank.MatchGroupStore.
func (s *Store) AbandonMatchGroup(ctx context.Context, tenantID, groupID string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := readGroup(ctx, tx, tenantID, groupID, true); err != nil {
			return err
		}
		if err := lockGroupTransactions(ctx, tx, tenantID, groupID); err != nil {
			return err
		}
		_, _, err := releaseGroup(ctx, tx, tenantID, groupID, "abandoned", nil)
		return err
	})
	return errs.Wrap("postgres.AbandonMatchGroup", err)
}

// UnmatchGroup implements bank.MatchGroupStore.
func (s *Store) UnmatchGroup(ctx context.Context, tenantID, txID, groupID string, reversal *string) (bankv1.Unmatched, error) {
	var out bankv1.Unmatched
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		g, err := readGroup(ctx, tx, tenantID, groupID, true)
		if err != nil {
			return err
		}
		if err := lockGroupTransactions(ctx, tx, tenantID, groupID); err != nil {
			return err
		}
		l, err := live(ctx, tx, tenantID, txID)
		if err != nil {
			return err
		}
		if l == nil || l.MatchGroupID != groupID {
			return errs.E(errs.Conflict, "bank transaction %s is not reconciled", txID)
		}
		prev, members, err := releaseGroup(ctx, tx, tenantID, groupID, "unmatched", reversal)
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT status FROM bank.transactions WHERE tenant_id = $1 AND id = $2`, tenantID, txID).Scan(&out.Status); err != nil {
			return err
		}
		out.OK, out.BankTransactionID, out.Mode, out.ReversalIntentID = true, txID, bankv1.ModeMatchGroup, reversal
		if prev == bank.StatePending {
			return nil // never announced as reconciled
		}
		rv := ""
		if reversal != nil {
			rv = *reversal
		}
		return putGroupEvents(ctx, tx, bankv1.EventTransactionUnmatched, tenantID, groupID, g.ClearingIntentID, rv, members)
	})
	if err != nil {
		return bankv1.Unmatched{}, errs.Wrap("postgres.UnmatchGroup", err)
	}
	return out, nil
}
