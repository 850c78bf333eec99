-- The chain covers every field of an intent and its events from hash
-- version 2 on; rows written before keep version 1 and verify by it.
ALTER TABLE journal_events ADD COLUMN hash_version smallint NOT NULL DEFAULT 1 CHECK (hash_version IN (1, 2));

-- The head may only follow the journal: at commit, a tenant's head must be
-- the number and hash of its newest event. Postings insert the events and
-- advance the head in one transaction, so they pass; an UPDATE that moves
-- the head anywhere else fails whoever runs it (short of disabling the
-- trigger, which needs the table owner; signed checkpoints catch that).
-- Deferred to commit, it costs one primary-key lookup per group commit and
-- no round trip.
CREATE FUNCTION journal_head_follows_events() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    n bigint;
    h bytea;
BEGIN
    SELECT e.journal_number, e.hash INTO n, h FROM journal_events e
        WHERE e.tenant_id = NEW.tenant_id ORDER BY e.journal_number DESC LIMIT 1;
    IF NEW.last_number IS DISTINCT FROM coalesce(n, 0) OR NEW.last_hash IS DISTINCT FROM coalesce(h, ''::bytea) THEN
        RAISE EXCEPTION 'ledger: the journal head of tenant % must be its newest event (number %)', NEW.tenant_id, coalesce(n, 0)
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'journal_head_follows_events';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER journal_head_follows_events AFTER INSERT OR UPDATE ON journal_heads
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_head_follows_events();

-- Signed checkpoints of the chain head: (tenant, number, hash, time,
-- reason) signed with Ed25519 by a key the database never sees, so whoever
-- can write the database still cannot rewrite the journal up to a
-- checkpoint unnoticed. key_id names the public key that verifies it.
CREATE TABLE chain_checkpoints (
    tenant_id      uuid NOT NULL REFERENCES tenants,
    id             bigint GENERATED ALWAYS AS IDENTITY,
    journal_number bigint NOT NULL CHECK (journal_number > 0),
    hash           bytea NOT NULL,
    signed_at      timestamptz NOT NULL,
    reason         text NOT NULL CHECK (length(reason) BETWEEN 1 AND 100),
    key_id         text NOT NULL,
    signature      bytea NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX chain_checkpoints_number ON chain_checkpoints (tenant_id, journal_number DESC, id DESC);
SELECT append_only('chain_checkpoints');
GRANT SELECT, INSERT ON chain_checkpoints TO ledger_svc;
SELECT enable_tenant_rls('chain_checkpoints');
