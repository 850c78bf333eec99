// Package postgres keeps the receivables service's state in its own schema.
package postgres

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/receivables"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Schema is the receivables service's database: its own migrations plus
// the shared outbox, idempotency and inbox (processed_events) tables.
var Schema = migrate.Set{Schema: "receivables", Role: "receivables_svc", FS: migrations, Dir: "migrations", Outbox: true, Idempotency: true, Inbox: true}

// Store implements receivables.Store.
type Store struct{ pool *pgxpool.Pool }

// New returns a Store on a pool running as the service's role.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// CustomerNumberPrefix begins every assigned customer number; the first a
// tenant gets is K-10001.
const CustomerNumberPrefix = "K-"

const debtorColumns = `id, customer_number, name, street, zip, city, country, vat_id, email,
	payment_days, cash_discount_rate::text, cash_discount_days, leitweg_id, receivable_account, is_active, created_at, updated_at`

// constraints answer the conflicts the unique index decides.
var constraints = map[string]*errs.Error{
	"debtors_customer_number_unique": {Code: errs.DuplicateCustomerNumber, Message: "the tenant already has a debtor with this customer number",
		Details: []errs.Detail{errs.Field("customer_number", "already used by another debtor")}},
}

func scanDebtor(row pgx.CollectableRow) (receivables.Debtor, error) {
	var d receivables.Debtor
	var rate string
	err := row.Scan(&d.ID, &d.CustomerNumber, &d.Name, &d.Address.Street, &d.Address.Zip, &d.Address.City, &d.Address.Country,
		&d.VATID, &d.Email, &d.PaymentTerms.Days, &rate, &d.PaymentTerms.CashDiscountDays, &d.LeitwegID, &d.ReceivableAccount,
		&d.IsActive, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return d, err
	}
	d.PaymentTerms.CashDiscountRate, err = money.Parse(rate)
	return d, err
}

// Debtors implements receivables.Store.
func (s *Store) Debtors(ctx context.Context, tenantID string, f receivablesv1.DebtorFilter) ([]receivables.Debtor, error) {
	where, args := []string{"tenant_id = $1"}, []any{tenantID}
	if f.Search != "" {
		args = append(args, "%"+db.LikeEscape(strings.ToLower(f.Search))+"%")
		n := "$" + strconv.Itoa(len(args))
		where = append(where, "(lower(name) LIKE "+n+" OR lower(customer_number) LIKE "+n+" OR lower(vat_id) LIKE "+n+")")
	}
	if f.IsActive != nil {
		args = append(args, *f.IsActive)
		where = append(where, "is_active = $"+strconv.Itoa(len(args)))
	}
	args = append(args, f.Limit, f.Offset)
	q := `SELECT ` + debtorColumns + ` FROM receivables.debtors WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY lower(name), name, lower(customer_number), id LIMIT $` + strconv.Itoa(len(args)-1) + ` OFFSET $` + strconv.Itoa(len(args))
	var out []receivables.Debtor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanDebtor)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.Debtors: %w", err)
	}
	return out, nil
}

// Debtor implements receivables.Store.
func (s *Store) Debtor(ctx context.Context, tenantID, id string) (receivables.Debtor, error) {
	var out receivables.Debtor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		out, err = debtor(ctx, tx, tenantID, id, "")
		return err
	})
	if err = db.NotFound(err, "debtor %s not found", id); err != nil {
		return receivables.Debtor{}, errs.Wrap("postgres.Debtor", err)
	}
	return out, nil
}

func debtor(ctx context.Context, tx pgx.Tx, tenantID, id, lock string) (receivables.Debtor, error) {
	rows, err := tx.Query(ctx, `SELECT `+debtorColumns+` FROM receivables.debtors WHERE tenant_id = $1 AND id = $2`+lock, tenantID, id)
	if err != nil {
		return receivables.Debtor{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanDebtor)
}

// CreateDebtor implements receivables.Store.
func (s *Store) CreateDebtor(ctx context.Context, tenantID string, d receivables.Debtor) (receivables.Debtor, error) {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		if d.CustomerNumber == "" {
			n, err := nextCustomerNumber(ctx, tx, tenantID)
			if err != nil {
				return err
			}
			d.CustomerNumber = n
		} else if err := lockCustomerNumbers(ctx, tx, tenantID); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `INSERT INTO receivables.debtors (id, tenant_id, customer_number, name, street, zip, city, country,
				vat_id, email, payment_days, cash_discount_rate, cash_discount_days, leitweg_id, receivable_account, is_active)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::numeric, $13, $14, $15, $16) RETURNING created_at, updated_at`,
			d.ID, tenantID, d.CustomerNumber, d.Name, d.Address.Street, d.Address.Zip, d.Address.City, d.Address.Country,
			d.VATID, d.Email, d.PaymentTerms.Days, d.PaymentTerms.CashDiscountRate.String(), d.PaymentTerms.CashDiscountDays,
			d.LeitwegID, d.ReceivableAccount, d.IsActive).Scan(&d.CreatedAt, &d.UpdatedAt)
		if err != nil {
			return db.MapConstraint(err, constraints)
		}
		return idem.Save(ctx, tx, Schema.Schema, d)
	})
	if err != nil {
		return receivables.Debtor{}, errs.Wrap("postgres.CreateDebtor", err)
	}
	return d, nil
}

// lockCustomerNumbers takes the tenant's counter row lock without taking a
// number, for a creation or change that sets a number of its own: every
// write of a customer number then queues on the one row, so an assigned
// number never races a given one into DUPLICATE_CUSTOMER_NUMBER (debtors
// are created a few at a time; the queue costs nothing that shows).
func lockCustomerNumbers(ctx context.Context, tx pgx.Tx, tenantID string) error {
	_, err := tx.Exec(ctx, `INSERT INTO receivables.customer_number_counters AS c (tenant_id, last_number) VALUES ($1, 10000)
		ON CONFLICT (tenant_id) DO UPDATE SET last_number = c.last_number`, tenantID)
	if err != nil {
		return fmt.Errorf("lockCustomerNumbers: %w", err)
	}
	return nil
}

// nextCustomerNumber takes the tenant's next customer number K-<n>. The
// upsert locks the counter row until the transaction ends, so concurrent
// creations queue and a rolled-back one hands its number on. A number a
// client chose that is already taken is skipped: assigned numbers never
// collide with given ones.
func nextCustomerNumber(ctx context.Context, tx pgx.Tx, tenantID string) (string, error) {
	for {
		var n int64
		err := tx.QueryRow(ctx, `INSERT INTO receivables.customer_number_counters AS c (tenant_id, last_number) VALUES ($1, 10001)
			ON CONFLICT (tenant_id) DO UPDATE SET last_number = c.last_number + 1 RETURNING last_number`, tenantID).Scan(&n)
		if err != nil {
			return "", fmt.Errorf("nextCustomerNumber: %w", err)
		}
		number := CustomerNumberPrefix + strconv.FormatInt(n, 10)
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM receivables.debtors WHERE tenant_id = $1 AND lower(customer_number) = lower($2))`,
			tenantID, number).Scan(&taken); err != nil {
			return "", fmt.Errorf("nextCustomerNumber: %w", err)
		}
		if !taken {
			return number, nil
		}
	}
}

// UpdateDebtor implements receivables.Store.
func (s *Store) UpdateDebtor(ctx context.Context, tenantID, id string, change func(receivables.Debtor) (receivables.Debtor, error)) (receivables.Debtor, error) {
	var out receivables.Debtor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		cur, err := debtor(ctx, tx, tenantID, id, " FOR UPDATE")
		if err != nil {
			return err
		}
		d, err := change(cur)
		if err != nil {
			return err
		}
		if !strings.EqualFold(d.CustomerNumber, cur.CustomerNumber) {
			if err := lockCustomerNumbers(ctx, tx, tenantID); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `UPDATE receivables.debtors SET customer_number = $3, name = $4, street = $5, zip = $6, city = $7,
				country = $8, vat_id = $9, email = $10, payment_days = $11, cash_discount_rate = $12::numeric, cash_discount_days = $13,
				leitweg_id = $14, receivable_account = $15, is_active = $16, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 RETURNING `+debtorColumns,
			tenantID, id, d.CustomerNumber, d.Name, d.Address.Street, d.Address.Zip, d.Address.City, d.Address.Country,
			d.VATID, d.Email, d.PaymentTerms.Days, d.PaymentTerms.CashDiscountRate.String(), d.PaymentTerms.CashDiscountDays,
			d.LeitwegID, d.ReceivableAccount, d.IsActive)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectExactlyOneRow(rows, scanDebtor); err != nil {
			return db.MapConstraint(err, constraints)
		}
		return idem.Save(ctx, tx, Schema.Schema, out)
	})
	if err = db.NotFound(err, "debtor %s not found", id); err != nil {
		return receivables.Debtor{}, errs.Wrap("postgres.UpdateDebtor", err)
	}
	return out, nil
}
