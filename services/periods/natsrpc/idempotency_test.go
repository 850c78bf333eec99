package natsrpc_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
	"github.com/ledgerplatform/ledger/services/periods/natsrpc"
)

// While the ledger applies a lock change, the periods service holds no
// lock and no open transaction on its tables: the fake ledger looks at
// pg_locks of the test's database during every command (test databases
// are clones, so the relation's oid alone would match other tests').
func TestNoTransactionAcrossLedgerCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Short transactions")
	var mu sync.Mutex
	var held []int
	h.Peers.DuringLock(func(ledgerv1.SetPeriodLock) {
		var n int
		if err := h.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks l
			JOIN pg_class r ON r.oid = l.relation JOIN pg_namespace s ON s.oid = r.relnamespace
			WHERE s.nspname = 'periods' AND r.relname IN ('periods', 'idempotency_keys', 'periods_pkey', 'idempotency_keys_pkey')
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND l.pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Error(err)
		}
		mu.Lock()
		held = append(held, n)
		mu.Unlock()
	})
	steps := []struct {
		subject, param, value, key string
		status                     int
	}{
		{periodsv1.SubjectSoftLock, "period", "2025-04", "soft", 200},
		{periodsv1.SubjectReopen, "period", "2025-04", "", 200},
		{periodsv1.SubjectLock, "period", "2025-04", "hard", 200},
		{periodsv1.SubjectCreateAdjustment, "year", "2025", "adj", 201},
	}
	for _, s := range steps {
		// The consumer of earlier echoes would be seen too.
		testkit.Eventually(t, "the echoes", func() bool { return h.Drained(t, natsrpc.LocksConsumer) })
		h.OK(s.subject, testkit.Rq{As: c, Params: param(s.param, s.value), IdempotencyKey: s.key}, s.status, nil)
	}
	if diff := cmp.Diff([]int{0, 0, 0, 0}, held); diff != "" {
		t.Fatalf("locks held by the periods service during the ledger call (-want +got):\n%s", diff)
	}
}

// The same request on two replicas at once runs once: the ledger hears
// one command, every answer is the first answer byte for byte or 409
// IDEMPOTENCY_KEY_IN_PROGRESS, and a later repeat replays it.
func TestTwinsOnTwoReplicas(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start() // a second replica on the same database and NATS
	c := periodstest.Tenant("Twins")
	h.Peers.DuringLock(func(ledgerv1.SetPeriodLock) { time.Sleep(300 * time.Millisecond) })
	rq := testkit.Rq{As: c, Params: param("period", "2025-09"), IdempotencyKey: "twin"}
	const n = 6
	replies := make([]testkit.Reply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); replies[i] = h.Call(periodsv1.SubjectLock, rq) }()
	}
	wg.Wait()
	var first []byte
	for _, r := range replies {
		if r.Status == http.StatusOK && first == nil {
			first = r.Body
		}
	}
	if first == nil {
		t.Fatalf("no twin succeeded: %+v", replies)
	}
	for _, r := range replies {
		switch {
		case r.Status == http.StatusOK && string(r.Body) == string(first):
		case r.Status == http.StatusConflict && r.Code == errs.IdempotencyKeyInProgress:
		default:
			t.Errorf("twin answered %d %s %s", r.Status, r.Code, r.Body)
		}
	}
	if cmds := h.Peers.Commands(); len(cmds) != 1 {
		t.Fatalf("the ledger heard %d commands, want 1: %v", len(cmds), cmds)
	}
	if again := h.Call(periodsv1.SubjectLock, rq); again.Status != http.StatusOK || string(again.Body) != string(first) {
		t.Fatalf("repeat answered %d %s, want the first answer %s", again.Status, again.Body, first)
	}
	var changes int
	testkit.Eventually(t, "the relay", func() bool {
		return h.Pool.QueryRow(context.Background(), "SELECT count(*) FROM periods.outbox").Scan(&changes) == nil && changes == 0
	})
	if st, _ := h.status(t, c.TenantID, "2025-09"); st != "hard-locked" {
		t.Fatalf("status %q", st)
	}
}

// A process that dies after the ledger applied its change, before its
// second transaction: the ledger's event applies the pending change, and
// the period is free for the next change.
func TestCrashBetweenLedgerAndFinish(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Crash")
	h.transition(t, periodsv1.SubjectSoftLock, c, "2025-02") // the row and the tenant exist
	testkit.Eventually(t, "the echo", func() bool { return h.Drained(t, natsrpc.LocksConsumer) })
	// What BeginChange leaves behind, and the ledger's event of the change.
	if _, err := h.Pool.Exec(context.Background(), `UPDATE periods.periods SET pending_id = gen_random_uuid(), pending_status = 'hard-locked',
		pending_by = 'crashed', pending_since = now(), unconfirmed = unconfirmed + 1 WHERE tenant_id = $1 AND period = '2025-02'`, c.TenantID); err != nil {
		t.Fatal(err)
	}
	h.Fails(periodsv1.SubjectReopen, testkit.Rq{As: c, Params: param("period", "2025-02")}, http.StatusConflict, errs.Conflict)
	h.Peers.PublishLockSet(t, ledgerv1.SetPeriodLock{TenantID: c.TenantID, Period: "2025-02", Status: "hard-locked", LockedBy: "crashed"})
	testkit.Eventually(t, "the ledger's event to finish the change", func() bool {
		st, n := h.status(t, c.TenantID, "2025-02")
		return st == "hard-locked" && n == 0
	})
	var pending *string
	if err := h.Pool.QueryRow(context.Background(), "SELECT pending_id::text FROM periods.periods WHERE tenant_id = $1 AND period = '2025-02'", c.TenantID).Scan(&pending); err != nil || pending != nil {
		t.Fatalf("pending change left: %v %v", pending, err)
	}
	h.Fails(periodsv1.SubjectReopen, testkit.Rq{As: c, Params: param("period", "2025-02")}, http.StatusConflict, errs.PeriodAlreadyLocked)
}

// A request whose process died after its first transaction left its key
// claimed and its change pending; once both are older than their timeouts
// the client's retry with the same key takes them over and finishes.
func TestRetryResumesAbandonedChange(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := periodstest.Tenant("Resume")
	h.transition(t, periodsv1.SubjectSoftLock, c, "2025-10")
	testkit.Eventually(t, "the echo", func() bool { return h.Drained(t, natsrpc.LocksConsumer) })
	ctx := context.Background()
	hash := idem.Hash(periodsv1.SubjectLock, &natsx.Request{Params: url.Values{"period": {"2025-10"}}})
	if _, err := h.Pool.Exec(ctx, `INSERT INTO periods.idempotency_keys (tenant_id, scope, key, request_hash, status, response, created_at)
		VALUES ($1, $2, 'resume', $3, 0, 'null', now() - interval '1 hour')`, c.TenantID, c.Actor(), hash); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Pool.Exec(ctx, `UPDATE periods.periods SET pending_id = gen_random_uuid(), pending_status = 'hard-locked',
		pending_by = 'crashed', pending_since = now() - interval '1 hour', unconfirmed = unconfirmed + 1 WHERE tenant_id = $1 AND period = '2025-10'`, c.TenantID); err != nil {
		t.Fatal(err)
	}
	before := len(h.Peers.Commands())
	rq := testkit.Rq{As: c, Params: param("period", "2025-10"), IdempotencyKey: "resume"}
	first := h.OK(periodsv1.SubjectLock, rq, 200, nil)
	if again := h.OK(periodsv1.SubjectLock, rq, 200, nil); string(again.Body) != string(first.Body) {
		t.Fatalf("replay differs:\n%s\n%s", first.Body, again.Body)
	}
	if n := len(h.Peers.Commands()) - before; n != 1 {
		t.Fatalf("the ledger heard %d commands, want 1", n)
	}
	testkit.Eventually(t, "the echo of the resumed change", func() bool {
		st, n := h.status(t, c.TenantID, "2025-10")
		return st == "hard-locked" && n == 0 && h.Drained(t, natsrpc.LocksConsumer)
	})
}
