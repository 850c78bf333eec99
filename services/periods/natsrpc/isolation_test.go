package natsrpc_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

// Tenant B sees and changes nothing of tenant A.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := periodstest.Tenant("A GmbH"), periodstest.Tenant("B GmbH")
	h.Peers.SetFiscalStart(b.TenantID, 7)
	h.transition(t, periodsv1.SubjectSoftLock, a, "2025-02")
	h.transition(t, periodsv1.SubjectLock, a, "2023-01")
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: a, Params: param("year", "2024")}, http.StatusCreated, nil)
	periodstest.PublishIntent(t, h.JS, "iso-1", a.TenantID, "2025-02")
	testkit.Eventually(t, "bookings counted", func() bool { return h.Drained(t, natsrpc.BookingsConsumer) })
	var task periodsv1.Task
	h.OK(periodsv1.SubjectTasksCreate, testkit.Rq{As: a, Body: map[string]any{"period": "2025-02", "title": "A's task"}}, http.StatusCreated, &task)

	bs := h.periods(t, b)
	if p := bs["2025-02"]; p.Status != "open" || p.BookingCount != 0 || p.PeriodNumber != 8 {
		t.Errorf("B's 2025-02 = %+v", p)
	}
	for _, p := range []string{"2023-01", "2024-13"} {
		if _, ok := bs[p]; ok {
			t.Errorf("B sees A's %s", p)
		}
	}
	if l := h.tasks(t, b, "2025-02"); len(l.Tasks) != 4 {
		t.Errorf("B's checklist of 2025-02 has %d tasks, want the 4 computed ones", len(l.Tasks))
	}
	h.Fails(periodsv1.SubjectTasksUpdate, testkit.Rq{As: b, Params: param("id", task.ID), Body: map[string]any{"status": "done"}}, http.StatusNotFound, errs.NotFound)
	h.Fails(periodsv1.SubjectSoftLock, testkit.Rq{As: b, Params: param("period", "2024-13")}, http.StatusNotFound, errs.NotFound)
	h.Fails(periodsv1.SubjectReopen, testkit.Rq{As: b, Params: param("period", "2025-02")}, http.StatusConflict, errs.PeriodNotLocked)
	// B's own lock of the same month is B's alone.
	h.transition(t, periodsv1.SubjectLock, b, "2025-02")
	h.OK(periodsv1.SubjectCreateAdjustment, testkit.Rq{As: b, Params: param("year", "2024")}, http.StatusCreated, nil)

	as := h.periods(t, a)
	if p := as["2025-02"]; p.Status != "soft-locked" || p.BookingCount != 1 {
		t.Errorf("A's 2025-02 after B's changes = %+v", p)
	}
	if l := h.tasks(t, a, "2025-02"); len(l.Tasks) != 5 || l.Tasks[4].Status != "open" {
		t.Errorf("A's checklist after B's attempt: %+v", l.Tasks)
	}

	// Row-level security fences the service role even without a filter.
	ctx := context.Background()
	svcPool, err := db.Open(ctx, h.DBURL, postgres.Migrations.Role, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer svcPool.Close()
	for setting, want := range map[string]int{b.TenantID: 0, "": 0, a.TenantID: 15} {
		var n int
		err := db.WithTx(ctx, svcPool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if setting != "" {
				if err := db.SetTenant(ctx, tx, setting); err != nil {
					return err
				}
			}
			return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM periods.periods WHERE tenant_id = $1)
				+ (SELECT count(*) FROM periods.closing_tasks WHERE tenant_id = $1)`, a.TenantID).Scan(&n)
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("app.tenant_id %q sees %d of A's rows, want %d", setting, n, want)
		}
	}
}
