-- The relay deletes a row once JetStream acknowledged it, so every row in
-- the outbox is pending; published_at was never set. Dropping it drops the
-- partial index on it too; the primary key orders the relay's reads.
ALTER TABLE outbox DROP COLUMN published_at;
