-- The intake: the tenants' inbound-email webhook secrets and the
-- ingestion log, one row per attachment processing attempt.

-- Only the SHA-256 of a secret is kept; the secret is shown once when it
-- is made. One per tenant: making a new one replaces it.
CREATE TABLE webhook_secrets (
    tenant_id     uuid PRIMARY KEY,
    secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
    created_at    timestamptz NOT NULL DEFAULT now()
);
SELECT enable_tenant_rls('webhook_secrets');
GRANT SELECT, INSERT, UPDATE ON webhook_secrets TO payables_svc;

-- Append-only: the service may read and add rows, never change or remove
-- them. seq orders the rows as they were written (newest first on read).
CREATE TABLE ingestion_log (
    seq                     bigint GENERATED ALWAYS AS IDENTITY,
    id                      uuid PRIMARY KEY,
    tenant_id               uuid NOT NULL,
    outcome                 text NOT NULL CHECK (outcome IN ('ingested', 'skipped_duplicate', 'rejected_invalid', 'failed')),
    reason                  text CHECK (length(reason) <= 500),
    sender_email            text CHECK (length(sender_email) <= 320),
    subject                 text CHECK (length(subject) <= 998),
    filename                text NOT NULL CHECK (length(filename) <= 255),
    claimed_mime            text NOT NULL CHECK (length(claimed_mime) <= 255),
    size_bytes              bigint NOT NULL CHECK (size_bytes >= 0),
    file_hash               text CHECK (file_hash ~ '^[0-9a-f]{64}$'),
    document_id             uuid,
    original_inbox_id       uuid REFERENCES inbox_items (id),
    original_review_case_id uuid,
    created_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((outcome = 'ingested') = (document_id IS NOT NULL)),
    CHECK ((outcome = 'skipped_duplicate') = (original_inbox_id IS NOT NULL)),
    CHECK (outcome = 'ingested' OR reason IS NOT NULL)
);
CREATE INDEX ingestion_log_seq ON ingestion_log (tenant_id, seq DESC);
SELECT enable_tenant_rls('ingestion_log');
GRANT SELECT, INSERT ON ingestion_log TO payables_svc;
