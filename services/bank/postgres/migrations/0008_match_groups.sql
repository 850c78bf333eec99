-- Match groups (issue 10): several bank transactions of one bank account
-- settle several open items with one clearing booking, balanced through
-- allocations, FX effects and adjustment lines (fees, cash discounts,
-- write-offs).
--
-- Open items learn their document currency and tax composition from the
-- ledger's events. currency is the document currency: EUR, or the
-- fx_currency every line of the intent on the item's account carries
-- (an intent mixing currencies there is an EUR item). original_doc_amount
-- is the document-currency amount (NULL for EUR items); allocated_doc_amount
-- what match groups have settled of it, raised under the row's lock like
-- allocated_amount, so the CHECK refuses settling beyond it. tax_split is
-- the item's composition by tax code, [{tax_code, gross, tax, vat_account}]
-- in EUR, NULL when no part of the item is tax: a cash discount on the item
-- corrects the VAT by it.
ALTER TABLE open_items
    ADD COLUMN currency text NOT NULL DEFAULT 'EUR' CHECK (currency ~ '^[A-Z]{3}$'),
    ADD COLUMN original_doc_amount numeric(19, 2) CHECK (original_doc_amount > 0),
    ADD COLUMN allocated_doc_amount numeric(19, 2) NOT NULL DEFAULT 0,
    ADD COLUMN tax_split jsonb,
    ADD CONSTRAINT open_items_doc_allocation CHECK (allocated_doc_amount >= 0
        AND (original_doc_amount IS NULL OR allocated_doc_amount <= original_doc_amount)),
    ADD CONSTRAINT open_items_doc_currency CHECK ((currency = 'EUR') = (original_doc_amount IS NULL));

-- A match group. Its id is derived from the tenant, its sorted transaction
-- ids and the first transaction's reconciliation sequence number, its
-- clearing intent id from the group id, so a retry never posts twice.
-- state: pending (claimed, clearing not confirmed), active, unmatched
-- (undone), abandoned (the ledger refused the clearing). input is the
-- request as normalised, input_hash its fingerprint (a retry resumes a
-- pending group only with the same body), booking the clearing booking
-- computed when the group was claimed (a resumed claim posts exactly it).
CREATE TABLE match_groups (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL,
    bank_account_id    uuid NOT NULL REFERENCES accounts (id),
    clearing_intent_id uuid NOT NULL,
    reversal_intent_id uuid,
    state              text NOT NULL CHECK (state IN ('pending', 'active', 'unmatched', 'abandoned')),
    input              jsonb NOT NULL,
    input_hash         text NOT NULL,
    booking            jsonb NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX match_groups_clearing ON match_groups (tenant_id, clearing_intent_id);
SELECT enable_tenant_rls('match_groups');
GRANT SELECT, INSERT, UPDATE ON match_groups TO bank_svc;

-- The transactions of a group, with the amount each contributes.
CREATE TABLE match_group_transactions (
    tenant_id           uuid NOT NULL,
    match_group_id      uuid NOT NULL REFERENCES match_groups (id),
    bank_transaction_id uuid NOT NULL REFERENCES transactions (id),
    amount              numeric(19, 2) NOT NULL CHECK (amount > 0),
    PRIMARY KEY (match_group_id, bank_transaction_id)
);
SELECT enable_tenant_rls('match_group_transactions');
GRANT SELECT, INSERT ON match_group_transactions TO bank_svc;

-- What a group settled of each open item: bank_amount is the bank money
-- allocated to it, settled_amount what left the item's account in EUR (the
-- carrying amount of an FX item), doc_amount the document-currency amount
-- settled (FX items only).
CREATE TABLE match_group_allocations (
    tenant_id       uuid NOT NULL,
    match_group_id  uuid NOT NULL REFERENCES match_groups (id),
    intent_id       uuid NOT NULL,
    account_number  text NOT NULL CHECK (account_number ~ '^[0-9]{1,8}$'),
    candidate_kind  text NOT NULL CHECK (candidate_kind IN ('open_receivable', 'open_liability')),
    bank_amount     numeric(19, 2) NOT NULL CHECK (bank_amount > 0),
    settled_amount  numeric(19, 2) NOT NULL CHECK (settled_amount > 0),
    currency        text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    doc_amount      numeric(19, 2),
    PRIMARY KEY (match_group_id, intent_id, account_number)
);
SELECT enable_tenant_rls('match_group_allocations');
GRANT SELECT, INSERT ON match_group_allocations TO bank_svc;

-- Each transaction of a group has its reconciliation row in mode
-- match_group, so "one live reconciliation per transaction", listing,
-- figures and unmatch keep working; intent_id and clearing_intent_id are
-- the group's clearing intent, account_number the bank's ledger account.
ALTER TABLE reconciliations
    ADD COLUMN match_group_id uuid REFERENCES match_groups (id),
    DROP CONSTRAINT reconciliations_mode_check,
    DROP CONSTRAINT reconciliations_candidate_kind_check,
    DROP CONSTRAINT reconciliations_check,
    ADD CONSTRAINT reconciliations_mode_check CHECK (mode IN ('bank_booking', 'open_item', 'match_group')),
    ADD CONSTRAINT reconciliations_candidate_kind_check
        CHECK (candidate_kind IN ('bank_booking', 'open_receivable', 'open_liability', 'match_group')),
    ADD CONSTRAINT reconciliations_clearing_check CHECK ((mode IN ('open_item', 'match_group')) = (clearing_intent_id IS NOT NULL)),
    ADD CONSTRAINT reconciliations_group_check CHECK ((mode = 'match_group') = (match_group_id IS NOT NULL));
CREATE INDEX reconciliations_group ON reconciliations (tenant_id, match_group_id) WHERE match_group_id IS NOT NULL;
