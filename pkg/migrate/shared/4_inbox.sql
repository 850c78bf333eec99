-- Ids of consumed events (the JetStream Nats-Msg-Id), recorded in the
-- transaction of their effect so a redelivery changes nothing (pkg/inbox).
CREATE TABLE IF NOT EXISTS processed_events (
    consumer     text NOT NULL,
    event_id     text NOT NULL,
    tenant_id    uuid NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
);
CREATE INDEX IF NOT EXISTS processed_events_at ON processed_events (processed_at);
SELECT enable_tenant_rls('processed_events');
DO $$ BEGIN
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON processed_events TO %I', current_setting('migrate.role'));
END $$;
