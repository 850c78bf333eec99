-- Statement file imports run as jobs on the BANK_IMPORTS work queue. A job
-- names the uploaded file (an object of the gateway's UPLOADS bucket) and,
-- for POST /v1/bank-accounts/{id}/upload, the bank account; the worker
-- writes the import (imports, statements, transactions) and then the
-- job's result or its error. A job the worker took (running) and lost in
-- a crash is run again: the file's SHA-256 per bank account keeps the
-- import from being written twice.
CREATE TABLE file_jobs (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL,
    bank_account_id uuid REFERENCES accounts (id),
    upload          jsonb NOT NULL,
    state           text NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    result          jsonb,
    error           jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz
);
CREATE INDEX file_jobs_open ON file_jobs (state, updated_at) WHERE state IN ('queued', 'running');

SELECT enable_tenant_rls('file_jobs');
-- A job refused while its request still waited is deleted: the caller got
-- the error, and a refused request changes nothing.
GRANT SELECT, INSERT, UPDATE, DELETE ON file_jobs TO bank_svc;
