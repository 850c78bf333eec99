package natsrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/periodsd"
	"github.com/ledgerplatform/ledger/services/periods/postgres"
)

// today is the service's clock in these tests: the current fiscal year of
// a calendar-year tenant is 2025.
var today = time.Date(2025, 3, 15, 10, 0, 0, 0, time.UTC)

// harness is the periods daemon with fake peers on testkit.RPC.
type harness struct {
	*testkit.RPC
	t     *testing.T
	Peers *periodstest.Peers
	stop  func() error
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{RPC: testkit.NewRPC(t, postgres.Migrations), t: t}
	h.Peers = periodstest.StartPeers(t, h.RPC)
	h.start()
	return h
}

func (h *harness) start() {
	h.stop = h.Start(periodsd.Declare(periods.WithClock(func() time.Time { return today })), nil)
}

// replay stops the service, deletes a durable consumer and starts the
// service again: the recreated consumer gets every event of the stream
// again, as after a lost acknowledgement, only more so.
func (h *harness) replay(t *testing.T, durable string) {
	t.Helper()
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if err := h.JS.DeleteConsumer(context.Background(), ledgerv1.StreamEvents, durable); err != nil {
		t.Fatal(err)
	}
	h.start()
	testkit.Eventually(t, "the replay", func() bool { return h.Drained(t, durable) })
}

// Drained reports whether the consumer handled every event so far.
func (h *harness) Drained(t *testing.T, durable string) bool { return h.Peers.Drained(t, durable) }

// periods lists the caller's periods by period.
func (h *harness) periods(t *testing.T, c *auth.Claims) map[string]periodsv1.Period {
	t.Helper()
	var ps []periodsv1.Period
	h.OK(periodsv1.SubjectList, testkit.Rq{As: c}, 200, &ps)
	out := map[string]periodsv1.Period{}
	for _, p := range ps {
		out[p.Period] = p
	}
	return out
}

// status reads a period's status behind the service ("" without a row).
func (h *harness) status(t *testing.T, tenant, period string) (status string, unconfirmed int) {
	t.Helper()
	err := h.Pool.QueryRow(context.Background(), "SELECT status, unconfirmed FROM periods.periods WHERE tenant_id = $1 AND period = $2", tenant, period).Scan(&status, &unconfirmed)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	return status, unconfirmed
}

func param(k, v string) map[string]string { return map[string]string{k: v} }

func str(s string) *string { return &s }
