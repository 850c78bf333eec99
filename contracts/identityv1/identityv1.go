// Package identityv1 is the contract of the identity service: tenants, users,
// sessions, API keys, OAuth apps/clients and the audit-log store.
package identityv1

import "time"

// Request/reply subjects. Each REST route of the service has one subject;
// path parameters travel in the Path-Params header under the names noted.
const (
	SubjectLogin          = "identity.v1.auth.login"
	SubjectLogout         = "identity.v1.auth.logout"
	SubjectMe             = "identity.v1.auth.me"
	SubjectForgotPassword = "identity.v1.auth.forgot_password"
	SubjectSetupPassword  = "identity.v1.auth.setup_password"
	SubjectVerifyToken    = "identity.v1.auth.verify_token"
	// SubjectVerify is internal: the gateway resolves a bearer credential
	// (API key or session JWT) to auth.Claims. Body VerifyRequest.
	SubjectVerify = "identity.v1.auth.verify"

	SubjectKeysList   = "identity.v1.keys.list"
	SubjectKeysCreate = "identity.v1.keys.create"
	SubjectKeysDelete = "identity.v1.keys.delete" // param id

	SubjectUsersList   = "identity.v1.users.list"
	SubjectUsersInvite = "identity.v1.users.invite"
	SubjectUsersUpdate = "identity.v1.users.update" // param id
	SubjectUsersDelete = "identity.v1.users.delete" // param id

	SubjectTenantGet    = "identity.v1.tenant.get"
	SubjectTenantUpdate = "identity.v1.tenant.update"

	SubjectOAuthAppsList    = "identity.v1.oauth.apps.list"
	SubjectOAuthAppsDelete  = "identity.v1.oauth.apps.delete" // param clientId
	SubjectOAuthClientsList = "identity.v1.oauth.clients.list"
	SubjectOAuthClientsPut  = "identity.v1.oauth.clients.put" // param clientId

	SubjectAdminTenantsList   = "identity.v1.admin.tenants.list"
	SubjectAdminTenantsCreate = "identity.v1.admin.tenants.create"
	SubjectAdminTenantsDelete = "identity.v1.admin.tenants.delete" // param id

	SubjectAuditList = "identity.v1.audit.list"
)

// ServiceName is the identity service's NATS micro name: $SRV.PING.identity
// answers while it serves, which the gateway's readiness asks.
const ServiceName = "identity"

// Events, published through the identity outbox to stream StreamEvents.
const (
	StreamEvents = "IDENTITY"
	EventsFilter = "evt.identity.v1.>"

	// EventCredentialRevoked: an API key was deleted or a session ended;
	// gateways drop cached credentials at once.
	EventCredentialRevoked = "evt.identity.v1.credential_revoked"
	// EventTenantCreated: a tenant exists; services seed per-tenant data.
	EventTenantCreated = "evt.identity.v1.tenant_created"
	// EventTenantDeactivated: every credential of the tenant is void.
	EventTenantDeactivated = "evt.identity.v1.tenant_deactivated"
	EventTenantUpdated     = "evt.identity.v1.tenant_updated"

	// Mail commands (invitations, password resets) for a mail sender.
	StreamMail      = "MAIL"
	MailFilter      = "cmd.mail.v1.>"
	SubjectSendMail = "cmd.mail.v1.send"
)

// VerifyRequest asks identity to resolve a bearer credential.
type VerifyRequest struct {
	Token string `json:"token"`
}

// CredentialRevoked is the payload of EventCredentialRevoked.
type CredentialRevoked struct {
	TenantID  string `json:"tenant_id"`
	KeyID     string `json:"key_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	UserID    string `json:"user_id,omitempty"`
}

// TenantEvent is the payload of the tenant events.
type TenantEvent struct {
	TenantID    string    `json:"tenant_id"`
	CompanyName string    `json:"company_name"`
	IsOperator  bool      `json:"is_operator"`
	IsActive    bool      `json:"is_active"`
	At          time.Time `json:"at"`
}

// Mail is the payload of SubjectSendMail.
type Mail struct {
	To       string    `json:"to"`
	Template string    `json:"template"` // "invite" or "password_reset"
	TenantID string    `json:"tenant_id"`
	Token    string    `json:"token"`
	Expires  time.Time `json:"expires_at"`
}

// Address is a postal address.
type Address struct {
	Street  string `json:"street"`
	Zip     string `json:"zip"`
	City    string `json:"city"`
	Country string `json:"country"`
}

// Tenant is the company master data.
type Tenant struct {
	ID                    string    `json:"id"`
	CompanyName           string    `json:"company_name"`
	LegalForm             string    `json:"legal_form"`
	TaxID                 string    `json:"tax_id"`
	VATID                 string    `json:"vat_id"`
	Address               Address   `json:"address"`
	FiscalYearStartMonth  int       `json:"fiscal_year_start_month"`
	DATEVConsultantNumber string    `json:"datev_consultant_number"`
	DATEVClientNumber     string    `json:"datev_client_number"`
	IsOperator            bool      `json:"is_operator"`
	IsActive              bool      `json:"is_active"`
	CreatedAt             time.Time `json:"created_at"`
}
