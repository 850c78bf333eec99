-- PUT /v1/bank-accounts/:id renames an account: record when. The BIC is
-- stored in its ISO 9362 form, as the IBAN already is; the unique
-- constraints of 0001 (one bank account per IBAN and per ledger account of
-- a tenant) are what answers DUPLICATE_IBAN and ACCOUNT_ALREADY_LINKED.
ALTER TABLE accounts
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
    ADD CONSTRAINT accounts_bic_format CHECK (bic ~ '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$');
