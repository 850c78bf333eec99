-- Replays must return the first response byte for byte; json keeps the
-- text as written, jsonb would reorder keys.
ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json;
