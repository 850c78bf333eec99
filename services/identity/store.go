package identity

import (
	"context"
	"time"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Store persists identity data. Each method is one transaction; the events a
// method documents are written to the outbox in that same transaction, so a
// change and its announcement commit together. Tenant-scoped methods see only
// the rows of tenantID. A missing row is an *errs.Error with code NOT_FOUND.
type Store interface {
	// Setting returns the value stored under key, storing candidate first
	// when there is none.
	Setting(ctx context.Context, key, candidate string) (string, error)

	// Account finds the (not deleted) user with the email in any tenant.
	Account(ctx context.Context, email string) (Account, error)
	// StartSession stores s and sets the user's last login to s.CreatedAt.
	StartSession(ctx context.Context, s Session) error
	// RevokeSession revokes a live session and records
	// EventCredentialRevoked; a session already revoked is left alone.
	RevokeSession(ctx context.Context, tenantID, sessionID string) error
	// SessionPrincipal returns a session with its user and tenant, in any tenant.
	SessionPrincipal(ctx context.Context, sessionID string) (SessionPrincipal, error)
	// KeyPrincipal returns the API key with the hash and its tenant, in any tenant.
	KeyPrincipal(ctx context.Context, keyHash string) (KeyPrincipal, error)

	// CreatePasswordToken stores t and queues m on SubjectSendMail.
	CreatePasswordToken(ctx context.Context, t PasswordToken, m identityv1.Mail) error
	// UsePasswordToken marks the unused, unexpired token with the hash used,
	// voids the user's other open tokens and sets the password. An invite
	// also activates the user; a reset requires an active user and revokes
	// the user's sessions (EventCredentialRevoked). A token that is unknown,
	// used or expired, or whose user is gone, is INVALID_TOKEN.
	UsePasswordToken(ctx context.Context, tokenHash, passwordHash string, now time.Time) error

	Users(ctx context.Context, tenantID string) ([]User, error)
	User(ctx context.Context, tenantID, userID string) (User, error)
	// InviteUser stores the inactive user and its invite token and queues
	// the mail. A taken email is DUPLICATE_EMAIL.
	InviteUser(ctx context.Context, inv Invite) error
	// UpdateUser applies p unless guard refuses the user as it is before
	// the change (read under the lock of the change). Leaving a tenant
	// without an active admin is LAST_ADMIN. Deactivation revokes the user's sessions and open tokens;
	// deactivation and a role change record EventCredentialRevoked so
	// gateways drop claims they cached with the old scopes.
	UpdateUser(ctx context.Context, tenantID, userID string, p UserPatch, guard func(User) error) (User, error)
	// DeleteUser marks the user deleted (kept for the audit trail), revokes
	// its sessions and tokens and records EventCredentialRevoked; guard and
	// LAST_ADMIN as in UpdateUser.
	DeleteUser(ctx context.Context, tenantID, userID string, guard func(User) error) error

	// Keys lists the tenant's keys that are not revoked.
	Keys(ctx context.Context, tenantID string) ([]APIKey, error)
	Key(ctx context.Context, tenantID, keyID string) (APIKey, error)
	CreateKey(ctx context.Context, k APIKey) error
	// RevokeKey revokes a live key and records EventCredentialRevoked,
	// unless guard refuses the key (read under the lock of the change).
	// Revoking the last live admin key of a tenant without an active admin
	// user is LAST_ADMIN.
	RevokeKey(ctx context.Context, tenantID, keyID string, guard func(APIKey) error) error

	Tenant(ctx context.Context, tenantID string) (identityv1.Tenant, error)
	// UpdateTenant applies p and records EventTenantUpdated.
	UpdateTenant(ctx context.Context, tenantID string, p TenantPatch) (identityv1.Tenant, error)
	// Tenants lists every tenant, oldest first.
	Tenants(ctx context.Context, limit, offset int) ([]identityv1.Tenant, error)
	// CreateTenant stores t with its first key and records EventTenantCreated.
	CreateTenant(ctx context.Context, t identityv1.Tenant, k APIKey) error
	// DeactivateTenant deactivates the tenant, revokes all its keys,
	// sessions and tokens and records EventTenantDeactivated. The operator
	// tenant is CONFLICT; an inactive tenant is left alone.
	DeactivateTenant(ctx context.Context, tenantID string, at time.Time) error

	// Grants lists the tenant's live OAuth grants, oldest first.
	Grants(ctx context.Context, tenantID string) ([]Grant, error)
	// RevokeGrants revokes every live grant of the client.
	RevokeGrants(ctx context.Context, tenantID, clientID string) error
	Clients(ctx context.Context, tenantID string) ([]OAuthClient, error)
	// PutClient creates c or updates its name, redirect URIs and scopes; an
	// update keeps the stored secret. It reports whether c was created.
	PutClient(ctx context.Context, c OAuthClient) (OAuthClient, bool, error)

	// AuditEntries lists the tenant's audit entries matching f, newest first.
	AuditEntries(ctx context.Context, tenantID string, f AuditFilter) ([]AuditEntry, error)
	// RecordCall stores c unless its request id is stored already and, when
	// it stored it and c names a key, counts the key's use. It reports
	// whether c was new.
	RecordCall(ctx context.Context, c gatewayv1.Call) (bool, error)
	// RecordCalls stores a batch in one transaction and returns how many
	// records were new.
	RecordCalls(ctx context.Context, calls []gatewayv1.Call) (int, error)

	// Bootstrap carries out p under a lock, so that replicas starting
	// together agree on one operator tenant.
	Bootstrap(ctx context.Context, p BootstrapPlan) (BootstrapResult, error)
}

// tenantList reads a list of the caller's tenant, never nil; op names the
// method in errors.
func tenantList[T any](ctx context.Context, c *auth.Claims, op string, read func(context.Context, string) ([]T, error)) ([]T, error) {
	vs, err := read(ctx, c.TenantID)
	if err != nil {
		return nil, errs.Wrap(op, err)
	}
	return nonNil(vs), nil
}
