-- The ledger's role (created by the shared base migration) may read and
-- append journal rows but never change or remove them (GoBD).

CREATE TABLE tenants (
    tenant_id  uuid PRIMARY KEY,
    seeded_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE accounts (
    tenant_id    uuid NOT NULL REFERENCES tenants,
    number       text NOT NULL CHECK (number ~ '^[0-9]{1,8}$'),
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    type         text NOT NULL CHECK (type IN ('asset', 'liability', 'equity', 'revenue', 'expense')),
    category     text NOT NULL DEFAULT '' CHECK (length(category) <= 100),
    report_group text NOT NULL DEFAULT '' CHECK (length(report_group) <= 40),
    is_active    boolean NOT NULL DEFAULT true,
    is_system    boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, number)
);
CREATE INDEX accounts_name ON accounts (tenant_id, lower(name) text_pattern_ops);

CREATE TABLE tax_codes (
    tenant_id           uuid NOT NULL REFERENCES tenants,
    code                text NOT NULL CHECK (code ~ '^[A-Za-z0-9_.-]{1,20}$'),
    label               text NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
    description         text,
    kind                text NOT NULL CHECK (kind IN ('output', 'input', 'reverse_charge', 'ic_acquisition', 'exempt')),
    rate                numeric(5,2) NOT NULL CHECK (rate >= 0 AND rate < 100),
    vat_account         text,
    self_assess_account text,
    datev_bu_key        text NOT NULL DEFAULT '',
    is_system           boolean NOT NULL DEFAULT false,
    is_active           boolean NOT NULL DEFAULT true,
    created_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, code),
    FOREIGN KEY (tenant_id, vat_account) REFERENCES accounts,
    FOREIGN KEY (tenant_id, self_assess_account) REFERENCES accounts
);

-- The head of each tenant's journal: the last number and hash. Postings
-- lock this row, which makes numbers gapless and the chain linear, and
-- period-lock changes lock it too, so a lock and a posting never race.
CREATE TABLE journal_heads (
    tenant_id   uuid PRIMARY KEY REFERENCES tenants,
    last_number bigint NOT NULL DEFAULT 0,
    last_hash   bytea NOT NULL DEFAULT ''::bytea
);

CREATE TABLE intents (
    tenant_id    uuid NOT NULL REFERENCES tenants,
    id           uuid NOT NULL,
    booking_date date NOT NULL,
    description  text NOT NULL,
    source       text NOT NULL,
    category     text NOT NULL DEFAULT '',
    document_id  uuid,
    reverses     uuid,
    provenance   jsonb NOT NULL DEFAULT '{}',
    fingerprint  text NOT NULL DEFAULT '',
    first_number bigint NOT NULL,
    event_count  int NOT NULL CHECK (event_count > 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, reverses) REFERENCES intents
);
-- An intent can be reversed once.
CREATE UNIQUE INDEX intents_reversed_once ON intents (tenant_id, reverses) WHERE reverses IS NOT NULL;
CREATE INDEX intents_fingerprint ON intents (tenant_id, fingerprint) WHERE fingerprint <> '';

CREATE TABLE journal_events (
    tenant_id          uuid NOT NULL,
    journal_number     bigint NOT NULL CHECK (journal_number > 0),
    id                 uuid NOT NULL,
    intent_id          uuid NOT NULL,
    booking_date       date NOT NULL,
    account_debit      text NOT NULL,
    account_credit     text NOT NULL CHECK (account_credit <> account_debit),
    amount             numeric(18,2) NOT NULL CHECK (amount > 0),
    tax_code           text,
    description        text NOT NULL,
    source             text NOT NULL,
    fx_currency        text,
    fx_amount          numeric,
    external_reference text,
    -- json, not jsonb: the chain hashes the exact text.
    custom_metadata    json,
    captured_at        timestamptz NOT NULL,
    hash               bytea NOT NULL,
    PRIMARY KEY (tenant_id, journal_number),
    FOREIGN KEY (tenant_id, intent_id) REFERENCES intents,
    FOREIGN KEY (tenant_id, account_debit) REFERENCES accounts,
    FOREIGN KEY (tenant_id, account_credit) REFERENCES accounts
);
CREATE INDEX journal_events_intent ON journal_events (tenant_id, intent_id);
CREATE INDEX journal_events_date ON journal_events (tenant_id, booking_date, journal_number);
CREATE INDEX journal_events_debit ON journal_events (tenant_id, account_debit, booking_date);
CREATE INDEX journal_events_credit ON journal_events (tenant_id, account_credit, booking_date);
CREATE INDEX journal_events_extref ON journal_events (tenant_id, external_reference) WHERE external_reference IS NOT NULL;

-- Append-only, whoever asks: the role has no UPDATE/DELETE and the
-- triggers refuse them for everyone else too.
CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger: % on % is not allowed; the journal is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;
-- SELECT append_only('table', ...) gives each table the triggers
-- <table>_append_only (UPDATE, DELETE) and <table>_no_truncate.
CREATE FUNCTION append_only(VARIADIC tables text[]) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY tables LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION refuse_change()', t || '_append_only', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION refuse_change()', t || '_no_truncate', t);
    END LOOP;
END $fn$;
SELECT append_only('journal_events', 'intents');

-- Lock state per month (YYYY-MM) or adjustment period (YYYY-13), set by
-- commands of the periods service. No row means open.
CREATE TABLE period_locks (
    tenant_id  uuid NOT NULL REFERENCES tenants,
    period     text NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-3])$'),
    status     text NOT NULL CHECK (status IN ('open', 'soft-locked', 'hard-locked')),
    locked_by  text,
    changed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, period)
);

GRANT SELECT, INSERT ON intents, journal_events TO ledger_svc;
GRANT SELECT, INSERT, UPDATE ON tenants, accounts, tax_codes, journal_heads, period_locks TO ledger_svc;

-- Row-level security: the second fence behind the tenant filter of every query.
SELECT enable_tenant_rls('tenants', 'accounts', 'tax_codes', 'journal_heads', 'intents', 'journal_events', 'period_locks');
