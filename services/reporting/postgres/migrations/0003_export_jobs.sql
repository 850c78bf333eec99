-- Export jobs: an export (DATEV or GoBD) built in the background by a worker
-- into export_blobs (export_id = the job's id), fetched when done and kept
-- with its pieces until the job expires after 24 hours. claims is the
-- creator's principal, with which the worker asks identity, ledger and
-- periods; attempt fences a worker whose lease another one took over.
CREATE TABLE export_jobs (
    id           uuid PRIMARY KEY,
    tenant_id    uuid NOT NULL,
    type         text NOT NULL CHECK (type IN ('datev', 'gobd')),
    params       jsonb NOT NULL,
    status       text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    rows_done    bigint NOT NULL DEFAULT 0,
    rows_total   bigint,
    bytes        bigint NOT NULL DEFAULT 0,
    error        text,
    claims       jsonb NOT NULL,
    filename     text NOT NULL DEFAULT '',
    content_type text NOT NULL DEFAULT '',
    attempt      int NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX export_jobs_tenant ON export_jobs (tenant_id, id);
CREATE INDEX export_jobs_created ON export_jobs (created_at);
CREATE INDEX export_jobs_queued ON export_jobs (updated_at) WHERE status IN ('queued', 'running');

GRANT SELECT, INSERT, UPDATE, DELETE ON export_jobs TO reporting_svc;

SELECT enable_tenant_rls('export_jobs');
