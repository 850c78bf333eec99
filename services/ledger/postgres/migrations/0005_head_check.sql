-- The head still may only follow the journal, but checked when it is
-- written instead of at commit: the deferred trigger of 0004 searched for
-- the newest event at every group commit's COMMIT, while the head row was
-- locked, and cost about a quarter of the posting throughput. Numbers are
-- gapless and a posting inserts its events before it advances the head, so
-- two primary-key probes say the same: the head names a stored event with
-- its hash, and no event follows it. A head never moves back.
DROP TRIGGER journal_head_follows_events ON journal_heads;
DROP FUNCTION journal_head_follows_events();

CREATE FUNCTION journal_head_follows_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'UPDATE' AND NEW.last_number < OLD.last_number)
       OR (NEW.last_number = 0 AND NEW.last_hash <> ''::bytea)
       OR (NEW.last_number > 0 AND NOT EXISTS (SELECT 1 FROM ledger.journal_events e
               WHERE e.tenant_id = NEW.tenant_id AND e.journal_number = NEW.last_number AND e.hash = NEW.last_hash))
       OR EXISTS (SELECT 1 FROM ledger.journal_events e
               WHERE e.tenant_id = NEW.tenant_id AND e.journal_number = NEW.last_number + 1) THEN
        RAISE EXCEPTION 'ledger: the journal head of tenant % must be its newest event', NEW.tenant_id
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'journal_head_follows_events';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER journal_head_follows_events BEFORE INSERT OR UPDATE ON journal_heads
    FOR EACH ROW EXECUTE FUNCTION journal_head_follows_events();
