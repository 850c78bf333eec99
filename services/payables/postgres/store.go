// Package postgres keeps the payables service's state in its own schema.
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
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/payables"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Schema is the payables service's database: its own migrations plus the
// shared outbox and idempotency tables.
var Schema = migrate.Set{Schema: "payables", Role: "payables_svc", FS: migrations, Dir: "migrations", Outbox: true, Idempotency: true, Inbox: true}

// Store implements payables.Store.
type Store struct{ pool *pgxpool.Pool }

// New returns a Store on a pool running as the service's role.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// vendorColumns read a vendor row v with its open amount: what is still
// open of its posted invoices, an invoice being open while its gross
// amount exceeds what was paid of it.
const vendorColumns = `v.id, v.name, v.tax_id, v.vat_id, v.iban, v.bic, v.street, v.zip, v.city, v.country,
	v.default_account, v.notes, v.is_active,
	(SELECT coalesce(sum(i.total_gross - i.paid_amount), 0) FROM payables.incoming_invoices i
		WHERE i.tenant_id = v.tenant_id AND i.vendor_id = v.id AND i.state = 'posted' AND i.total_gross > i.paid_amount)::text,
	v.created_at, v.updated_at`

// constraints answer the conflicts the unique indexes decide.
var constraints = map[string]*errs.Error{
	"vendors_name_unique": {Code: errs.DuplicateName, Message: "the tenant already has a vendor with this name (compared without case, umlaut spelling, punctuation and legal form)",
		Details: []errs.Detail{errs.Field("name", "already used by another vendor")}},
	"vendors_tax_id_unique": {Code: errs.DuplicateTaxID, Message: "the tenant already has a vendor with this tax number",
		Details: []errs.Detail{errs.Field("tax_id", "already used by another vendor")}},
	"vendors_vat_id_unique": {Code: errs.DuplicateVATID, Message: "the tenant already has a vendor with this VAT ID",
		Details: []errs.Detail{errs.Field("vat_id", "already used by another vendor")}},
}

func scanVendor(row pgx.CollectableRow) (payables.Vendor, error) {
	var v payables.Vendor
	var a payablesv1.Address
	var open string
	err := row.Scan(&v.ID, &v.Name, &v.TaxID, &v.VATID, &v.IBAN, &v.BIC, &a.Street, &a.Zip, &a.City, &a.Country,
		&v.DefaultAccount, &v.Notes, &v.IsActive, &open, &v.CreatedAt, &v.UpdatedAt)
	if err != nil {
		return v, err
	}
	if a != (payablesv1.Address{}) {
		v.Address = &a
	}
	v.OpenAmount, err = money.Parse(open)
	return v, err
}

// address is the stored form of an optional address: four texts, "" for
// a part not known.
func address(a *payablesv1.Address) payablesv1.Address {
	if a == nil {
		return payablesv1.Address{}
	}
	return *a
}

// Vendors implements payables.Store.
func (s *Store) Vendors(ctx context.Context, tenantID string, f payablesv1.VendorFilter) ([]payables.Vendor, error) {
	where, args := []string{"v.tenant_id = $1"}, []any{tenantID}
	if f.Search != "" {
		args = append(args, "%"+db.LikeEscape(strings.ToLower(f.Search))+"%")
		n := "$" + strconv.Itoa(len(args))
		// A VAT ID is stored without the spaces people type into it.
		args = append(args, "%"+db.LikeEscape(strings.ToLower(strings.Join(strings.Fields(f.Search), "")))+"%")
		m := "$" + strconv.Itoa(len(args))
		where = append(where, "(lower(v.name) LIKE "+n+" OR lower(v.vat_id) LIKE "+m+")")
	}
	if f.IsActive != nil {
		args = append(args, *f.IsActive)
		where = append(where, "v.is_active = $"+strconv.Itoa(len(args)))
	}
	args = append(args, f.Limit, f.Offset)
	q := `SELECT ` + vendorColumns + ` FROM payables.vendors v WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY lower(v.name), v.name, v.id LIMIT $` + strconv.Itoa(len(args)-1) + ` OFFSET $` + strconv.Itoa(len(args))
	var out []payables.Vendor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanVendor)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.Vendors: %w", err)
	}
	return out, nil
}

// Vendor implements payables.Store.
func (s *Store) Vendor(ctx context.Context, tenantID, id string) (payables.Vendor, error) {
	var out payables.Vendor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		out, err = vendor(ctx, tx, tenantID, id, "")
		return err
	})
	if err = db.NotFound(err, "vendor %s not found", id); err != nil {
		return payables.Vendor{}, errs.Wrap("postgres.Vendor", err)
	}
	return out, nil
}

func vendor(ctx context.Context, tx pgx.Tx, tenantID, id, lock string) (payables.Vendor, error) {
	rows, err := tx.Query(ctx, `SELECT `+vendorColumns+` FROM payables.vendors v WHERE v.tenant_id = $1 AND v.id = $2`+lock, tenantID, id)
	if err != nil {
		return payables.Vendor{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanVendor)
}

// CreateVendor implements payables.Store.
func (s *Store) CreateVendor(ctx context.Context, tenantID string, v payables.Vendor) (payables.Vendor, error) {
	var out payables.Vendor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		a := address(v.Address)
		rows, err := tx.Query(ctx, `INSERT INTO payables.vendors AS v (id, tenant_id, name, name_key, tax_id, vat_id, iban, bic,
				street, zip, city, country, default_account, notes, is_active)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING `+vendorColumns,
			v.ID, tenantID, v.Name, payables.NameKey(v.Name), v.TaxID, v.VATID, v.IBAN, v.BIC,
			a.Street, a.Zip, a.City, a.Country, v.DefaultAccount, v.Notes, v.IsActive)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectExactlyOneRow(rows, scanVendor); err != nil {
			return db.MapConstraint(err, constraints)
		}
		return idem.Save(ctx, tx, Schema.Schema, out)
	})
	if err != nil {
		return payables.Vendor{}, errs.Wrap("postgres.CreateVendor", err)
	}
	return out, nil
}

// UpdateVendor implements payables.Store.
func (s *Store) UpdateVendor(ctx context.Context, tenantID, id string, change func(payables.Vendor) (payables.Vendor, error)) (payables.Vendor, error) {
	var out payables.Vendor
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		cur, err := vendor(ctx, tx, tenantID, id, " FOR UPDATE OF v")
		if err != nil {
			return err
		}
		v, err := change(cur)
		if err != nil {
			return err
		}
		a := address(v.Address)
		rows, err := tx.Query(ctx, `UPDATE payables.vendors AS v SET name = $3, name_key = $4, tax_id = $5, vat_id = $6, iban = $7,
				bic = $8, street = $9, zip = $10, city = $11, country = $12, default_account = $13, notes = $14, is_active = $15,
				updated_at = now()
			WHERE v.tenant_id = $1 AND v.id = $2 RETURNING `+vendorColumns,
			tenantID, id, v.Name, payables.NameKey(v.Name), v.TaxID, v.VATID, v.IBAN, v.BIC,
			a.Street, a.Zip, a.City, a.Country, v.DefaultAccount, v.Notes, v.IsActive)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectExactlyOneRow(rows, scanVendor); err != nil {
			return db.MapConstraint(err, constraints)
		}
		return idem.Save(ctx, tx, Schema.Schema, out)
	})
	if err = db.NotFound(err, "vendor %s not found", id); err != nil {
		return payables.Vendor{}, errs.Wrap("postgres.UpdateVendor", err)
	}
	return out, nil
}
