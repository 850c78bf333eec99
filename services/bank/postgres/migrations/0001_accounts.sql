-- Bank accounts; the role, outbox, idempotency keys and the row-level
-- security function come from the shared migrations (pkg/migrate).
CREATE TABLE accounts (
    id             uuid PRIMARY KEY,
    tenant_id      uuid NOT NULL,
    name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    iban           text NOT NULL CHECK (iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'),
    bic            text CHECK (length(bic) <= 11),
    account_number text NOT NULL CHECK (account_number ~ '^[0-9]{1,8}$'),
    currency       text NOT NULL DEFAULT 'EUR' CHECK (currency ~ '^[A-Z]{3}$'),
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT accounts_iban_unique UNIQUE (tenant_id, iban),
    CONSTRAINT accounts_ledger_account_unique UNIQUE (tenant_id, account_number)
);
SELECT enable_tenant_rls('accounts');
GRANT SELECT, INSERT, UPDATE ON accounts TO bank_svc;
