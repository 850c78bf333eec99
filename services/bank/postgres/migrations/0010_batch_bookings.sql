-- A batch booking can reach an account twice: as one entry of the booked
-- total in the day's camt.053 (or MT940), and split into its transactions
-- by a camt.054 notification, or the other way round. The import skips
-- whichever comes second (see statementWriter.Write); this index finds the
-- parts of a batch by the booking's reference.
CREATE INDEX transactions_batch ON transactions (tenant_id, bank_account_id, batch_ref) WHERE batch_ref <> '';
