-- The audit key is the gateway's own request id; the client's X-Request-Id
-- is stored beside it for correlation. It is not unique: a client may send
-- the same id on many calls, and every one of them is recorded.
ALTER TABLE audit_log ADD COLUMN client_request_id text NOT NULL DEFAULT '';
