package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Bootstrap implements identity.Store. The advisory lock makes replicas
// that start together take turns; the later ones find the work done.
func (s *Store) Bootstrap(ctx context.Context, p identity.BootstrapPlan) (identity.BootstrapResult, error) {
	var res identity.BootstrapResult
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		res = identity.BootstrapResult{}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('identity.bootstrap'))"); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, "SELECT id FROM identity.tenants WHERE is_operator").Scan(&res.TenantID)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if err := insertTenant(ctx, tx, p.Operator); err != nil {
				return err
			}
			res.TenantID, res.TenantCreated = p.Operator.ID, true
		case err != nil:
			return err
		}

		if k := p.Key; k != nil && (res.TenantCreated || !p.KeyOnlyForNewOperator) {
			var stored bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM identity.api_keys WHERE key_hash = $1)", k.Hash).Scan(&stored); err != nil {
				return err
			}
			if !stored {
				key := *k
				key.TenantID = res.TenantID
				if err := insertKey(ctx, tx, key); err != nil {
					return err
				}
				res.KeyAdded = true
			}
		}

		if a := p.Admin; a != nil {
			var taken bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM identity.users WHERE email = $1 AND deleted_at IS NULL)", a.User.Email).Scan(&taken); err != nil {
				return err
			}
			if !taken {
				inv := *a
				inv.User.TenantID, inv.Token.TenantID, inv.Mail.TenantID = res.TenantID, res.TenantID, res.TenantID
				if err := invite(ctx, tx, inv); err != nil {
					return err
				}
				res.AdminInvited = true
			}
		}
		return nil
	})
	return res, errs.Wrap("postgres.Bootstrap", err)
}
