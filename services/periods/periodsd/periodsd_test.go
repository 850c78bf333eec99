package periodsd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/periodsd"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    periodsd.Config
		wantErr string
	}{
		{"defaults", nil, periodsd.Config{DatabaseURL: periodsd.DefaultDatabaseURL, NATSURL: periodsd.DefaultNATSURL, DBMaxConns: 10}, ""},
		{"everything", map[string]string{"DATABASE_URL": "postgres://db/ledger", "NATS_URL": "nats://nats:4222", "PERIODS_DB_MAX_CONNS": "25"},
			periodsd.Config{DatabaseURL: "postgres://db/ledger", NATSURL: "nats://nats:4222", DBMaxConns: 25}, ""},
		{"pool too small", map[string]string{"PERIODS_DB_MAX_CONNS": "2"}, periodsd.Config{}, "PERIODS_DB_MAX_CONNS"},
		{"pool not a number", map[string]string{"PERIODS_DB_MAX_CONNS": "many"}, periodsd.Config{}, "PERIODS_DB_MAX_CONNS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := periodsd.LoadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// start runs periodsd until the returned stop is called, which waits for
// Run to return and reports its error.
func start(t *testing.T, cfg periodsd.Config, deps periodsd.Deps) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	deps.Ready = func() { close(ready) }
	deps.Log = periodstest.Log()
	done := make(chan error, 1)
	go func() { done <- periodsd.Run(ctx, cfg, deps) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("Run did not become ready")
	}
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not stop")
			return nil
		}
	}
}

func softLock(nc *nats.Conn, c *auth.Claims, period string) (periodsv1.Period, error) {
	var p periodsv1.Period
	err := (&natsx.Client{NC: nc, Timeout: 10 * time.Second}).Call(auth.WithClaims(context.Background(), c), periodsv1.SubjectSoftLock,
		map[string][]string{"period": {period}}, nil, &p)
	return p, err
}

// Run serves the subjects, consumes the ledger's events and publishes its
// own; a second start on the same database works alike.
func TestRun(t *testing.T) {
	t.Parallel()
	url := testkit.Postgres(t, postgres.Migrations)
	owner, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	_, nc := testkit.NATS(t)
	peers := periodstest.StartPeers(t, nc)
	c := periodstest.Tenant("Run")

	for i, period := range []string{"2025-01", "2025-02"} {
		stop := start(t, periodsd.Config{}, periodsd.Deps{Pool: owner, NC: nc})
		p, err := softLock(nc, c, period)
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
	if _, err := softLock(nc, c, "2025-03"); !errs.Is(err, errs.Unavailable) {
		t.Errorf("soft-lock after stop = %v, want UNAVAILABLE", err)
	}

	// Bookings and lock events that arrived meanwhile are consumed at the
	// next start; the changes went out as period_changed events.
	periodstest.PublishIntent(t, jetstreamOf(t, nc), "run-1", c.TenantID, "2025-04")
	peers.PublishLockSet(t, ledgerv1.SetPeriodLock{TenantID: c.TenantID, Period: "2025-05", Status: "hard-locked"})
	stop := start(t, periodsd.Config{}, periodsd.Deps{Pool: owner, NC: nc})
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	periodstest.Eventually(t, "the events consumed", func() bool {
		var bookings int
		var status string
		_ = owner.QueryRow(context.Background(), `SELECT (SELECT coalesce(sum(booking_count), 0) FROM periods.periods WHERE tenant_id = $1),
			(SELECT coalesce(max(status), '') FROM periods.periods WHERE tenant_id = $1 AND period = '2025-05')`, c.TenantID).Scan(&bookings, &status)
		return bookings == 1 && status == "hard-locked"
	})
	periodstest.Eventually(t, "period_changed events", func() bool {
		s, err := jetstreamOf(t, nc).Stream(context.Background(), periodsv1.StreamEvents)
		if err != nil {
			return false
		}
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 3
	})
}

func jetstreamOf(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Without Deps, Run connects from the configuration.
func TestRunOpensConnections(t *testing.T) {
	t.Parallel()
	url := testkit.Postgres(t, postgres.Migrations)
	natsURL, nc := testkit.NATS(t)
	periodstest.StartPeers(t, nc)
	stop := start(t, periodsd.Config{DatabaseURL: url, NATSURL: natsURL, DBMaxConns: 4}, periodsd.Deps{})
	if _, err := softLock(nc, periodstest.Tenant("Own"), "2025-01"); err != nil {
		t.Errorf("soft-lock: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	t.Parallel()
	err := periodsd.Run(context.Background(), periodsd.Config{DBMaxConns: 1}, periodsd.Deps{})
	if err == nil || !strings.Contains(err.Error(), "PERIODS_DB_MAX_CONNS") {
		t.Errorf("Run = %v, want an error about PERIODS_DB_MAX_CONNS", err)
	}
}
