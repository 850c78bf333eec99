-- Bank transactions and where they came from. An import (JSON body or a
-- statement file) writes one imports row, the statements the file holds
-- and their transactions in one transaction, so nothing is half-written.
--
-- Duplicates: dedup_key (bank.DedupKey: the bank's reference, else the
-- EndToEndId, else a fingerprint numbered within its statement) is unique
-- per bank account, and imports insert with ON CONFLICT DO NOTHING: an
-- overlapping statement or the same file again imports each transaction
-- once. file_sha256 lets an import see the same file again before parsing.
CREATE TABLE imports (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL,
    bank_account_id    uuid NOT NULL REFERENCES accounts (id),
    source             text NOT NULL CHECK (source IN ('json', 'camt', 'mt940', 'csv')),
    file_sha256        text CHECK (file_sha256 ~ '^[0-9a-f]{64}$'),
    state              text NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    total_rows         integer NOT NULL DEFAULT 0 CHECK (total_rows >= 0),
    imported           integer NOT NULL DEFAULT 0 CHECK (imported >= 0),
    skipped_duplicates integer NOT NULL DEFAULT 0 CHECK (skipped_duplicates >= 0),
    errors             jsonb NOT NULL DEFAULT '[]',
    created_at         timestamptz NOT NULL DEFAULT now(),
    finished_at        timestamptz
);
CREATE UNIQUE INDEX imports_file_unique ON imports (tenant_id, bank_account_id, file_sha256) WHERE file_sha256 IS NOT NULL;
CREATE INDEX imports_account ON imports (tenant_id, bank_account_id, created_at);

CREATE TABLE statements (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL,
    bank_account_id    uuid NOT NULL REFERENCES accounts (id),
    import_id          uuid NOT NULL REFERENCES imports (id),
    kind               text NOT NULL CHECK (kind IN ('camt.052', 'camt.053', 'camt.054', 'mt940', 'csv')),
    statement_ref      text NOT NULL DEFAULT '',
    number             text NOT NULL DEFAULT '',
    opening_date       date,
    opening_balance    numeric,
    closing_date       date,
    closing_balance    numeric,
    entries            integer NOT NULL CHECK (entries >= 0),
    sum                numeric NOT NULL,
    -- opening + sum differs from closing: the statement still imports, and
    -- both figures stay here for the import result and the reconciliation.
    balance_mismatch   boolean NOT NULL DEFAULT false,
    expected_closing   numeric,
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX statements_account ON statements (tenant_id, bank_account_id, closing_date);

CREATE TABLE transactions (
    id                uuid PRIMARY KEY,
    tenant_id         uuid NOT NULL,
    bank_account_id   uuid NOT NULL REFERENCES accounts (id),
    import_id         uuid NOT NULL REFERENCES imports (id),
    statement_id      uuid REFERENCES statements (id),
    booking_date      date NOT NULL,
    value_date        date,
    amount            numeric NOT NULL CHECK (amount <> 0),
    currency          text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    bank_reference    text NOT NULL DEFAULT '',
    end_to_end_id     text NOT NULL DEFAULT '',
    mandate_id        text NOT NULL DEFAULT '',
    creditor_id       text NOT NULL DEFAULT '',
    batch_ref         text NOT NULL DEFAULT '',
    counterparty_name text NOT NULL DEFAULT '',
    counterparty_iban text NOT NULL DEFAULT '',
    counterparty_bic  text NOT NULL DEFAULT '',
    reference         text NOT NULL DEFAULT '',
    -- the transaction type: JSON tx_type, camt AddtlNtryInf / BkTxCd, MT940 ?00
    booking_text      text NOT NULL DEFAULT '',
    gvc               text NOT NULL DEFAULT '',
    charges           numeric NOT NULL DEFAULT 0 CHECK (charges >= 0),
    reversal          boolean NOT NULL DEFAULT false,
    -- open until reconciled against the ledger or explained by evidence.
    status            text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'reconciled', 'evidenced')),
    dedup_key         text NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT transactions_dedup_unique UNIQUE (tenant_id, bank_account_id, dedup_key)
);
CREATE INDEX transactions_account_date ON transactions (tenant_id, bank_account_id, booking_date, id);
CREATE INDEX transactions_date ON transactions (tenant_id, booking_date, id);

SELECT enable_tenant_rls('imports');
SELECT enable_tenant_rls('statements');
SELECT enable_tenant_rls('transactions');
GRANT SELECT, INSERT, UPDATE ON imports, statements, transactions TO bank_svc;
