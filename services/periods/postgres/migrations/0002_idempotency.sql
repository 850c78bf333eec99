-- First answers to requests sent with an Idempotency-Key (see pkg/idem).
CREATE TABLE idempotency_keys (
    tenant_id    uuid NOT NULL,
    scope        text NOT NULL,
    key          text NOT NULL,
    request_hash text NOT NULL,
    status       int NOT NULL,
    response     json NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys
    USING (tenant_id::text = current_setting('app.tenant_id', true) OR current_setting('app.tenant_id', true) = '*');
GRANT SELECT, INSERT, DELETE ON idempotency_keys TO periods_svc;
