-- Invoice review cases: one per done extraction (OpenReviewCase, called in
-- the extraction worker's transaction). A case holds the normalised
-- invoice (payablesv1.ReviewInvoice as JSON) a reviewer corrects, approves
-- or rejects; approving creates the incoming invoice and posts it.
CREATE TABLE review_cases (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL,
    extraction_id      uuid NOT NULL REFERENCES extractions (id),
    document_id        uuid NOT NULL,
    inbox_item_id      uuid REFERENCES inbox_items (id),
    queue_state        text NOT NULL CHECK (queue_state IN ('approval', 'correction', 'exception', 'approved', 'rejected', 'posting_failed')),
    invoice            jsonb NOT NULL,
    -- Duplicate lookups read these out of invoice: kept in columns so
    -- that they are indexed.
    vendor_id          uuid REFERENCES vendors (id),
    invoice_number     text NOT NULL DEFAULT '',
    invoice_date       date,
    total_gross        numeric(19, 2),
    vendor_candidates  jsonb NOT NULL DEFAULT '[]',
    vendor_suggestions jsonb NOT NULL DEFAULT '[]',
    duplicate_hints    jsonb NOT NULL DEFAULT '[]',
    issues             jsonb NOT NULL DEFAULT '[]',
    posting_errors     jsonb NOT NULL DEFAULT '[]',
    -- corrected: a reviewer has edited the invoice; the extraction's §14
    -- findings are then the reviewer's to weigh, no longer a gate.
    corrected          boolean NOT NULL DEFAULT false,
    -- The posting attempt: the incoming invoice's id and booking intent
    -- are derived from (case, attempt), and attempt only grows when the
    -- ledger refused for good, so a retry after an outage posts under the
    -- same intent and the ledger answers the posting it already has.
    attempt            int NOT NULL DEFAULT 0,
    incoming_invoice_id uuid,
    reject_reason      text CHECK (length(reject_reason) BETWEEN 1 AND 1000),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK (queue_state <> 'rejected' OR reject_reason IS NOT NULL),
    CHECK (queue_state <> 'approved' OR incoming_invoice_id IS NOT NULL)
);
CREATE UNIQUE INDEX review_cases_extraction ON review_cases (tenant_id, extraction_id);
CREATE INDEX review_cases_queue ON review_cases (tenant_id, queue_state, created_at DESC);
CREATE INDEX review_cases_vendor_number ON review_cases (tenant_id, vendor_id, lower(invoice_number));
SELECT enable_tenant_rls('review_cases');
GRANT SELECT, INSERT, UPDATE ON review_cases TO payables_svc;

-- An incoming invoice remembers its case, document, lines and the
-- accounts it was posted to.
ALTER TABLE incoming_invoices
    ADD COLUMN review_case_id   uuid REFERENCES review_cases (id),
    ADD COLUMN document_id      uuid,
    ADD COLUMN lines            jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN tax_breakdown    jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN reverse_charge   boolean NOT NULL DEFAULT false,
    ADD COLUMN creditor_account text NOT NULL DEFAULT '3300' CHECK (creditor_account ~ '^[0-9]{1,8}$'),
    ADD COLUMN void_reason      text,
    ADD COLUMN posted_at        timestamptz;
-- A case has at most one live invoice (a refused attempt's is void).
CREATE UNIQUE INDEX incoming_invoices_case ON incoming_invoices (tenant_id, review_case_id) WHERE review_case_id IS NOT NULL AND state <> 'void';

-- What the bank's reconciliations settled of each incoming invoice (the
-- bank events consumed idempotently through the inbox). paid_amount is
-- the sum of the records not released.
CREATE TABLE invoice_payments (
    tenant_id         uuid NOT NULL,
    reconciliation_id uuid NOT NULL,
    invoice_id        uuid NOT NULL REFERENCES incoming_invoices (id),
    amount            numeric(19, 2) NOT NULL CHECK (amount > 0),
    paid_on           date,
    released          boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, reconciliation_id, invoice_id)
);
CREATE INDEX invoice_payments_invoice ON invoice_payments (tenant_id, invoice_id);
SELECT enable_tenant_rls('invoice_payments');
GRANT SELECT, INSERT, UPDATE ON invoice_payments TO payables_svc;
