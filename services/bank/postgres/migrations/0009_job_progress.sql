-- A running statement file job reports how many entries it has written so
-- far (issue 10: long work shows progress). The import's own transaction
-- is invisible until it commits, so the worker updates this column on the
-- side; a job run again after a crash counts from zero again.
ALTER TABLE file_jobs ADD COLUMN rows_done integer NOT NULL DEFAULT 0 CHECK (rows_done >= 0);
