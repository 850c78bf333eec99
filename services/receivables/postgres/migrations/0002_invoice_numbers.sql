-- Invoice numbers (§14 Abs. 4 Nr. 4 UStG: unique, one sequence): per tenant
-- and year, gapless, with a prefix the tenant configures. The counter row of
-- a (tenant, year) is locked by the transaction that inserts the invoice,
-- so a rolled-back invoice gives its number back and two never share one.
CREATE TABLE settings (
    tenant_id             uuid PRIMARY KEY,
    invoice_number_prefix text NOT NULL DEFAULT 'RE-' CHECK (invoice_number_prefix ~ '^[A-Za-z0-9_/.-]{0,10}$'),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
SELECT enable_tenant_rls('settings');
GRANT SELECT, INSERT, UPDATE ON settings TO receivables_svc;

CREATE TABLE invoice_number_counters (
    tenant_id   uuid NOT NULL,
    year        integer NOT NULL CHECK (year BETWEEN 1900 AND 9999),
    last_number bigint NOT NULL CHECK (last_number > 0),
    PRIMARY KEY (tenant_id, year)
);
SELECT enable_tenant_rls('invoice_number_counters');
GRANT SELECT, INSERT, UPDATE ON invoice_number_counters TO receivables_svc;
