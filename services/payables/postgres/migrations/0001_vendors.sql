-- Vendors: the suppliers whose invoices a tenant receives (Kreditoren).
-- The role, outbox, idempotency keys and the row-level security function
-- come from the shared migrations (pkg/migrate). A vendor is never deleted
-- (its invoices and payment runs name it), only deactivated.
CREATE TABLE vendors (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL,
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    -- The name as duplicates are compared (payables.NameKey: lower case,
    -- umlauts transliterated, punctuation and legal forms dropped), kept
    -- by the service on every write.
    name_key        text NOT NULL CHECK (length(name_key) >= 1),
    tax_id          text CHECK (tax_id ~ '^[0-9]+(/[0-9]+)*$' AND length(tax_id) <= 20),
    vat_id          text CHECK (vat_id ~ '^[A-Z]{2}[A-Z0-9+*]{2,13}$'),
    iban            text CHECK (iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'),
    bic             text CHECK (bic ~ '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$'),
    -- The address is optional as a whole and in its parts; all four empty
    -- is no address.
    street          text NOT NULL DEFAULT '' CHECK (length(street) <= 255),
    zip             text NOT NULL DEFAULT '' CHECK (length(zip) <= 16),
    city            text NOT NULL DEFAULT '' CHECK (length(city) <= 255),
    country         text NOT NULL DEFAULT '' CHECK (country = '' OR country ~ '^[A-Z]{2}$'),
    default_account text CHECK (default_account ~ '^[0-9]{1,8}$'),
    notes           text CHECK (length(notes) BETWEEN 1 AND 2000),
    is_active       boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- Duplicates are refused by these indexes, so that two concurrent
-- creations of "Müller GmbH" and "MUELLER GMBH" cannot both succeed. A tax
-- number is compared by its digits ("143/123/45678" = "14312345678"), a VAT
-- ID as stored (normalised to upper case without spaces).
CREATE UNIQUE INDEX vendors_name_unique ON vendors (tenant_id, name_key);
CREATE UNIQUE INDEX vendors_tax_id_unique ON vendors (tenant_id, replace(tax_id, '/', '')) WHERE tax_id IS NOT NULL;
CREATE UNIQUE INDEX vendors_vat_id_unique ON vendors (tenant_id, vat_id) WHERE vat_id IS NOT NULL;
CREATE INDEX vendors_tenant_name ON vendors (tenant_id, lower(name));
SELECT enable_tenant_rls('vendors');
GRANT SELECT, INSERT, UPDATE ON vendors TO payables_svc;
