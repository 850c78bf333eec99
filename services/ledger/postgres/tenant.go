package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// EnsureTenant seeds a tenant's chart, tax codes and journal head once.
func (s *Store) EnsureTenant(ctx context.Context, tenant string, accounts []ledger.Account, codes []ledger.TaxCode) error {
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "INSERT INTO ledger.tenants (tenant_id) VALUES ($1) ON CONFLICT DO NOTHING", tenant)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		var num, name, typ, cat, grp []string
		for _, a := range accounts {
			num, name, typ, cat, grp = append(num, a.Number), append(name, a.Name), append(typ, a.Type), append(cat, a.Category), append(grp, a.ReportGroup)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ledger.accounts (tenant_id, number, name, type, category, report_group, is_system)
			SELECT $1, u.*, true FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u`,
			tenant, num, name, typ, cat, grp); err != nil {
			return err
		}
		for _, c := range codes {
			if _, err := tx.Exec(ctx, `INSERT INTO ledger.tax_codes (tenant_id, code, label, description, kind, rate, vat_account, self_assess_account, datev_bu_key, is_system)
				VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, ''), $8, $9, true)`,
				tenant, c.Code, c.Label, c.Description, c.Kind, c.Rate.String(), c.VATAccount, c.SelfAssessAccount, c.DATEVKey); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "INSERT INTO ledger.journal_heads (tenant_id) VALUES ($1)", tenant)
		return err
	})
	return errs.Wrap("ledger.EnsureTenant", err)
}

// LoadChart returns every account and tax code of the tenant.
func (s *Store) LoadChart(ctx context.Context, tenant string) ([]ledger.Account, []ledger.TaxCode, error) {
	var accounts []ledger.Account
	var codes []ledger.TaxCode
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT number, name, type, category, report_group, is_active, is_system, created_at
			FROM ledger.accounts WHERE tenant_id = $1 ORDER BY number`, tenant)
		if err != nil {
			return err
		}
		if accounts, err = pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.Account]); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, taxCodeSelect+" WHERE tenant_id = $1 ORDER BY code", tenant)
		if err != nil {
			return err
		}
		codes, err = pgx.CollectRows(rows, scanTaxCode)
		return err
	})
	if err != nil {
		return nil, nil, errs.Wrap("ledger.LoadChart", err)
	}
	return accounts, codes, nil
}

const taxCodeSelect = `SELECT code, label, description, kind, rate::text, COALESCE(vat_account, ''), self_assess_account,
	datev_bu_key, is_system, is_active, created_at FROM ledger.tax_codes`

func scanTaxCode(row pgx.CollectableRow) (ledger.TaxCode, error) {
	var t ledger.TaxCode
	var rate string
	err := row.Scan(&t.Code, &t.Label, &t.Description, &t.Kind, &rate, &t.VATAccount, &t.SelfAssessAccount, &t.DATEVKey, &t.IsSystem, &t.IsActive, &t.CreatedAt)
	if err == nil {
		err = t.Rate.UnmarshalJSON([]byte(rate))
	}
	return t, err
}
