-- Debtors: the customers a tenant invoices. The role, outbox, idempotency
-- keys and the row-level security function come from the shared
-- migrations (pkg/migrate). A debtor is never deleted (its invoices and
-- open items name it), only deactivated.
CREATE TABLE debtors (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL,
    customer_number    text NOT NULL CHECK (customer_number ~ '^[A-Za-z0-9_/.-]{1,20}$'),
    name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    street             text NOT NULL CHECK (length(street) BETWEEN 1 AND 255),
    zip                text NOT NULL CHECK (length(zip) BETWEEN 1 AND 16),
    city               text NOT NULL CHECK (length(city) BETWEEN 1 AND 255),
    country            text NOT NULL DEFAULT 'DE' CHECK (country ~ '^[A-Z]{2}$'),
    vat_id             text CHECK (vat_id ~ '^[A-Z]{2}[A-Z0-9+*]{2,13}$'),
    email              text CHECK (length(email) BETWEEN 3 AND 254),
    payment_days       integer NOT NULL DEFAULT 14 CHECK (payment_days BETWEEN 0 AND 365),
    cash_discount_rate numeric(5, 2) NOT NULL DEFAULT 0 CHECK (cash_discount_rate BETWEEN 0 AND 100),
    cash_discount_days integer NOT NULL DEFAULT 0 CHECK (cash_discount_days BETWEEN 0 AND 365),
    leitweg_id         text CHECK (leitweg_id ~ '^[0-9]{2,12}(-[A-Za-z0-9]{1,30})?-[0-9]{2}$'),
    receivable_account text NOT NULL DEFAULT '1200' CHECK (receivable_account ~ '^[0-9]{1,8}$'),
    is_active          boolean NOT NULL DEFAULT true,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT debtors_cash_discount CHECK (cash_discount_rate = 0 OR cash_discount_days < payment_days)
);
-- A customer number once per tenant, whatever its case: K-10001 and
-- k-10001 are one customer to a person reading an invoice.
CREATE UNIQUE INDEX debtors_customer_number_unique ON debtors (tenant_id, lower(customer_number));
CREATE INDEX debtors_tenant_name ON debtors (tenant_id, lower(name));
SELECT enable_tenant_rls('debtors');
GRANT SELECT, INSERT, UPDATE ON debtors TO receivables_svc;

-- The last customer number assigned per tenant (K-<n>): the row is locked
-- by the assigning insert's transaction, so numbers are gapless (a
-- rolled-back creation gives its number back) and never repeat.
CREATE TABLE customer_number_counters (
    tenant_id   uuid PRIMARY KEY,
    last_number bigint NOT NULL CHECK (last_number >= 10000)
);
SELECT enable_tenant_rls('customer_number_counters');
GRANT SELECT, INSERT, UPDATE ON customer_number_counters TO receivables_svc;
