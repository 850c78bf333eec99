-- Reconciliations and evidence of bank transactions (issue 10).
--
-- A reconciliation explains one bank transaction: linked to a booking
-- already on the bank's ledger account (mode bank_booking), or settling an
-- open item with a clearing booking the bank posts through the ledger
-- (mode open_item). seq numbers a transaction's reconciliations; the
-- clearing booking's intent id is derived from the transaction and seq, so
-- a retry or a crash never posts twice and a reconciliation after an
-- unmatch posts anew. state: pending (allocated, clearing not confirmed),
-- active, unmatched (undone), abandoned (the ledger refused the clearing).
-- At most one reconciliation of a transaction is pending or active.
CREATE TABLE reconciliations (
    id                  uuid PRIMARY KEY,
    tenant_id           uuid NOT NULL,
    bank_transaction_id uuid NOT NULL REFERENCES transactions (id),
    seq                 integer NOT NULL CHECK (seq >= 0),
    mode                text NOT NULL CHECK (mode IN ('bank_booking', 'open_item')),
    candidate_kind      text NOT NULL CHECK (candidate_kind IN ('bank_booking', 'open_receivable', 'open_liability')),
    intent_id           uuid NOT NULL,
    account_number      text NOT NULL CHECK (account_number ~ '^[0-9]{1,8}$'),
    amount              numeric(19, 2) NOT NULL CHECK (amount > 0),
    currency            text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    clearing_intent_id  uuid,
    reversal_intent_id  uuid,
    state               text NOT NULL CHECK (state IN ('pending', 'active', 'unmatched', 'abandoned')),
    -- the transaction's status before, to restore on unmatch (open or evidenced)
    prior_status        text NOT NULL CHECK (prior_status IN ('open', 'evidenced')),
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT reconciliations_seq_unique UNIQUE (tenant_id, bank_transaction_id, seq),
    CHECK ((mode = 'open_item') = (clearing_intent_id IS NOT NULL))
);
CREATE UNIQUE INDEX reconciliations_live ON reconciliations (tenant_id, bank_transaction_id) WHERE state IN ('pending', 'active');
CREATE INDEX reconciliations_clearing ON reconciliations (tenant_id, clearing_intent_id) WHERE clearing_intent_id IS NOT NULL;
SELECT enable_tenant_rls('reconciliations');
GRANT SELECT, INSERT, UPDATE ON reconciliations TO bank_svc;

-- Evidence explaining a transaction without a booking (a bank statement,
-- an uploaded document, an Eigenbeleg). One per transaction; a new one
-- replaces it.
CREATE TABLE evidence (
    id                  uuid PRIMARY KEY,
    tenant_id           uuid NOT NULL,
    bank_transaction_id uuid NOT NULL REFERENCES transactions (id),
    evidence_type       text NOT NULL CHECK (evidence_type IN ('bank_statement', 'uploaded_document', 'eigenbeleg')),
    title               text,
    note                text,
    document_id         uuid,
    metadata            jsonb,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT evidence_transaction_unique UNIQUE (tenant_id, bank_transaction_id),
    CHECK (evidence_type <> 'eigenbeleg' OR note IS NOT NULL),
    CHECK (evidence_type <> 'uploaded_document' OR document_id IS NOT NULL)
);
SELECT enable_tenant_rls('evidence');
GRANT SELECT, INSERT, UPDATE ON evidence TO bank_svc;
