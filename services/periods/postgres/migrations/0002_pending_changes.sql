-- A lock change is recorded as pending in one short transaction, sent to
-- the ledger with no transaction open, and applied in a second one
-- (periods.Service.transition): no row lock is held across the call.
-- pending_id is the compare-and-set token of the change in flight;
-- pending_new marks a row the change created (deleted if the ledger refuses).
ALTER TABLE periods
    ADD COLUMN pending_id     uuid,
    ADD COLUMN pending_status text CHECK (pending_status IN ('open', 'soft-locked', 'hard-locked')),
    ADD COLUMN pending_by     text,
    ADD COLUMN pending_new    boolean NOT NULL DEFAULT false,
    ADD COLUMN pending_since  timestamptz,
    ADD CONSTRAINT periods_pending_whole CHECK ((pending_id IS NULL) = (pending_status IS NULL) AND (pending_id IS NULL) = (pending_since IS NULL));

GRANT DELETE ON periods TO periods_svc;
