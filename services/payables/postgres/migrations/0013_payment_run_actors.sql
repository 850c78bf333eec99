-- Who prepared a run and who released it (auth.Claims.Actor: "key:<id>"
-- or "user:<id>"): the four-eyes principle of paying suppliers is checked
-- against them, and an auditor reads them off the run. Runs created before
-- have neither.
ALTER TABLE payment_runs
    ADD COLUMN created_by  text CHECK (length(created_by) BETWEEN 1 AND 100),
    ADD COLUMN approved_by text CHECK (length(approved_by) BETWEEN 1 AND 100);
