-- The inbox and extraction. A document (its bytes are a ledger document,
-- stored by the ledger service and deduplicated there by SHA-256) enters
-- the inbox from the inbound-email webhook or a direct upload; each is
-- extracted by the OCR workers (extractions, a JetStream work queue fed
-- through the outbox) and then reviewed (review cases).
CREATE TABLE inbox_items (
    id             uuid PRIMARY KEY,
    tenant_id      uuid NOT NULL,
    document_id    uuid NOT NULL,
    -- SHA-256 of the bytes, hex: the same bytes a second time are a
    -- duplicate of this item (ingestion outcome skipped_duplicate).
    file_hash      text NOT NULL CHECK (file_hash ~ '^[0-9a-f]{64}$'),
    mime_type      text NOT NULL,
    original_name  text NOT NULL CHECK (length(original_name) <= 255),
    source         text NOT NULL CHECK (source IN ('email', 'upload')),
    source_email   text CHECK (length(source_email) <= 320),
    source_subject text CHECK (length(source_subject) <= 998),
    status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'confirmed', 'rejected')),
    review_case_id uuid,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX inbox_items_hash ON inbox_items (tenant_id, file_hash);
CREATE INDEX inbox_items_status ON inbox_items (tenant_id, status, created_at DESC);
SELECT enable_tenant_rls('inbox_items');
GRANT SELECT, INSERT, UPDATE ON inbox_items TO payables_svc;

-- One extraction job per request (inbox item or POST /v1/ocr/extract).
-- Its result is the document's ocr_result: the latest done extraction of
-- a document.
CREATE TABLE extractions (
    id               uuid PRIMARY KEY,
    tenant_id        uuid NOT NULL,
    document_id      uuid NOT NULL,
    inbox_item_id    uuid REFERENCES inbox_items (id),
    state            text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts         int NOT NULL DEFAULT 0,
    ocr_result       jsonb,
    compliance_check jsonb,
    vendor_match     jsonb,
    -- The public reason of a failed extraction (never an internal error's
    -- text).
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    CHECK (state <> 'done' OR ocr_result IS NOT NULL)
);
CREATE INDEX extractions_document ON extractions (tenant_id, document_id, finished_at DESC);
CREATE INDEX extractions_inbox_item ON extractions (tenant_id, inbox_item_id) WHERE inbox_item_id IS NOT NULL;
SELECT enable_tenant_rls('extractions');
GRANT SELECT, INSERT, UPDATE ON extractions TO payables_svc;
