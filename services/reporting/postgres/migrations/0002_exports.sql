-- Export files that cannot be streamed without state (the GoBD ZIP) are
-- written once as numbered pieces of at most 1 MiB and read back one piece
-- per chunk of the download. The last chunk deletes its export; pieces of a
-- download nobody finished are dropped after an hour.
CREATE TABLE export_blobs (
    tenant_id  uuid NOT NULL,
    export_id  uuid NOT NULL,
    seq        int NOT NULL CHECK (seq >= 0),
    data       bytea NOT NULL CHECK (length(data) <= 1048576),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, export_id, seq)
);
CREATE INDEX export_blobs_created ON export_blobs (created_at);

GRANT SELECT, INSERT, DELETE ON export_blobs TO reporting_svc;

SELECT enable_tenant_rls('export_blobs');
