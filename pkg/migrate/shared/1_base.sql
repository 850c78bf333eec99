-- Every service schema: the service's own role (roles are cluster-wide, so
-- creation tolerates a concurrent creator) and the one row-level-security
-- rule of the platform, applied to a service's tables with
-- SELECT enable_tenant_rls('table', ...).
DO $$ BEGIN
    EXECUTE format('CREATE ROLE %I NOLOGIN', current_setting('migrate.role'));
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$ BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', current_setting('migrate.schema'), current_setting('migrate.role'));
END $$;

-- app.tenant_id names the tenant of the transaction (pkg/db.InTenant); '*'
-- is for system paths that span tenants. The rule has two forms with the
-- same meaning. enable_tenant_rls compares per row and costs nothing per
-- statement: for tables written and read a few rows at a time (postings,
-- commands), where a per-statement cost shows. enable_tenant_rls_scans
-- reads the setting once per query and lets an index on tenant_id serve
-- the rule: for tables whose queries aggregate many rows (reports).
CREATE OR REPLACE FUNCTION enable_tenant_rls(VARIADIC tables text[]) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM tenant_rls(tables, $p$tenant_id::text = current_setting('app.tenant_id', true) OR current_setting('app.tenant_id', true) = '*'$p$);
END $fn$;

CREATE OR REPLACE FUNCTION enable_tenant_rls_scans(VARIADIC tables text[]) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM tenant_rls(tables, $p$(SELECT current_setting('app.tenant_id', true) = '*')
        OR tenant_id = (SELECT CASE WHEN s ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN s::uuid END
                        FROM current_setting('app.tenant_id', true) AS s)$p$);
END $fn$;

CREATE OR REPLACE FUNCTION tenant_rls(tables text[], rule text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY tables LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = current_schema() AND tablename = t AND policyname = 'tenant_isolation') THEN
            EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (%s)', t, rule);
        END IF;
    END LOOP;
END $fn$;
