-- First answers to requests sent with an Idempotency-Key (pkg/idem), kept
-- as json so a replay is byte for byte the first answer (jsonb would
-- reorder keys).
CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant_id    uuid NOT NULL,
    scope        text NOT NULL,
    key          text NOT NULL,
    request_hash text NOT NULL,
    status       int NOT NULL,
    response     json NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, scope, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at);
SELECT enable_tenant_rls('idempotency_keys');
DO $$ BEGIN
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON idempotency_keys TO %I', current_setting('migrate.role'));
END $$;
