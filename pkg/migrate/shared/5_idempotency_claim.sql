-- pkg/idem claims a key inside the transaction of the effect (status 0, no
-- answer yet) and stores the answer over the claim before that transaction
-- commits, so the service role updates its rows.
DO $$ BEGIN
    EXECUTE format('GRANT UPDATE ON idempotency_keys TO %I', current_setting('migrate.role'));
END $$;
