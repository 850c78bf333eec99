-- The identity schema: tenants, users, credentials, OAuth apps and clients,
-- and the append-only audit log. migrate.Up runs this with search_path set
-- to the identity schema.

CREATE TABLE tenants (
    id                      uuid PRIMARY KEY,
    company_name            text NOT NULL CHECK (char_length(company_name) BETWEEN 1 AND 255),
    legal_form              text NOT NULL DEFAULT '',
    tax_id                  text NOT NULL DEFAULT '',
    vat_id                  text NOT NULL DEFAULT '',
    address                 jsonb NOT NULL DEFAULT '{}',
    fiscal_year_start_month int NOT NULL DEFAULT 1 CHECK (fiscal_year_start_month BETWEEN 1 AND 12),
    datev_consultant_number text NOT NULL DEFAULT '',
    datev_client_number     text NOT NULL DEFAULT '',
    is_operator             boolean NOT NULL DEFAULT false,
    is_active               boolean NOT NULL DEFAULT true,
    created_at              timestamptz NOT NULL DEFAULT now(),
    deactivated_at          timestamptz
);
-- At most one operator tenant, whatever races the bootstrap loses.
CREATE UNIQUE INDEX tenants_one_operator ON tenants (is_operator) WHERE is_operator;

-- Login is by email alone, so an email is unique across tenants. Deleted
-- users stay for the audit trail but free their email.
CREATE TABLE users (
    id            uuid PRIMARY KEY,
    tenant_id     uuid NOT NULL REFERENCES tenants (id),
    email         text NOT NULL CHECK (email = lower(email)),
    role          text NOT NULL,
    password_hash text,
    is_active     boolean NOT NULL DEFAULT false,
    invited_at    timestamptz,
    last_login    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    deleted_at    timestamptz
);
CREATE UNIQUE INDEX users_email_key ON users (email) WHERE deleted_at IS NULL;
CREATE INDEX users_tenant ON users (tenant_id);

-- Invitation and password-reset tokens; only their SHA-256 is stored.
CREATE TABLE password_tokens (
    id         uuid PRIMARY KEY,
    tenant_id  uuid NOT NULL REFERENCES tenants (id),
    user_id    uuid NOT NULL REFERENCES users (id),
    token_hash text NOT NULL CONSTRAINT password_tokens_token_hash_key UNIQUE,
    purpose    text NOT NULL CHECK (purpose IN ('invite', 'reset')),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_tokens_user ON password_tokens (user_id) WHERE used_at IS NULL;

-- One row per login; the id is the JWT's jti, so a session can be revoked
-- before its token expires.
CREATE TABLE sessions (
    id         uuid PRIMARY KEY,
    tenant_id  uuid NOT NULL REFERENCES tenants (id),
    user_id    uuid NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id) WHERE revoked_at IS NULL;
CREATE INDEX sessions_tenant ON sessions (tenant_id) WHERE revoked_at IS NULL;

-- API keys; only the SHA-256 (hex) of the raw key is stored. Revoked keys
-- stay so the audit log can still name them.
CREATE TABLE api_keys (
    id           uuid PRIMARY KEY,
    tenant_id    uuid NOT NULL REFERENCES tenants (id),
    label        text NOT NULL,
    role         text,
    scopes       text[] NOT NULL,
    key_prefix   text NOT NULL,
    key_hash     text NOT NULL CONSTRAINT api_keys_key_hash_key UNIQUE,
    created_by   text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    last_used_at timestamptz,
    call_count   bigint NOT NULL DEFAULT 0
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id) WHERE revoked_at IS NULL;

CREATE TABLE oauth_clients (
    tenant_id     uuid NOT NULL REFERENCES tenants (id),
    client_id     text NOT NULL,
    name          text NOT NULL,
    redirect_uris text[] NOT NULL,
    scopes        text[] NOT NULL,
    secret_hash   text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, client_id)
);

-- Apps a user of the tenant authorized. The client's name is copied at
-- authorization time because the client may belong to another tenant.
CREATE TABLE oauth_grants (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id   uuid NOT NULL REFERENCES tenants (id),
    client_id   text NOT NULL,
    client_name text NOT NULL,
    user_id     uuid REFERENCES users (id),
    scopes      text[] NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX oauth_grants_tenant ON oauth_grants (tenant_id, client_id) WHERE revoked_at IS NULL;

-- Service-wide settings shared by every replica, such as the JWT signing key.
CREATE TABLE settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- Every call the gateway saw, allowed or refused. Refused unauthenticated
-- calls have no tenant. request_id makes redelivered records no-ops.
CREATE TABLE audit_log (
    id          bigserial PRIMARY KEY,
    request_id  text NOT NULL CONSTRAINT audit_log_request_id_key UNIQUE,
    tenant_id   uuid,
    key_id      uuid,
    user_id     uuid,
    actor       text NOT NULL DEFAULT '',
    surface     text NOT NULL DEFAULT '',
    method      text NOT NULL DEFAULT '',
    route       text NOT NULL DEFAULT '',
    scope       text NOT NULL DEFAULT '',
    target_id   text NOT NULL DEFAULT '',
    status      int NOT NULL,
    error_code  text NOT NULL DEFAULT '',
    client_ip   text NOT NULL DEFAULT '',
    duration_ms bigint NOT NULL DEFAULT 0,
    at          timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_tenant_at ON audit_log (tenant_id, at DESC, id DESC);

-- The audit log is append-only for everyone, owners included; the service
-- role is not even granted UPDATE or DELETE.
CREATE FUNCTION audit_log_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'identity.audit_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- Row-level security is the second fence behind the tenant filter every
-- query carries. Store code sets app.tenant_id per transaction; "*" is for
-- system paths that span tenants (credential checks, login by email, the
-- operator's tenant administration, the audit consumer). A row without a
-- tenant (a refused anonymous call) is visible only to "*".
-- A tenant's own row is its tenant: the one table whose policy names id.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants
    USING (id::text = current_setting('app.tenant_id', true) OR current_setting('app.tenant_id', true) = '*');
SELECT enable_tenant_rls('users', 'password_tokens', 'sessions', 'api_keys', 'oauth_clients', 'oauth_grants', 'audit_log');

-- Least privilege: nothing identity keeps is ever deleted (users, keys,
-- sessions and tokens are revoked or marked); the shared migrations grant
-- the schema and the outbox.
GRANT SELECT, INSERT, UPDATE ON tenants, users, password_tokens, sessions, api_keys,
    oauth_clients, oauth_grants TO identity_svc;
GRANT SELECT, INSERT ON settings TO identity_svc;
GRANT SELECT, INSERT ON audit_log TO identity_svc;
GRANT USAGE, SELECT ON SEQUENCE audit_log_id_seq TO identity_svc;
