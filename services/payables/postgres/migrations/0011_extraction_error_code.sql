-- The public error code of a failed extraction beside its reason, so that
-- a request waiting for it answers what a synchronous read would have
-- (INVALID_INPUT for a refused document, OCR_FAILED when reading it failed
-- inside, NOT_FOUND / FILE_NOT_FOUND when the ledger lost it).
ALTER TABLE extractions ADD COLUMN error_code text CHECK (error_code ~ '^[A-Z_]{1,64}$');
ALTER TABLE extractions ADD CONSTRAINT extractions_failed_reason CHECK (state <> 'failed' OR (error IS NOT NULL AND error_code IS NOT NULL));
