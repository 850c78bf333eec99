-- Documents: uploaded originals (PDF, JPEG, PNG), kept byte for byte. Like
-- the journal they are append-only (GoBD): the role may read and add them,
-- never change or remove them, and triggers refuse it to everyone else too.
-- A tenant stores each content once; the SHA-256 identifies it.
CREATE TABLE documents (
    tenant_id     uuid NOT NULL REFERENCES tenants,
    id            uuid NOT NULL,
    sha256        bytea NOT NULL CHECK (octet_length(sha256) = 32),
    mime_type     text NOT NULL CHECK (mime_type IN ('application/pdf', 'image/jpeg', 'image/png')),
    original_name text NOT NULL CHECK (length(original_name) BETWEEN 1 AND 255),
    size_bytes    bigint NOT NULL CHECK (size_bytes BETWEEN 1 AND 10485760),
    content       bytea NOT NULL,
    created_by    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT documents_sha256_key UNIQUE (tenant_id, sha256),
    CHECK (octet_length(content) = size_bytes)
);
-- PDFs and images are compressed already; store them out of line as they are.
ALTER TABLE documents ALTER COLUMN content SET STORAGE EXTERNAL;

SELECT append_only('documents');

-- Review queue: booking drafts (lou_suggestion) awaiting a human. Items move
-- from pending to confirmed or overridden exactly once; deletion is a soft
-- delete that keeps the row, and every change is appended to history.
--
-- posting/posting_intent_id/posting_at claim an item while its booking is
-- being posted under a deterministic intent id, so a confirm and an
-- override (or two of either) can never both post, and an interrupted
-- posting is finished by the next attempt instead of posted twice.
-- posting_token names the request that claimed last (identical requests
-- share the claim); it outlives the claim, so when another request
-- finishes a posting on the claim's behalf exactly one request is told
-- it succeeded.
CREATE TABLE review_items (
    tenant_id           uuid NOT NULL REFERENCES tenants,
    id                  uuid NOT NULL,
    seq                 bigint GENERATED ALWAYS AS IDENTITY,
    status              text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'overridden')),
    source_type         text NOT NULL CHECK (source_type IN ('document', 'bank_transaction', 'manual')),
    source_id           text NOT NULL DEFAULT '' CHECK (length(source_id) <= 200),
    document_id         uuid,
    suggestion          jsonb NOT NULL,
    original_suggestion jsonb NOT NULL,
    booked_draft        jsonb,
    version             int NOT NULL DEFAULT 1,
    posting             text CHECK (posting IN ('confirm', 'override')),
    posting_intent_id   uuid,
    posting_at          timestamptz,
    posting_token       uuid,
    intent_id           uuid,
    event_count         int,
    resolved_by         text,
    resolved_at         timestamptz,
    resolved_idem       text,
    reversal_intent_id  uuid,
    history             jsonb NOT NULL DEFAULT '[]',
    created_by          text NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    deleted_at          timestamptz,
    deleted_by          text,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, seq),
    FOREIGN KEY (tenant_id, document_id) REFERENCES documents,
    CHECK ((posting IS NULL) = (posting_intent_id IS NULL)),
    CHECK ((status = 'pending') = (intent_id IS NULL)),
    CHECK (status = 'pending' OR posting IS NULL)
);
-- The queue in creation order, and one live item per source.
CREATE INDEX review_items_queue ON review_items (tenant_id, status, seq) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX review_items_source ON review_items (tenant_id, source_type, source_id)
    WHERE deleted_at IS NULL AND source_id <> '';

-- History is kept: rows are never deleted.
CREATE TRIGGER review_items_no_delete BEFORE DELETE ON review_items
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER review_items_no_truncate BEFORE TRUNCATE ON review_items
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

GRANT SELECT, INSERT ON documents TO ledger_svc;
GRANT SELECT, INSERT, UPDATE ON review_items TO ledger_svc;
GRANT USAGE ON SEQUENCE review_items_seq_seq TO ledger_svc;

SELECT enable_tenant_rls('documents', 'review_items');
