-- The transactional outbox (pkg/outbox): events committed with the state
-- change they announce, deleted once JetStream acknowledged them, so every
-- row is pending and the primary key orders the relay's reads.
CREATE TABLE IF NOT EXISTS outbox (
    seq        bigserial PRIMARY KEY,
    id         uuid NOT NULL UNIQUE,
    subject    text NOT NULL,
    payload    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
DO $$ BEGIN
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON outbox TO %I', current_setting('migrate.role'));
    EXECUTE format('GRANT USAGE ON SEQUENCE outbox_seq_seq TO %I', current_setting('migrate.role'));
END $$;
