-- How far each tenant's projection has applied the ledger's journal: the
-- last journal number folded into balances. The consumer locks this row, so
-- the events of one tenant are applied one transaction at a time, and a
-- redelivered event (last_number already covered) changes nothing.
CREATE TABLE tenant_heads (
    tenant_id   uuid PRIMARY KEY,
    last_number bigint NOT NULL DEFAULT 0 CHECK (last_number >= 0),
    rebuilt_at  timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Debit and credit turnover per account and accounting period: a month
-- (YYYY-MM) or a year's adjustment period (YYYY-13). Reports read only
-- this table; they never scan the journal.
CREATE TABLE balances (
    tenant_id uuid NOT NULL,
    account   text NOT NULL CHECK (account <> ''),
    period    text NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-3])$'),
    debit     numeric(20,2) NOT NULL DEFAULT 0,
    credit    numeric(20,2) NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, account, period)
);

-- A report reads the months of its fiscal year (and the calendar year
-- before, for a fiscal year not starting in January) by period.
CREATE INDEX balances_period ON balances (tenant_id, period);

-- The same turnover summed per calendar year (months and the adjustment
-- period YYYY-13), kept in the same statement as balances. Opening balances
-- read the years before the report's window here instead of every month
-- since the tenant began, so a report's cost does not grow with the years.
CREATE TABLE balance_years (
    tenant_id uuid NOT NULL,
    account   text NOT NULL CHECK (account <> ''),
    year      int NOT NULL CHECK (year BETWEEN 1000 AND 9999),
    debit     numeric(20,2) NOT NULL DEFAULT 0,
    credit    numeric(20,2) NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, account, year)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_heads, balances, balance_years TO reporting_svc;

-- Row-level security: the second fence behind the tenant filter of every
-- query (the platform's rule, evaluated once per query: reports aggregate
-- many rows).
SELECT enable_tenant_rls_scans('tenant_heads', 'balances', 'balance_years');
