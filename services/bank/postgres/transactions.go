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
		err := tx.QueryRow(ctx, `SELECT 1 FROM bank.accounts WHERE tenant_id = $1 AND id = $2`, tenantID, accountID).Scan(&one)
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
	sr := bank.StatementResult{Kind: st.Statement.Kind, StatementRef: st.Statement.ID, Entries: len(st.Entries)}
	var stmtID *string
	if st.Statement.Kind != "" {
		id := newID()
		stmtID, sr.ID = &id, id
		expected, closing, mismatch := bank.BalanceMismatch(st.Statement.Opening, st.End)
		var openDate, closeDate *string
		var openBal, closeBal, exp *decimal.Decimal
		if o := st.Statement.Opening; o != nil {
			openDate, openBal = &o.Date, &o.Amount
		}
		if c := st.End.Closing; c != nil {
			closeDate, closeBal = &c.Date, &c.Amount
		}
		if st.Statement.Opening != nil && st.End.Closing != nil {
			exp, sr.ExpectedClosing, sr.Closing = &expected, &expected, &closing
		}
		sr.BalanceMismatch = mismatch
		if _, err := tx.Exec(ctx, `INSERT INTO bank.statements (id, tenant_id, bank_account_id, import_id, kind, statement_ref, number,
			opening_date, opening_balance, closing_date, closing_balance, entries, sum, balance_mismatch, expected_closing)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			id, tenantID, accountID, importID, st.Statement.Kind, st.Statement.ID, st.Statement.Number,
			openDate, openBal, closeDate, closeBal, st.End.Entries, st.End.Sum, mismatch, exp); err != nil {
			return sr, err
		}
	}
	d := bank.NewDeduper()
	b := &pgx.Batch{}
	for _, e := range st.Entries {
		var valueDate *string
		if e.ValueDate != "" {
			valueDate = &e.ValueDate
		}
		b.Queue(`INSERT INTO bank.transactions (id, tenant_id, bank_account_id, import_id, statement_id, booking_date, value_date, amount, currency,
			bank_reference, end_to_end_id, mandate_id, creditor_id, batch_ref, counterparty_name, counterparty_iban, counterparty_bic,
			reference, booking_text, gvc, charges, reversal, dedup_key)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
			ON CONFLICT (tenant_id, bank_account_id, dedup_key) DO NOTHING`,
			newID(), tenantID, accountID, importID, stmtID, e.BookingDate, valueDate, e.Amount, e.Currency,
			e.BankReference, e.EndToEndID, e.MandateID, e.CreditorID, e.BatchRef, e.CounterpartyName, e.CounterpartyIBAN, e.CounterpartyBIC,
			e.Reference, e.BookingText, e.GVC, e.Charges.Abs(), e.Reversal, d.Key(e))
	}
	br := tx.SendBatch(ctx, b)
	for range st.Entries {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return sr, err
		}
		if tag.RowsAffected() == 1 {
			sr.Imported++
		} else {
			sr.SkippedDuplicates++
		}
	}
	return sr, br.Close()
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
		pattern := "%" + likeEscape(f.Search) + "%"
		args = append(args, pattern, "%"+likeEscape(bank.NormalizeIBAN(f.Search))+"%")
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

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
