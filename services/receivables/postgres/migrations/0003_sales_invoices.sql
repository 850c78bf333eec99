-- Sales invoices and credit notes (issue 12). A document is created as a
-- draft (no number, nothing posted) or finalised at once; finalising
-- allocates the gapless number (invoice_number_counters) in the same
-- transaction that moves the row to pending, then the XML and PDF are
-- rendered, the PDF is stored as a ledger document and the receivable is
-- posted through ledger.v1.post under an intent id derived from the
-- invoice id (a retry never posts twice); the confirmation moves the row
-- to posted and writes the outbox event. A posting the ledger refuses for
-- good moves it to void with the reason: its number stays accounted for
-- and is never given again.
--
-- Amounts are exact (numeric(19,2)) and positive for both types; a credit
-- note (type credit_note, EN 16931 type code 381) names the invoice it
-- corrects. paid_amount is what the bank's reconciliation events have
-- settled of the receivable (invoice_payments), credited_amount what
-- credit notes have taken off it.
CREATE TABLE sales_invoices (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL,
    debtor_id          uuid NOT NULL REFERENCES debtors (id),
    type               text NOT NULL CHECK (type IN ('invoice', 'credit_note')),
    state              text NOT NULL CHECK (state IN ('draft', 'pending', 'posted', 'void')),
    number             text,
    invoice_date       date NOT NULL,
    due_date           date NOT NULL,
    delivery_date      date,
    service_start      date,
    service_end        date,
    currency           text NOT NULL DEFAULT 'EUR' CHECK (currency ~ '^[A-Z]{3}$'),
    exchange_rate      numeric(19, 6) CHECK (exchange_rate > 0),
    buyer_reference    text,
    notes              text,
    -- The request's line items as given, and the document model the XML
    -- and PDF are rendered from (seller and buyer as they were when the
    -- number was given: a later change of the debtor does not alter an
    -- issued invoice).
    lines              jsonb NOT NULL,
    document           jsonb,
    total_net          numeric(19, 2) NOT NULL,
    total_tax          numeric(19, 2) NOT NULL,
    total_gross        numeric(19, 2) NOT NULL CHECK (total_gross >= 0),
    paid_amount        numeric(19, 2) NOT NULL DEFAULT 0,
    credited_amount    numeric(19, 2) NOT NULL DEFAULT 0 CHECK (credited_amount >= 0),
    corrects_id        uuid REFERENCES sales_invoices (id),
    booking_intent_id  uuid,
    document_id        uuid,
    xml                bytea,
    pdf                bytea,
    void_reason        text,
    request_hash       text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    finalized_at       timestamptz,
    CHECK ((state = 'draft') = (number IS NULL)),
    CHECK ((type = 'credit_note') = (corrects_id IS NOT NULL)),
    CHECK (state <> 'posted' OR (booking_intent_id IS NOT NULL AND document_id IS NOT NULL AND xml IS NOT NULL AND pdf IS NOT NULL))
);
CREATE UNIQUE INDEX sales_invoices_number ON sales_invoices (tenant_id, number) WHERE number IS NOT NULL;
CREATE UNIQUE INDEX sales_invoices_intent ON sales_invoices (tenant_id, booking_intent_id) WHERE booking_intent_id IS NOT NULL;
CREATE INDEX sales_invoices_debtor ON sales_invoices (tenant_id, debtor_id, invoice_date);
CREATE INDEX sales_invoices_date ON sales_invoices (tenant_id, invoice_date, number);
CREATE INDEX sales_invoices_corrects ON sales_invoices (tenant_id, corrects_id) WHERE corrects_id IS NOT NULL;
SELECT enable_tenant_rls('sales_invoices');
GRANT SELECT, INSERT, UPDATE ON sales_invoices TO receivables_svc;

-- What the bank's reconciliations settled of an invoice's receivable: one
-- row per reconciliation and invoice, written by the consumer of
-- evt.bank.v1.transaction_reconciled (the inbox makes a redelivery a
-- no-op) and marked released by ...transaction_unmatched.
CREATE TABLE invoice_payments (
    tenant_id          uuid NOT NULL,
    reconciliation_id  uuid NOT NULL,
    invoice_id         uuid NOT NULL REFERENCES sales_invoices (id),
    amount             numeric(19, 2) NOT NULL CHECK (amount > 0),
    paid_on            date NOT NULL,
    released           boolean NOT NULL DEFAULT false,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, reconciliation_id, invoice_id)
);
SELECT enable_tenant_rls('invoice_payments');
GRANT SELECT, INSERT, UPDATE ON invoice_payments TO receivables_svc;
