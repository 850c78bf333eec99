package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Setting implements identity.Store.
func (s *Store) Setting(ctx context.Context, key, candidate string) (string, error) {
	var v string
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO identity.settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", key, candidate); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT value FROM identity.settings WHERE key = $1", key).Scan(&v)
	})
	if err != nil {
		return "", errs.Wrap("postgres.Setting", err)
	}
	return v, nil
}

// Account implements identity.Store. Login knows only the email, so it
// looks across tenants.
func (s *Store) Account(ctx context.Context, email string) (identity.Account, error) {
	var a identity.Account
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadOnly, func(tx pgx.Tx) error {
		dest := append(userDest(&a.User), &a.PasswordHash, &a.CompanyName, &a.TenantActive)
		err := tx.QueryRow(ctx, "SELECT "+userCols+", COALESCE(u.password_hash, ''), t.company_name, t.is_active"+
			" FROM identity.users u JOIN identity.tenants t ON t.id = u.tenant_id"+
			" WHERE u.email = $1 AND u.deleted_at IS NULL", email).Scan(dest...)
		return db.NotFound(err, "user not found")
	})
	fixUser(&a.User)
	return a, errs.Wrap("postgres.Account", err)
}

// StartSession implements identity.Store.
func (s *Store) StartSession(ctx context.Context, sess identity.Session) error {
	err := db.InTenant(ctx, s.pool, sess.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO identity.sessions (id, tenant_id, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
			sess.ID, sess.TenantID, sess.UserID, sess.CreatedAt, sess.ExpiresAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE identity.users SET last_login = $3 WHERE id = $1 AND tenant_id = $2", sess.UserID, sess.TenantID, sess.CreatedAt)
		return err
	})
	return errs.Wrap("postgres.StartSession", err)
}

// RevokeSession implements identity.Store.
func (s *Store) RevokeSession(ctx context.Context, tenantID, sessionID string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var userID string
		err := tx.QueryRow(ctx, "UPDATE identity.sessions SET revoked_at = now() WHERE id = $1 AND tenant_id = $2 AND revoked_at IS NULL RETURNING user_id",
			sessionID, tenantID).Scan(&userID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		return emit(ctx, tx, identityv1.EventCredentialRevoked, identityv1.CredentialRevoked{TenantID: tenantID, SessionID: sessionID, UserID: userID})
	})
	return errs.Wrap("postgres.RevokeSession", err)
}

// SessionPrincipal implements identity.Store with one primary-key lookup.
func (s *Store) SessionPrincipal(ctx context.Context, sessionID string) (identity.SessionPrincipal, error) {
	var p identity.SessionPrincipal
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadOnly, func(tx pgx.Tx) error {
		ss := &p.Session
		dest := append([]any{&ss.ID, &ss.TenantID, &ss.UserID, &ss.CreatedAt, &ss.ExpiresAt, &ss.RevokedAt},
			append(userDest(&p.User), &p.TenantActive, &p.Operator)...)
		err := tx.QueryRow(ctx, "SELECT s.id, s.tenant_id, s.user_id, s.created_at, s.expires_at, s.revoked_at, "+userCols+", t.is_active, t.is_operator"+
			" FROM identity.sessions s JOIN identity.users u ON u.id = s.user_id JOIN identity.tenants t ON t.id = s.tenant_id"+
			" WHERE s.id = $1", sessionID).Scan(dest...)
		return db.NotFound(err, "session not found")
	})
	ss := &p.Session
	ss.CreatedAt, ss.ExpiresAt, ss.RevokedAt = ss.CreatedAt.UTC(), ss.ExpiresAt.UTC(), utc(ss.RevokedAt)
	fixUser(&p.User)
	return p, errs.Wrap("postgres.SessionPrincipal", err)
}

// KeyPrincipal implements identity.Store with one unique-index lookup.
func (s *Store) KeyPrincipal(ctx context.Context, keyHash string) (identity.KeyPrincipal, error) {
	var p identity.KeyPrincipal
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadOnly, func(tx pgx.Tx) error {
		dest := append(keyDest(&p.Key), &p.TenantActive, &p.Operator)
		err := tx.QueryRow(ctx, "SELECT "+keyCols+", t.is_active, t.is_operator"+
			" FROM identity.api_keys k JOIN identity.tenants t ON t.id = k.tenant_id WHERE k.key_hash = $1", keyHash).Scan(dest...)
		return db.NotFound(err, "API key not found")
	})
	fixKey(&p.Key)
	return p, errs.Wrap("postgres.KeyPrincipal", err)
}

// CreatePasswordToken implements identity.Store.
func (s *Store) CreatePasswordToken(ctx context.Context, t identity.PasswordToken, m identityv1.Mail) error {
	err := db.InTenant(ctx, s.pool, t.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := insertPasswordToken(ctx, tx, t); err != nil {
			return err
		}
		return emit(ctx, tx, identityv1.SubjectSendMail, m)
	})
	return errs.Wrap("postgres.CreatePasswordToken", err)
}

func insertPasswordToken(ctx context.Context, tx pgx.Tx, t identity.PasswordToken) error {
	_, err := tx.Exec(ctx, "INSERT INTO identity.password_tokens (id, tenant_id, user_id, token_hash, purpose, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
		t.ID, t.TenantID, t.UserID, t.Hash, t.Purpose, t.ExpiresAt)
	return err
}

var errInvalidToken = errs.E(errs.InvalidToken, "the token is invalid, used or expired")

// UsePasswordToken implements identity.Store. The token is the only key the
// caller has, so the lookup spans tenants.
func (s *Store) UsePasswordToken(ctx context.Context, tokenHash, passwordHash string, now time.Time) error {
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		var tenantID, userID, purpose string
		err := tx.QueryRow(ctx, "UPDATE identity.password_tokens SET used_at = $2"+
			" WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING tenant_id, user_id, purpose",
			tokenHash, now).Scan(&tenantID, &userID, &purpose)
		if errors.Is(err, pgx.ErrNoRows) {
			return errInvalidToken
		}
		if err != nil {
			return err
		}
		// An invitation activates the user; a reset must not revive a
		// user an admin deactivated.
		q := "UPDATE identity.users SET password_hash = $2, is_active = true WHERE id = $1 AND deleted_at IS NULL"
		if purpose == identity.PurposeReset {
			q = "UPDATE identity.users SET password_hash = $2 WHERE id = $1 AND deleted_at IS NULL AND is_active"
		}
		if err := update(ctx, tx, errInvalidToken, q, userID, passwordHash); err != nil {
			return err
		}
		if err := voidTokens(ctx, tx, "user_id", userID); err != nil {
			return err
		}
		if purpose == identity.PurposeReset {
			// Whoever knew the old password loses the sessions it opened.
			return revokeUserSessions(ctx, tx, tenantID, userID)
		}
		return nil
	})
	return errs.Wrap("postgres.UsePasswordToken", err)
}

// voidTokens marks the open password tokens of a user or tenant used.
func voidTokens(ctx context.Context, tx pgx.Tx, column, id string) error {
	_, err := tx.Exec(ctx, "UPDATE identity.password_tokens SET used_at = now() WHERE "+pgx.Identifier{column}.Sanitize()+" = $1 AND used_at IS NULL", id)
	return err
}

// revokeUserSessions revokes the user's live sessions and records one
// EventCredentialRevoked naming the user.
func revokeUserSessions(ctx context.Context, tx pgx.Tx, tenantID, userID string) error {
	if _, err := tx.Exec(ctx, "UPDATE identity.sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL", userID); err != nil {
		return err
	}
	return emit(ctx, tx, identityv1.EventCredentialRevoked, identityv1.CredentialRevoked{TenantID: tenantID, UserID: userID})
}
