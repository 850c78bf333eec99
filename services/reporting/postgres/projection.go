package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// Project runs fn in one transaction holding the lock on the tenant's head
// row. The insert-or-touch statement creates the row at 0 when absent and
// locks it either way, in one round trip.
func (s *Store) Project(ctx context.Context, tenant string, fn func(reporting.ProjectionTx) error) error {
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		p := &projectionTx{tx: tx, tenant: tenant}
		err := tx.QueryRow(ctx, `INSERT INTO reporting.tenant_heads AS h (tenant_id) VALUES ($1)
			ON CONFLICT (tenant_id) DO UPDATE SET last_number = h.last_number
			RETURNING last_number`, tenant).Scan(&p.head)
		if err != nil {
			return err
		}
		return fn(p)
	})
	return errs.Wrap("reporting/postgres.Project", err)
}

type projectionTx struct {
	tx     pgx.Tx
	tenant string
	head   int64
}

func (p *projectionTx) Head() int64 { return p.head }

// Apply upserts every delta into the monthly balances and the yearly sums
// and moves the head, in one statement.
func (p *projectionTx) Apply(ctx context.Context, deltas []reporting.Delta, head int64) error {
	if len(deltas) == 0 && head == p.head {
		return nil
	}
	accounts := make([]string, len(deltas))
	periods := make([]string, len(deltas))
	debits := make([]string, len(deltas))
	credits := make([]string, len(deltas))
	for i, d := range deltas {
		accounts[i], periods[i], debits[i], credits[i] = d.Account, d.Period, d.Debit.String(), d.Credit.String()
	}
	_, err := p.tx.Exec(ctx, `WITH d AS (
			SELECT u.account, u.period, u.debit::numeric AS debit, u.credit::numeric AS credit
			FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS u(account, period, debit, credit)
		), months AS (
			INSERT INTO reporting.balances AS b (tenant_id, account, period, debit, credit)
			SELECT $1, account, period, debit, credit FROM d
			ON CONFLICT (tenant_id, account, period)
			DO UPDATE SET debit = b.debit + EXCLUDED.debit, credit = b.credit + EXCLUDED.credit
		), years AS (
			INSERT INTO reporting.balance_years AS y (tenant_id, account, year, debit, credit)
			SELECT $1, account, left(period, 4)::int, sum(debit), sum(credit) FROM d GROUP BY account, left(period, 4)
			ORDER BY account, left(period, 4)
			ON CONFLICT (tenant_id, account, year)
			DO UPDATE SET debit = y.debit + EXCLUDED.debit, credit = y.credit + EXCLUDED.credit
		)
		UPDATE reporting.tenant_heads SET last_number = $6, updated_at = now() WHERE tenant_id = $1`,
		p.tenant, accounts, periods, debits, credits, head)
	if err != nil {
		return fmt.Errorf("apply %d balance deltas: %w", len(deltas), err)
	}
	p.head = head
	return nil
}

// Reset removes the tenant's balances and sets its head to 0.
func (p *projectionTx) Reset(ctx context.Context) error {
	_, err := p.tx.Exec(ctx, `WITH m AS (DELETE FROM reporting.balances WHERE tenant_id = $1),
			y AS (DELETE FROM reporting.balance_years WHERE tenant_id = $1)
		UPDATE reporting.tenant_heads SET last_number = 0, rebuilt_at = now(), updated_at = now() WHERE tenant_id = $1`, p.tenant)
	if err != nil {
		return fmt.Errorf("reset projection: %w", err)
	}
	p.head = 0
	return nil
}

// ProjectionHead is the last journal number applied for the tenant (0 when
// nothing was).
func (s *Store) ProjectionHead(ctx context.Context, tenant string) (int64, error) {
	var head int64
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, "SELECT last_number FROM reporting.tenant_heads WHERE tenant_id = $1", tenant).Scan(&head)
		if err == pgx.ErrNoRows {
			return nil
		}
		return err
	})
	return head, errs.Wrap("reporting/postgres.ProjectionHead", err)
}

// Balances sums the tenant's balances per account over the windows of q.
// It reads the months from January of the fiscal year's first calendar year
// to the fiscal year's adjustment period, and the yearly sums of the
// calendar years before: the cost depends on the accounts and the months of
// one or two years, not on how long the tenant has been booking.
//
// An adjustment period YYYY-13 sorts after YYYY-12 as text, but belongs to
// the fiscal year that ends in YYYY, which for a fiscal year not starting in
// January lies among other months; so adjustment periods are classified
// apart from months. Each row falls in one class: 0 prior, 1 year to date
// outside the period, 2 the period.
func (s *Store) Balances(ctx context.Context, tenant string, q reporting.BalanceQuery) ([]reporting.AccountSums, error) {
	if len(q.Start) < 7 || len(q.Closing) != 7 {
		return nil, fmt.Errorf("reporting/postgres.Balances: bad window %+v", q)
	}
	startYear, err := strconv.Atoi(q.Start[:4])
	if err != nil {
		return nil, fmt.Errorf("reporting/postgres.Balances: bad window %+v", q)
	}
	byAccount := map[string]*reporting.AccountSums{}
	var order []string
	err = db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT account, cls, sum(debit)::text, sum(credit)::text FROM (
				SELECT account, debit, credit,
					CASE WHEN substr(period, 6) = '13' THEN
						CASE WHEN period < $3 THEN 0 WHEN $8 THEN 2 WHEN $5 THEN 1 END
					ELSE
						CASE WHEN period < $2 THEN 0
							WHEN period BETWEEN $6 AND $7 THEN 2
							WHEN period <= $4 THEN 1 END
					END AS cls
				FROM reporting.balances
				WHERE tenant_id = $1 AND period >= $9 AND period <= $3
				UNION ALL
				SELECT account, debit, credit, 0
				FROM reporting.balance_years
				WHERE tenant_id = $1 AND year < $10
			) w
			WHERE cls IS NOT NULL
			GROUP BY account, cls`,
			tenant, q.Start, q.Closing, q.Through, q.YTDClosing, q.PeriodFrom, q.PeriodTo, q.PeriodClosing,
			fmt.Sprintf("%04d-01", startYear), startYear)
		if err != nil {
			return err
		}
		var acct, d, c string
		var cls int
		_, err = pgx.ForEachRow(rows, []any{&acct, &cls, &d, &c}, func() error {
			debit, err := money.Parse(d)
			if err != nil {
				return err
			}
			credit, err := money.Parse(c)
			if err != nil {
				return err
			}
			a := byAccount[acct]
			if a == nil {
				z := money.Zero
				a = &reporting.AccountSums{Account: acct, PriorDebit: z, PriorCredit: z, YTDDebit: z, YTDCredit: z, PeriodDebit: z, PeriodCredit: z}
				byAccount[acct] = a
				order = append(order, acct)
			}
			switch cls {
			case 0:
				a.PriorDebit, a.PriorCredit = a.PriorDebit.Add(debit), a.PriorCredit.Add(credit)
			case 2:
				a.PeriodDebit, a.PeriodCredit = a.PeriodDebit.Add(debit), a.PeriodCredit.Add(credit)
				fallthrough
			case 1:
				a.YTDDebit, a.YTDCredit = a.YTDDebit.Add(debit), a.YTDCredit.Add(credit)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, errs.Wrap("reporting/postgres.Balances", err)
	}
	out := make([]reporting.AccountSums, len(order))
	for i, acct := range order {
		out[i] = *byAccount[acct]
	}
	return out, nil
}
