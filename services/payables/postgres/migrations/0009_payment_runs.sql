-- Payment runs: SEPA credit transfers (pain.001.001.09) of open incoming
-- invoices from one of the tenant's bank accounts.
--
-- The cash discount (Skonto) of an incoming invoice: discount_rate percent
-- of what is still open may be kept when paid on or before
-- discount_until. Filled from the invoice's payment terms when it is
-- reviewed; both or neither.
ALTER TABLE incoming_invoices
    ADD COLUMN IF NOT EXISTS discount_rate  numeric(5, 2) CHECK (discount_rate > 0 AND discount_rate < 100),
    ADD COLUMN IF NOT EXISTS discount_until date;
ALTER TABLE incoming_invoices
    ADD CONSTRAINT incoming_invoices_discount_both CHECK ((discount_rate IS NULL) = (discount_until IS NULL));

-- A run holds what its file will pay: the debtor (bank account and the
-- company holding it) and each item's creditor as they were when the run
-- was created, so that the approved run is exactly what is exported.
-- pain_xml is the exported file: a second export answers the same bytes.
CREATE TABLE payment_runs (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL,
    status          text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'approved', 'exported', 'completed', 'cancelled')),
    label           text CHECK (length(label) BETWEEN 1 AND 140),
    bank_account_id uuid NOT NULL,
    debtor_name     text NOT NULL,
    debtor_iban     text NOT NULL,
    debtor_bic      text,
    debtor_street   text NOT NULL DEFAULT '',
    debtor_zip      text NOT NULL DEFAULT '',
    debtor_city     text NOT NULL DEFAULT '',
    debtor_country  text NOT NULL DEFAULT '',
    execution_date  date NOT NULL,
    total_amount    numeric(19, 2) NOT NULL CHECK (total_amount > 0),
    total_discount  numeric(19, 2) NOT NULL CHECK (total_discount >= 0),
    invoice_count   integer NOT NULL CHECK (invoice_count > 0),
    pain_xml        bytea,
    created_at      timestamptz NOT NULL DEFAULT now(),
    approved_at     timestamptz,
    exported_at     timestamptz,
    completed_at    timestamptz,
    cancelled_at    timestamptz,
    CHECK (status NOT IN ('exported', 'completed') OR pain_xml IS NOT NULL)
);
CREATE INDEX payment_runs_list ON payment_runs (tenant_id, created_at DESC, id);
CREATE INDEX payment_runs_status ON payment_runs (tenant_id, status, created_at DESC);
SELECT enable_tenant_rls('payment_runs');
GRANT SELECT, INSERT, UPDATE ON payment_runs TO payables_svc;

-- One credit transfer per invoice. active is true until the run is
-- cancelled (a completed run keeps its invoices: the bank paid them): the
-- partial unique index is what keeps an invoice in one run, also between
-- two runs created at once.
CREATE TABLE payment_run_items (
    run_id          uuid NOT NULL REFERENCES payment_runs (id),
    position        integer NOT NULL CHECK (position > 0),
    tenant_id       uuid NOT NULL,
    invoice_id      uuid NOT NULL REFERENCES incoming_invoices (id),
    vendor_id       uuid NOT NULL REFERENCES vendors (id),
    vendor_name     text NOT NULL,
    invoice_number  text NOT NULL,
    iban            text NOT NULL,
    bic             text,
    street          text NOT NULL DEFAULT '',
    zip             text NOT NULL DEFAULT '',
    city            text NOT NULL DEFAULT '',
    country         text NOT NULL DEFAULT '',
    amount          numeric(19, 2) NOT NULL CHECK (amount > 0),
    discount        numeric(19, 2) NOT NULL CHECK (discount >= 0),
    remittance      text NOT NULL CHECK (length(remittance) <= 140),
    end_to_end_id   text NOT NULL CHECK (length(end_to_end_id) <= 35),
    active          boolean NOT NULL DEFAULT true,
    PRIMARY KEY (run_id, position)
);
CREATE UNIQUE INDEX payment_run_items_active ON payment_run_items (tenant_id, invoice_id) WHERE active;
CREATE INDEX payment_run_items_invoice ON payment_run_items (tenant_id, invoice_id);
SELECT enable_tenant_rls('payment_run_items');
GRANT SELECT, INSERT, UPDATE ON payment_run_items TO payables_svc;
