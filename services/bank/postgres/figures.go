package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/services/bank"
)

// ReconciliationFigures implements bank.Store: one read-only transaction,
// so the counts, the statements and the open transactions agree.
func (s *Store) ReconciliationFigures(ctx context.Context, tenantID, accountID string, q bank.ReconciliationQuery) (bank.Figures, error) {
	var f bank.Figures
	// from is NULL for a range open at its start.
	var from *string
	if q.From != "" {
		from = &q.From
	}
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT status, count(*), COALESCE(sum(amount), 0) FROM bank.transactions
			WHERE tenant_id = $1 AND bank_account_id = $2 AND ($3::date IS NULL OR booking_date >= $3::date) AND booking_date <= $4::date
			GROUP BY status`, tenantID, accountID, from, q.To)
		if err != nil {
			return err
		}
		f.Transactions = zeroFigures()
		var (
			status string
			count  int
			sum    decimal.Decimal
		)
		if _, err := pgx.ForEachRow(rows, []any{&status, &count, &sum}, func() error {
			fig := bankv1.Figure{Count: count, Sum: money.New(sum)}
			switch status {
			case bankv1.StatusOpen:
				f.Transactions.Open = fig
			case bankv1.StatusReconciled:
				f.Transactions.Reconciled = fig
			case bankv1.StatusEvidenced:
				f.Transactions.Evidenced = fig
			}
			f.Transactions.Total.Count += count
			f.Transactions.Total.Sum = f.Transactions.Total.Sum.Add(fig.Sum)
			return nil
		}); err != nil {
			return err
		}

		rows, err = tx.Query(ctx, `SELECT id, kind, NULLIF(statement_ref, ''), to_char(closing_date, 'YYYY-MM-DD'), closing_balance
			FROM bank.statements
			WHERE tenant_id = $1 AND bank_account_id = $2 AND closing_balance IS NOT NULL AND closing_date IS NOT NULL
				AND ($3::date IS NULL OR closing_date >= $3::date) AND closing_date <= $4::date
			ORDER BY closing_date DESC, created_at DESC, id DESC LIMIT 1`, tenantID, accountID, from, q.To)
		if err != nil {
			return err
		}
		last, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (bankv1.StatementBalance, error) {
			var b bankv1.StatementBalance
			err := row.Scan(&b.StatementID, &b.Kind, &b.StatementRef, &b.ClosingDate, &b.ClosingBalance.Decimal)
			return b, err
		})
		if err != nil {
			return err
		}
		if len(last) > 0 {
			f.LastStatement = &last[0]
		}

		// A statement without a closing date counts on the day it was
		// imported, so no failed check falls out of every range.
		rows, err = tx.Query(ctx, `SELECT id, kind, NULLIF(statement_ref, ''), to_char(closing_date, 'YYYY-MM-DD'), closing_balance, expected_closing
			FROM bank.statements
			WHERE tenant_id = $1 AND bank_account_id = $2 AND balance_mismatch
				AND closing_balance IS NOT NULL AND expected_closing IS NOT NULL
				AND ($3::date IS NULL OR COALESCE(closing_date, created_at::date) >= $3::date) AND COALESCE(closing_date, created_at::date) <= $4::date
			ORDER BY COALESCE(closing_date, created_at::date) DESC, created_at DESC, id DESC LIMIT $5`, tenantID, accountID, from, q.To, q.Limit)
		if err != nil {
			return err
		}
		f.Mismatches, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (bankv1.StatementMismatch, error) {
			var m bankv1.StatementMismatch
			err := row.Scan(&m.StatementID, &m.Kind, &m.StatementRef, &m.ClosingDate, &m.ClosingBalance.Decimal, &m.ExpectedClosing.Decimal)
			m.Difference = m.ClosingBalance.Sub(m.ExpectedClosing)
			return m, err
		})
		if err != nil {
			return err
		}

		rows, err = tx.Query(ctx, `SELECT `+transactionColumns+` FROM bank.transactions
			WHERE tenant_id = $1 AND bank_account_id = $2 AND status = 'open' AND ($3::date IS NULL OR booking_date >= $3::date) AND booking_date <= $4::date
			ORDER BY booking_date DESC, created_at DESC, id LIMIT $5`, tenantID, accountID, from, q.To, q.Limit)
		if err != nil {
			return err
		}
		f.OpenTransactions, err = pgx.CollectRows(rows, scanTransaction)
		return err
	})
	if err != nil {
		return bank.Figures{}, fmt.Errorf("postgres.ReconciliationFigures: %w", err)
	}
	return f, nil
}

func zeroFigures() bankv1.TransactionFigures {
	zero := bankv1.Figure{Sum: money.New(decimal.Zero)}
	return bankv1.TransactionFigures{Total: zero, Open: zero, Reconciled: zero, Evidenced: zero}
}

// BalanceBases implements bank.Store.
func (s *Store) BalanceBases(ctx context.Context, tenantID, accountID string) (map[string]bank.BalanceBasis, error) {
	out := map[string]bank.BalanceBasis{}
	// account is NULL for every bank account of the tenant.
	var account *string
	if accountID != "" {
		account = &accountID
	}
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT DISTINCT ON (bank_account_id) bank_account_id, to_char(closing_date, 'YYYY-MM-DD'), closing_balance
			FROM bank.statements
			WHERE tenant_id = $1 AND ($2::uuid IS NULL OR bank_account_id = $2::uuid) AND closing_balance IS NOT NULL AND closing_date IS NOT NULL
			ORDER BY bank_account_id, closing_date DESC, created_at DESC, id DESC`, tenantID, account)
		if err != nil {
			return err
		}
		var (
			id, date string
			amount   decimal.Decimal
		)
		if _, err := pgx.ForEachRow(rows, []any{&id, &date, &amount}, func() error {
			b := out[id]
			b.Anchor = &bank.Anchor{Date: date, Balance: amount}
			out[id] = b
			return nil
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT bank_account_id, to_char(booking_date, 'YYYY-MM-DD'), sum(amount)
			FROM bank.transactions
			WHERE tenant_id = $1 AND ($2::uuid IS NULL OR bank_account_id = $2::uuid)
			GROUP BY bank_account_id, booking_date ORDER BY bank_account_id, booking_date`, tenantID, account)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(rows, []any{&id, &date, &amount}, func() error {
			b := out[id]
			b.Days = append(b.Days, bank.DaySum{Date: date, Sum: amount})
			out[id] = b
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.BalanceBases: %w", err)
	}
	return out, nil
}

// PeriodCounts implements bank.Store.
func (s *Store) PeriodCounts(ctx context.Context, tenantID, from, to string) (bankv1.PeriodStatus, error) {
	var st bankv1.PeriodStatus
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM bank.accounts WHERE tenant_id = $1),
				count(*), count(*) FILTER (WHERE status = 'open'), count(*) FILTER (WHERE status = 'reconciled'), count(*) FILTER (WHERE status = 'evidenced')
			FROM bank.transactions WHERE tenant_id = $1 AND booking_date BETWEEN $2::date AND $3::date`, tenantID, from, to).
			Scan(&st.BankAccounts, &st.Total, &st.Open, &st.Reconciled, &st.Evidenced)
	})
	if err != nil {
		return bankv1.PeriodStatus{}, fmt.Errorf("postgres.PeriodCounts: %w", err)
	}
	return st, nil
}
