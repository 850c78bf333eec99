package periodsd_test

import (
	"context"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/periodsd"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

// service declares the daemon; its settings are the daemon's
// (daemon.TestLoadConfig), read under its name.
func service(t *testing.T) daemon.Service {
	t.Helper()
	svc, err := periodsd.Service(func(string) string { return "" })
	if err != nil || svc.Name != "periods" || svc.DB.Schema != "periods" {
		t.Fatalf("declared %q on schema %q, %v", svc.Name, svc.DB.Schema, err)
	}
	return svc
}

// softLock soft-locks a period as the gateway forwards c's request.
func softLock(client *natsx.Client, c *auth.Claims, period string) (periodsv1.Period, error) {
	var p periodsv1.Period
	err := client.Call(auth.WithClaims(context.Background(), c), periodsv1.SubjectSoftLock,
		map[string][]string{"period": {period}}, nil, &p)
	return p, err
}

// The daemon serves the subjects, consumes the ledger's events and
// publishes its own; a second start on the same database works alike.
func TestRun(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Migrations)
	peers := periodstest.StartPeers(t, h)
	svc := service(t)
	c := periodstest.Tenant("Run")

	for i, period := range []string{"2025-01", "2025-02"} {
		stop := h.Start(svc, nil)
		p, err := softLock(h.Client, c, period)
		if err != nil || p.Status != "soft-locked" {
			t.Fatalf("start %d: soft-lock = %+v, %v", i+1, p, err)
		}
		if err := stop(); err != nil {
			t.Fatalf("start %d: Run = %v", i+1, err)
		}
	}
	if n := len(peers.Commands()); n != 2 {
		t.Errorf("%d commands reached the ledger, want 2", n)
	}
	// Once stopped, nobody answers.
	if _, err := softLock(h.Client, c, "2025-03"); !errs.Is(err, errs.Unavailable) {
		t.Errorf("soft-lock after stop = %v, want UNAVAILABLE", err)
	}

	// Bookings and lock events that arrived meanwhile are consumed at the
	// next start; the changes went out as period_changed events.
	periodstest.PublishIntent(t, h.JS, "run-1", c.TenantID, "2025-04")
	peers.PublishLockSet(t, ledgerv1.SetPeriodLock{TenantID: c.TenantID, Period: "2025-05", Status: "hard-locked"})
	stop := h.Start(svc, nil)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	testkit.EventuallyWithin(t, testkit.AfterRestart, "the events consumed", func() bool {
		var bookings int
		var status string
		_ = h.Pool.QueryRow(context.Background(), `SELECT (SELECT coalesce(sum(booking_count), 0) FROM periods.periods WHERE tenant_id = $1),
			(SELECT coalesce(max(status), '') FROM periods.periods WHERE tenant_id = $1 AND period = '2025-05')`, c.TenantID).Scan(&bookings, &status)
		return bookings == 1 && status == "hard-locked"
	})
	testkit.Eventually(t, "period_changed events", func() bool {
		s, err := h.JS.Stream(context.Background(), periodsv1.StreamEvents)
		if err != nil {
			return false
		}
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 3
	})
}

// Without Deps, the daemon connects from the configuration.
func TestRunOpensConnections(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Migrations)
	periodstest.StartPeers(t, h)
	svc := service(t)
	env := h.Bus.Env(t, "periods")
	env["DATABASE_URL"], env["PERIODS_DB_MAX_CONNS"] = h.DBURL, "4"
	cfg, err := daemon.LoadConfig(svc.Name, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- daemon.Run(ctx, svc, cfg, daemon.Deps{Log: h.Log, Ready: func() { close(ready) }}) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run returned before serving: %v", err)
	}
	if _, err := softLock(h.Client, periodstest.Tenant("Own"), "2025-01"); err != nil {
		t.Errorf("soft-lock: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
