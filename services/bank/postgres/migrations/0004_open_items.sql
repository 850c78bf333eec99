-- The open-items projection of the ledger's intent_posted events (issue
-- 10): what customers still owe and what the tenant still owes, per intent
-- and account, plus the bookings already on a liquid-funds account, which a
-- bank transaction may explain without posting anything. Bank works before
-- payables and receivables exist.
--
-- original_amount is what the intent put on the account; allocated_amount
-- is what reconciliation has settled of it since. Whoever records an
-- allocation raises allocated_amount in the same transaction, under the
-- row's lock, so the CHECK refuses settling more than is open even when two
-- reconciliations race; open_amount follows by itself.
CREATE TABLE open_items (
    tenant_id          uuid NOT NULL,
    intent_id          uuid NOT NULL,
    account_number     text NOT NULL CHECK (account_number ~ '^[0-9]{1,8}$'),
    party              text NOT NULL CHECK (party IN ('debtor', 'creditor')),
    direction          text NOT NULL CHECK (direction IN ('receivable', 'payable')),
    booking_date       date NOT NULL,
    description        text NOT NULL,
    external_reference text,
    journal_number     bigint NOT NULL,
    original_amount    numeric(19, 2) NOT NULL CHECK (original_amount > 0),
    allocated_amount   numeric(19, 2) NOT NULL DEFAULT 0,
    open_amount        numeric(19, 2) GENERATED ALWAYS AS (original_amount - allocated_amount) STORED,
    -- The intent that reversed this one: a reversed item is open no more.
    reversed_by        uuid,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, intent_id, account_number),
    CONSTRAINT open_items_allocation CHECK (allocated_amount BETWEEN 0 AND original_amount)
);
CREATE INDEX open_items_open ON open_items (tenant_id, booking_date, journal_number)
    WHERE reversed_by IS NULL AND allocated_amount < original_amount;
SELECT enable_tenant_rls_scans('open_items');
GRANT SELECT, INSERT, UPDATE ON open_items TO bank_svc;

-- Net movement of an intent on a liquid-funds account (SKR04 1550-1899, or
-- any account linked to a bank account when the event arrived), signed as
-- the bank sees it: positive is money in. explained_by is the bank
-- transaction that accounts for it, set by reconciliation.
CREATE TABLE ledger_bookings (
    tenant_id          uuid NOT NULL,
    intent_id          uuid NOT NULL,
    account_number     text NOT NULL CHECK (account_number ~ '^[0-9]{1,8}$'),
    booking_date       date NOT NULL,
    description        text NOT NULL,
    external_reference text,
    journal_number     bigint NOT NULL,
    amount             numeric(19, 2) NOT NULL CHECK (amount <> 0),
    reversed_by        uuid,
    explained_by       uuid,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, intent_id, account_number)
);
CREATE INDEX ledger_bookings_unexplained ON ledger_bookings (tenant_id, account_number, booking_date, journal_number)
    WHERE reversed_by IS NULL AND explained_by IS NULL;
SELECT enable_tenant_rls_scans('ledger_bookings');
GRANT SELECT, INSERT, UPDATE ON ledger_bookings TO bank_svc;

-- Every reversal seen, so a reversal cancels its original whichever of the
-- two is projected first.
CREATE TABLE reversed_intents (
    tenant_id   uuid NOT NULL,
    intent_id   uuid NOT NULL,
    reversed_by uuid NOT NULL,
    PRIMARY KEY (tenant_id, intent_id)
);
SELECT enable_tenant_rls('reversed_intents');
GRANT SELECT, INSERT ON reversed_intents TO bank_svc;
