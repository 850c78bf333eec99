package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/bank"
)

// ImportStatements implements bank.Store.
func (s *Store) ImportStatements(ctx context.Context, tenantID, accountID string, imp bank.ImportMeta, stmts []bank.ParsedStatement) (bank.ImportResult, error) {
	res := bank.ImportResult{ImportID: imp.ID, TotalRows: imp.Refused, Errors: imp.Errors}
	for _, st := range stmts {
		res.TotalRows += len(st.Entries)
	}
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		var one int
		// One import of an account at a time: whether a batch booking is in
		// already (see statementWriter.Write) must not change under it.
		err := tx.QueryRow(ctx, `SELECT 1 FROM bank.accounts WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE`, tenantID, accountID).Scan(&one)
		if err = db.NotFound(err, "bank account %s not found", accountID); err != nil {
			return err
		}
		var sha *string
		if imp.FileSHA256 != "" {
			sha = &imp.FileSHA256
		}
		errsJSON, err := json.Marshal(nonNil(imp.Errors))
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO bank.imports (id, tenant_id, bank_account_id, source, file_sha256, state, errors)
			VALUES ($1, $2, $3, $4, $5, 'running', $6) ON CONFLICT (tenant_id, bank_account_id, file_sha256) WHERE file_sha256 IS NOT NULL DO NOTHING`,
			imp.ID, tenantID, accountID, imp.Source, sha, errsJSON)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			// The same file again: everything in it is stored already.
			res.DuplicateFile, res.SkippedDuplicates = true, res.TotalRows-imp.Refused
			return save(ctx, tx, imp, res)
		}
		for _, st := range stmts {
			sr, err := insertStatement(ctx, tx, tenantID, accountID, imp.ID, st)
			if err != nil {
				return err
			}
			res.Imported += sr.Imported
			res.SkippedDuplicates += sr.SkippedDuplicates
			if sr.ID != "" {
				res.Statements = append(res.Statements, sr)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE bank.imports SET state = 'done', total_rows = $3, imported = $4, skipped_duplicates = $5, finished_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, imp.ID, res.TotalRows, res.Imported, res.SkippedDuplicates); err != nil {
			return err
		}
		return save(ctx, tx, imp, res)
	})
	if err != nil {
		return bank.ImportResult{}, errs.Wrap("postgres.ImportStatements", err)
	}
	return res, nil
}

func save(ctx context.Context, tx pgx.Tx, imp bank.ImportMeta, res bank.ImportResult) error {
	if imp.Answer == nil {
		return idem.Save(ctx, tx, Schema.Schema, res)
	}
	return idem.Save(ctx, tx, Schema.Schema, imp.Answer(res))
}

func nonNil(e []bankv1.RowError) []bankv1.RowError {
	if e == nil {
		return []bankv1.RowError{}
	}
	return e
}

// insertStatement writes a statement row (when the statement has a kind)
// and its entries, skipping those whose dedup key the bank account has.
func insertStatement(ctx context.Context, tx pgx.Tx, tenantID, accountID, importID string, st bank.ParsedStatement) (bank.StatementResult, error) {
	w := &statementWriter{ctx: ctx, tx: tx, tenantID: tenantID, accountID: accountID, importID: importID}
	if err := w.Begin(st.Statement); err != nil {
		return bank.StatementResult{}, err
	}
	if err := w.Write(st.Entries); err != nil {
		return bank.StatementResult{}, err
	}
	return w.End(st.End)
}

// statementWriter is bank.StatementWriter inside one import's
// transaction. The statement row is written at Begin and completed at End
// (its closing balance and counts come last in every format); entries go
// in as they come, one batch per Write, so a statement is never held
// whole. With skipOnly (the file was imported before) it only counts.
type statementWriter struct {
	ctx                           context.Context
	tx                            pgx.Tx
	tenantID, accountID, importID string
	skipOnly                      bool

	st     bank.Statement
	stmtID *string
	dedup  *bank.Deduper
	sr     bank.StatementResult
}

// Begin implements bank.StatementWriter.
func (w *statementWriter) Begin(st bank.Statement) error {
	w.st, w.stmtID, w.dedup = st, nil, bank.NewDeduper()
	w.sr = bank.StatementResult{Kind: st.Kind, StatementRef: st.ID}
	if w.skipOnly || st.Kind == "" {
		return nil
	}
	id := newID()
	w.stmtID, w.sr.ID = &id, id
	var openDate *string
	var openBal *decimal.Decimal
	if o := st.Opening; o != nil {
		openDate, openBal = &o.Date, &o.Amount
	}
	_, err := w.tx.Exec(w.ctx, `INSERT INTO bank.statements (id, tenant_id, bank_account_id, import_id, kind, statement_ref, number,
		opening_date, opening_balance, entries, sum) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, 0)`,
		id, w.tenantID, w.accountID, w.importID, st.Kind, st.ID, st.Number, openDate, openBal)
	return err
}

// The statements that store an entry unless the account has its dedup
// key: any entry; a part of a batch, unless the account has the batch's
// booking ($24: its dedup key); a booking with a bank reference, unless
// the account has parts of it ($24: the reference).
const (
	insertColumns = `INSERT INTO bank.transactions (id, tenant_id, bank_account_id, import_id, statement_id, booking_date, value_date, amount, currency,
			bank_reference, end_to_end_id, mandate_id, creditor_id, batch_ref, counterparty_name, counterparty_iban, counterparty_bic,
			reference, booking_text, gvc, charges, reversal, dedup_key) `
	insertValues = `SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23 `
	onConflict   = ` ON CONFLICT (tenant_id, bank_account_id, dedup_key) DO NOTHING`

	insertEntry     = insertColumns + insertValues + onConflict
	insertBatchPart = insertColumns + insertValues + `WHERE NOT EXISTS (SELECT 1 FROM bank.transactions o
			WHERE o.tenant_id = $2 AND o.bank_account_id = $3 AND o.dedup_key = $24::text AND o.batch_ref = '')` + onConflict
	insertBooking = insertColumns + insertValues + `WHERE NOT EXISTS (SELECT 1 FROM bank.transactions o
			WHERE o.tenant_id = $2 AND o.bank_account_id = $3 AND o.batch_ref = $24::text AND o.batch_ref <> '')` + onConflict
)

// Write implements bank.StatementWriter.
func (w *statementWriter) Write(es []bank.Entry) error {
	w.sr.Entries += len(es)
	if w.skipOnly {
		w.sr.SkippedDuplicates += len(es)
		return nil
	}
	if len(es) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, e := range es {
		var valueDate *string
		if e.ValueDate != "" {
			valueDate = &e.ValueDate
		}
		// A batch booking stored once already counts as a duplicate in its
		// other form: a part of a batch (camt.054 details) whose booking is
		// in as one entry under the batch's reference, or a booking whose
		// parts are in. Which form stays is the one that came first, so the
		// account's sum is the bank's either way. (A part may carry the
		// booking's reference as its own: the booking stored as one entry
		// is the one without a batch_ref.) Each case has its own statement,
		// so that each uses its index.
		dedupKey := w.dedup.Key(e)
		stmt, extra := insertEntry, []any{}
		switch {
		case e.BatchRef != "":
			stmt, extra = insertBatchPart, []any{"ref:" + strings.TrimSpace(e.BatchRef)}
		case strings.HasPrefix(dedupKey, "ref:"):
			stmt, extra = insertBooking, []any{strings.TrimSpace(e.BankReference)}
		}
		b.Queue(stmt, append([]any{newID(), w.tenantID, w.accountID, w.importID, w.stmtID, e.BookingDate, valueDate, e.Amount, e.Currency,
			e.BankReference, e.EndToEndID, e.MandateID, e.CreditorID, e.BatchRef, e.CounterpartyName, e.CounterpartyIBAN, e.CounterpartyBIC,
			e.Reference, e.BookingText, e.GVC, e.Charges.Abs(), e.Reversal, dedupKey}, extra...)...)
	}
	br := w.tx.SendBatch(w.ctx, b)
	for range es {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return err
		}
		if tag.RowsAffected() == 1 {
			w.sr.Imported++
		} else {
			w.sr.SkippedDuplicates++
		}
	}
	return br.Close()
}

// End implements bank.StatementWriter.
func (w *statementWriter) End(end bank.StatementEnd) (bank.StatementResult, error) {
	sr := w.sr
	if w.stmtID == nil {
		return sr, nil
	}
	expected, closing, mismatch := bank.BalanceMismatch(w.st.Opening, end)
	var closeDate *string
	var closeBal, exp *decimal.Decimal
	if c := end.Closing; c != nil {
		closeDate, closeBal = &c.Date, &c.Amount
	}
	if w.st.Opening != nil && end.Closing != nil {
		exp, sr.ExpectedClosing, sr.Closing = &expected, &expected, &closing
	}
	sr.BalanceMismatch = mismatch
	_, err := w.tx.Exec(w.ctx, `UPDATE bank.statements SET closing_date = $3, closing_balance = $4, entries = $5, sum = $6,
		balance_mismatch = $7, expected_closing = $8 WHERE tenant_id = $1 AND id = $2`,
		w.tenantID, *w.stmtID, closeDate, closeBal, end.Entries, end.Sum, mismatch, exp)
	return sr, err
}

const transactionColumns = `id, bank_account_id, to_char(booking_date, 'YYYY-MM-DD'), to_char(value_date, 'YYYY-MM-DD'), amount, currency,
	NULLIF(counterparty_name, ''), NULLIF(counterparty_iban, ''), NULLIF(counterparty_bic, ''), NULLIF(reference, ''),
	NULLIF(bank_reference, ''), NULLIF(end_to_end_id, ''), NULLIF(mandate_id, ''), NULLIF(creditor_id, ''), NULLIF(batch_ref, ''),
	NULLIF(booking_text, ''), NULLIF(gvc, ''), charges, reversal, status, import_id, statement_id, created_at`

func scanTransaction(row pgx.CollectableRow) (bank.Transaction, error) {
	var t bank.Transaction
	err := row.Scan(&t.ID, &t.BankAccountID, &t.TxDate, &t.ValueDate, &t.Amount.Decimal, &t.Currency,
		&t.CounterpartyName, &t.CounterpartyIBAN, &t.CounterpartyBIC, &t.Reference,
		&t.BankReference, &t.EndToEndID, &t.MandateID, &t.CreditorID, &t.BatchRef,
		&t.TxType, &t.GVC, &t.Charges.Decimal, &t.Reversal, &t.Status, &t.BatchID, &t.StatementID, &t.CreatedAt)
	return t, err
}

// Transactions implements bank.Store.
func (s *Store) Transactions(ctx context.Context, tenantID string, f bankv1.TransactionFilter) ([]bank.Transaction, error) {
	where := []string{"tenant_id = $1"}
	args := []any{tenantID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.BankAccountID != "" {
		add("bank_account_id = ?", f.BankAccountID)
	}
	if f.From != "" {
		add("booking_date >= ?::date", f.From)
	}
	if f.To != "" {
		add("booking_date <= ?::date", f.To)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.Search != "" {
		// Any part of the texts an accountant searches by, case-blind; the
		// IBAN also as printed in groups of four.
		pattern := "%" + db.LikeEscape(f.Search) + "%"
		args = append(args, pattern, "%"+db.LikeEscape(bank.NormalizeIBAN(f.Search))+"%")
		n, m := "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))
		where = append(where, "(counterparty_name ILIKE "+n+" OR reference ILIKE "+n+" OR bank_reference ILIKE "+n+
			" OR end_to_end_id ILIKE "+n+" OR counterparty_iban LIKE "+m+")")
	}
	args = append(args, f.Limit, f.Offset)
	q := `SELECT ` + transactionColumns + ` FROM bank.transactions WHERE ` + strings.Join(where, " AND ") +
		fmt.Sprintf(` ORDER BY booking_date DESC, created_at DESC, id LIMIT $%d OFFSET $%d`, len(args)-1, len(args))
	var out []bank.Transaction
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanTransaction)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.Transactions: %w", err)
	}
	return out, nil
}

// Transaction implements bank.Store.
func (s *Store) Transaction(ctx context.Context, tenantID, id string) (bank.Transaction, error) {
	var out bank.Transaction
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+transactionColumns+` FROM bank.transactions WHERE tenant_id = $1 AND id = $2`, tenantID, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectExactlyOneRow(rows, scanTransaction)
		if err != nil {
			return err
		}
		// A transaction reconciled in a match group names its group.
		var group *string
		if err := tx.QueryRow(ctx, `SELECT match_group_id::text FROM bank.reconciliations
			WHERE tenant_id = $1 AND bank_transaction_id = $2 AND state IN ('pending', 'active') AND match_group_id IS NOT NULL`,
			tenantID, id).Scan(&group); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		out.MatchGroupID = group
		return nil
	})
	if err = db.NotFound(err, "bank transaction %s not found", id); err != nil {
		return bank.Transaction{}, errs.Wrap("postgres.Transaction", err)
	}
	return out, nil
}

func newID() string { return uuid.NewString() }
