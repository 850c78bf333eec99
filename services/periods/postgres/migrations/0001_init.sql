-- The periods schema's own tables. The role periods_svc, the outbox,
-- idempotency_keys and processed_events come from the shared migrations
-- (postgres.Migrations).

-- What the service last learnt from identity about a tenant; the event
-- paths, which have no caller to ask identity for, number periods with it.
CREATE TABLE tenants (
    tenant_id               uuid PRIMARY KEY,
    fiscal_year_start_month int NOT NULL CHECK (fiscal_year_start_month BETWEEN 1 AND 12),
    updated_at              timestamptz NOT NULL DEFAULT now()
);

-- One row per known period of a tenant: a month (YYYY-MM) or an adjustment
-- period (YYYY-13). A month without a row is open and has no bookings.
CREATE TABLE periods (
    tenant_id     uuid NOT NULL,
    period        text NOT NULL CHECK (period ~ '^[1-9][0-9]{3}-(0[1-9]|1[0-3])$'),
    status        text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'soft-locked', 'hard-locked')),
    booking_count bigint NOT NULL DEFAULT 0 CHECK (booking_count >= 0),
    locked_by     text,
    locked_at     timestamptz,
    -- Lock changes committed here whose period_lock_set event from the
    -- ledger has not been consumed yet (see periods.Service.ApplyLockSet).
    unconfirmed   int NOT NULL DEFAULT 0 CHECK (unconfirmed >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, period),
    CHECK ((status = 'open') = (locked_at IS NULL))
);

CREATE TABLE closing_tasks (
    id         uuid PRIMARY KEY,
    tenant_id  uuid NOT NULL,
    period     text NOT NULL CHECK (period ~ '^[1-9][0-9]{3}-(0[1-9]|1[0-3])$'),
    title      text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    status     text NOT NULL CHECK (status IN ('open', 'in_progress', 'done', 'skipped')),
    assignee   text CHECK (length(assignee) <= 100),
    note       text CHECK (length(note) <= 2000),
    due_date   date,
    created_by text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX closing_tasks_period ON closing_tasks (tenant_id, period, created_at);

GRANT SELECT, INSERT, UPDATE ON tenants, periods, closing_tasks TO periods_svc;

-- Row-level security: the second fence behind the tenant filter of every query.
SELECT enable_tenant_rls('tenants', 'periods', 'closing_tasks');
