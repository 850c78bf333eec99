-- Incoming invoices (the list-item fields of the spec). The flows that
-- fill this table (inbox, review, posting, payment runs) come later; a
-- vendor's open_amount is already the sum over it: what is still open of
-- its posted invoices (total_gross - paid_amount).
--
-- state is the invoice's life cycle as stored: draft (captured, not
-- posted), pending (posting requested), posted (in the ledger under
-- booking_intent_id), void (refused or cancelled). The statuses the API
-- shows (open, partially_paid, paid, overdue) follow from it, the paid
-- amount and the due date.
CREATE TABLE incoming_invoices (
    id                uuid PRIMARY KEY,
    tenant_id         uuid NOT NULL,
    vendor_id         uuid NOT NULL REFERENCES vendors (id),
    invoice_number    text NOT NULL CHECK (length(invoice_number) BETWEEN 1 AND 100),
    invoice_date      date NOT NULL,
    due_date          date NOT NULL,
    total_net         numeric(19, 2) NOT NULL,
    total_tax         numeric(19, 2) NOT NULL,
    total_gross       numeric(19, 2) NOT NULL,
    paid_amount       numeric(19, 2) NOT NULL DEFAULT 0 CHECK (paid_amount >= 0),
    currency          text NOT NULL DEFAULT 'EUR' CHECK (currency ~ '^[A-Z]{3}$'),
    booking_intent_id uuid,
    state             text NOT NULL DEFAULT 'draft' CHECK (state IN ('draft', 'pending', 'posted', 'void')),
    created_at        timestamptz NOT NULL DEFAULT now(),
    CHECK (total_gross = total_net + total_tax),
    CHECK (state <> 'posted' OR booking_intent_id IS NOT NULL)
);
-- A vendor's invoice number once per tenant: the same invoice captured
-- twice (e-mail and upload) is one invoice.
CREATE UNIQUE INDEX incoming_invoices_number ON incoming_invoices (tenant_id, vendor_id, lower(invoice_number)) WHERE state <> 'void';
CREATE UNIQUE INDEX incoming_invoices_intent ON incoming_invoices (tenant_id, booking_intent_id) WHERE booking_intent_id IS NOT NULL;
CREATE INDEX incoming_invoices_vendor ON incoming_invoices (tenant_id, vendor_id, state);
CREATE INDEX incoming_invoices_date ON incoming_invoices (tenant_id, invoice_date);
SELECT enable_tenant_rls('incoming_invoices');
GRANT SELECT, INSERT, UPDATE ON incoming_invoices TO payables_svc;
