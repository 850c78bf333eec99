package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// adminRole is the role the last-admin rule protects.
const adminRole = "admin"

// Users implements identity.Store.
func (s *Store) Users(ctx context.Context, tenantID string) ([]identity.User, error) {
	out, err := list(ctx, s, tenantID, scanUser, "SELECT "+userCols+" FROM identity.users u WHERE u.tenant_id = $1 AND u.deleted_at IS NULL ORDER BY u.created_at, u.id", tenantID)
	return out, errs.Wrap("postgres.Users", err)
}

// User implements identity.Store.
func (s *Store) User(ctx context.Context, tenantID, userID string) (identity.User, error) {
	u, err := one(ctx, s, tenantID, scanUser, "user not found", "SELECT "+userCols+" FROM identity.users u WHERE u.id = $1 AND u.tenant_id = $2 AND u.deleted_at IS NULL", userID, tenantID)
	return u, errs.Wrap("postgres.User", err)
}

// InviteUser implements identity.Store.
func (s *Store) InviteUser(ctx context.Context, inv identity.Invite) error {
	err := db.InTenant(ctx, s.pool, inv.User.TenantID, db.ReadCommitted, func(tx pgx.Tx) error { return invite(ctx, tx, inv) })
	return errs.Wrap("postgres.InviteUser", err)
}

func invite(ctx context.Context, tx pgx.Tx, inv identity.Invite) error {
	u := inv.User
	_, err := tx.Exec(ctx, "INSERT INTO identity.users (id, tenant_id, email, role, is_active, invited_at, created_at) VALUES ($1, $2, $3, $4, false, $5, $6)",
		u.ID, u.TenantID, u.Email, u.Role, u.InvitedAt, u.CreatedAt)
	if err != nil {
		return db.MapConstraint(err, constraints)
	}
	if err := insertPasswordToken(ctx, tx, inv.Token); err != nil {
		return err
	}
	return emit(ctx, tx, identityv1.SubjectSendMail, inv.Mail)
}

// UpdateUser implements identity.Store.
func (s *Store) UpdateUser(ctx context.Context, tenantID, userID string, p identity.UserPatch, guard func(identity.User) error) (identity.User, error) {
	var u identity.User
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		before, err := lockUser(ctx, tx, tenantID, userID)
		if err != nil {
			return err
		}
		if err := guard(before); err != nil {
			return err
		}
		after := before
		if p.Role != nil {
			after.Role = *p.Role
		}
		if p.IsActive != nil {
			after.IsActive = *p.IsActive
		}
		if err := keepAnAdmin(ctx, tx, before, after); err != nil {
			return err
		}
		u, err = scanUser(tx.QueryRow(ctx, "UPDATE identity.users u SET role = $3, is_active = $4 WHERE u.id = $1 AND u.tenant_id = $2 RETURNING "+userCols,
			userID, tenantID, after.Role, after.IsActive))
		if err != nil {
			return err
		}
		switch {
		case p.IsActive != nil && !*p.IsActive:
			// Open tokens go too, or an invitation accepted later would
			// activate the user again.
			if err := voidTokens(ctx, tx, "user_id", userID); err != nil {
				return err
			}
			if before.IsActive {
				return revokeUserSessions(ctx, tx, tenantID, userID)
			}
		case before.Role != after.Role:
			return emit(ctx, tx, identityv1.EventCredentialRevoked, identityv1.CredentialRevoked{TenantID: tenantID, UserID: userID})
		}
		return nil
	})
	return u, errs.Wrap("postgres.UpdateUser", err)
}

// DeleteUser implements identity.Store.
func (s *Store) DeleteUser(ctx context.Context, tenantID, userID string, guard func(identity.User) error) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		before, err := lockUser(ctx, tx, tenantID, userID)
		if err != nil {
			return err
		}
		if err := guard(before); err != nil {
			return err
		}
		if err := keepAnAdmin(ctx, tx, before, identity.User{}); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE identity.users SET deleted_at = now(), is_active = false, password_hash = NULL WHERE id = $1", userID); err != nil {
			return err
		}
		if err := voidTokens(ctx, tx, "user_id", userID); err != nil {
			return err
		}
		return revokeUserSessions(ctx, tx, tenantID, userID)
	})
	return errs.Wrap("postgres.DeleteUser", err)
}

// lockUser reads a user for a change under lockAdmins.
func lockUser(ctx context.Context, tx pgx.Tx, tenantID, userID string) (identity.User, error) {
	if err := lockAdmins(ctx, tx, tenantID); err != nil {
		return identity.User{}, err
	}
	u, err := scanUser(tx.QueryRow(ctx, "SELECT "+userCols+" FROM identity.users u WHERE u.id = $1 AND u.tenant_id = $2 AND u.deleted_at IS NULL FOR UPDATE", userID, tenantID))
	return u, db.NotFound(err, "user not found")
}

// lockAdmins takes the transaction-scoped advisory lock that serialises
// changes to one tenant's users and admin keys, so two admins demoting
// each other (or revoking each other's keys) at once cannot both pass the
// last-admin check.
func lockAdmins(ctx context.Context, tx pgx.Tx, tenantID string) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('identity.users:' || $1))", tenantID)
	return err
}

// keepAnAdmin refuses a change that leaves the tenant without an active admin.
func keepAnAdmin(ctx context.Context, tx pgx.Tx, before, after identity.User) error {
	isAdmin := func(u identity.User) bool { return u.IsActive && u.Role == adminRole }
	if !isAdmin(before) || isAdmin(after) {
		return nil
	}
	var others bool
	err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM identity.users WHERE tenant_id = $1 AND id <> $2 AND role = $3 AND is_active AND deleted_at IS NULL)",
		before.TenantID, before.ID, adminRole).Scan(&others)
	if err != nil {
		return err
	}
	if !others {
		return errs.E(errs.LastAdmin, "the tenant's last active admin cannot be demoted, deactivated or deleted")
	}
	return nil
}
