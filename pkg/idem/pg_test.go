package idem_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// The table comes from the shared migration every service schema uses.
var testSet = migrate.Set{Schema: "idemtest", Role: "idemtest_svc", Idempotency: true}

// replica is one process of a service: its own pool on the shared
// database, and an endpoint whose effect inserts a row in one transaction
// that claims the key first and saves the answer last, as stores do.
type replica struct {
	pool *pgxpool.Pool
	e    func(ctx context.Context, body string) (any, error)
	// hold, when set, is waited for after the claim, inside the
	// transaction; lose, when set, fails the call after the commit (a reply
	// lost with its process).
	hold    chan struct{}
	claimed chan struct{}
	lose    bool
}

func newDB(t *testing.T) string {
	t.Helper()
	u := testkit.Postgres(t, testSet)
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(context.Background(), "CREATE TABLE idemtest.effects (id uuid PRIMARY KEY, body text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return u
}

func newReplica(t *testing.T, u string) *replica {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r := &replica{pool: pool}
	effect := func(ctx context.Context, req any) (any, error) {
		nr := req.(*natsx.Request)
		id := uuid.NewString()
		idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
		err := db.InTenant(ctx, pool, auth.FromContext(ctx).TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
			if err := idem.Claim(ctx, tx, "idemtest"); err != nil {
				return err
			}
			if r.hold != nil {
				close(r.claimed)
				<-r.hold
			}
			if _, err := tx.Exec(ctx, "INSERT INTO idemtest.effects (id, body) VALUES ($1, $2)", id, string(nr.Body)); err != nil {
				return err
			}
			return idem.Save(ctx, tx, "idemtest", map[string]string{"id": id})
		})
		if err != nil {
			return nil, err
		}
		if r.lose {
			return nil, errors.New("the process died before it answered")
		}
		return natsx.Created(map[string]string{"id": id}), nil
	}
	mw := idem.Middleware(pool, "idemtest", "op")(effect)
	r.e = func(ctx context.Context, body string) (any, error) {
		return mw(ctx, &natsx.Request{Body: []byte(body), Params: url.Values{"id": {"1"}}})
	}
	return r
}

func claims(tenant, key string) context.Context {
	return auth.WithClaims(context.Background(), &auth.Claims{TenantID: tenant, KeyID: key})
}

func answer(t *testing.T, v any) string {
	t.Helper()
	r, ok := v.(*natsx.Response)
	if !ok {
		t.Fatalf("answer %T, want *natsx.Response", v)
	}
	b, err := json.Marshal(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func count(t *testing.T, r *replica) int {
	t.Helper()
	return testkit.Count(t, r.pool, "SELECT count(*) FROM idemtest.effects")
}

// TestReplay: the same key and body get the first answer byte for byte
// with no second effect; another body 422; no key, or another credential's
// key, is a new request.
func TestReplay(t *testing.T) {
	t.Parallel()
	r := newReplica(t, newDB(t))
	tenant := uuid.NewString()
	ctx := claims(tenant, "k1")
	for range 2 {
		if _, err := r.e(ctx, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	keyed := natsx.WithIdempotencyKey(ctx, "abc")
	first, err := r.e(keyed, `{"a":1}`)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.e(keyed, `{"a":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{201, answer(t, first), 3}, []any{again.(*natsx.Response).Status, answer(t, again), count(t, r)}); diff != "" {
		t.Fatalf("replay (-want +got):\n%s", diff)
	}
	if _, err := r.e(keyed, `{"a":2}`); !errs.Is(err, errs.IdempotencyKeyReused) {
		t.Fatalf("other body: %v, want IDEMPOTENCY_KEY_REUSED", err)
	}
	other := natsx.WithIdempotencyKey(claims(tenant, "k2"), "abc")
	if _, err := r.e(other, `{"a":1}`); err != nil || count(t, r) != 4 {
		t.Fatalf("another credential's key is its own: %v, %d effects", err, count(t, r))
	}
}

// TestTwinsOnTwoReplicas: the same request on two replicas at once runs
// once; the twin waits for the first transaction and replays its answer.
func TestTwinsOnTwoReplicas(t *testing.T) {
	t.Parallel()
	u := newDB(t)
	a, b := newReplica(t, u), newReplica(t, u)
	a.hold, a.claimed = make(chan struct{}), make(chan struct{})
	ctx := natsx.WithIdempotencyKey(claims(uuid.NewString(), "k"), "twin")
	var wg sync.WaitGroup
	var first any
	var ferr error
	wg.Add(1)
	go func() { defer wg.Done(); first, ferr = a.e(ctx, `{"n":1}`) }()
	<-a.claimed
	// b's claim waits on a's uncommitted row.
	second := make(chan any, 1)
	go func() {
		v, err := b.e(ctx, `{"n":1}`)
		if err != nil {
			v = err
		}
		second <- v
	}()
	testkit.Eventually(t, "the twin to wait on the key", func() bool {
		var n int
		_ = a.pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&n)
		return n > 0
	})
	close(a.hold)
	wg.Wait()
	if ferr != nil {
		t.Fatal(ferr)
	}
	got := <-second
	if err, ok := got.(error); ok {
		t.Fatalf("twin: %v", err)
	}
	if answer(t, got) != answer(t, first) || count(t, a) != 1 {
		t.Fatalf("twin answered %s, first %s, %d effects", answer(t, got), answer(t, first), count(t, a))
	}
}

// TestAnswerCommitsWithEffect: when the reply is lost after the commit, the
// retry gets the stored answer and the effect does not run again.
func TestAnswerCommitsWithEffect(t *testing.T) {
	t.Parallel()
	u := newDB(t)
	dying, next := newReplica(t, u), newReplica(t, u)
	dying.lose = true
	ctx := natsx.WithIdempotencyKey(claims(uuid.NewString(), "k"), "crash")
	if _, err := dying.e(ctx, `{"n":1}`); err == nil {
		t.Fatal("the dying replica answered")
	}
	got, err := next.e(ctx, `{"n":1}`)
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := next.pool.QueryRow(context.Background(), "SELECT id::text FROM idemtest.effects").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want := `"id":"` + stored + `"`; count(t, next) != 1 || !strings.Contains(answer(t, got), want) || got.(*natsx.Response).Status != 201 {
		t.Fatalf("retry answered %d %s, want the stored effect %s once (%d effects)", got.(*natsx.Response).Status, answer(t, got), stored, count(t, next))
	}
}

// TestRefusalIsNotStored: an effect that fails rolls its claim back, so the
// same key may be used again.
func TestRefusalIsNotStored(t *testing.T) {
	t.Parallel()
	r := newReplica(t, newDB(t))
	ctx := natsx.WithIdempotencyKey(claims(uuid.NewString(), "k"), "refused")
	if _, err := r.e(ctx, `not json for the text column`+"\x00"); err == nil {
		t.Fatal("a NUL byte in a text column was stored")
	}
	if _, err := r.e(ctx, `not json for the text column`+"\x00"); errs.Is(err, errs.IdempotencyKeyInProgress) || errs.Is(err, errs.IdempotencyKeyReused) {
		t.Fatalf("the refused request left its key claimed: %v", err)
	}
	if count(t, r) != 0 {
		t.Fatal("a refused request changed something")
	}
}

// TestClaimAcrossTransactions: a claim committed without an answer (an
// effect spanning transactions whose process died) is IN_PROGRESS for a
// twin until ClaimTimeout, then taken over; a claim released after a
// refusal lets the key run again.
func TestClaimAcrossTransactions(t *testing.T) {
	r := newReplica(t, newDB(t))
	tenant := uuid.NewString()
	// firstStep commits the claim and then, for fail, releases it with a
	// refusal, or else dies.
	firstStep := func(release bool) endpoint.Endpoint {
		return func(ctx context.Context, _ any) (any, error) {
			if err := db.InTenant(ctx, r.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error { return idem.Claim(ctx, tx, "idemtest") }); err != nil {
				return nil, err
			}
			if !release {
				return nil, errors.New("the process died between its transactions")
			}
			return nil, errors.Join(errs.E(errs.Conflict, "refused by the other service"),
				db.InTenant(ctx, r.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error { return idem.Release(ctx, tx, "idemtest") }))
		}
	}
	run := func(ctx context.Context, e endpoint.Endpoint) error {
		_, err := idem.Middleware(r.pool, "idemtest", "op")(e)(ctx, &natsx.Request{Body: []byte(`{"n":1}`), Params: url.Values{"id": {"1"}}})
		return err
	}

	released := natsx.WithIdempotencyKey(claims(tenant, "k"), "released")
	if err := run(released, firstStep(true)); !errs.Is(err, errs.Conflict) {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := r.e(released, `{"n":1}`); err != nil || count(t, r) != 1 {
		t.Fatalf("after the release the key runs: %v, %d effects", err, count(t, r))
	}

	crashed := natsx.WithIdempotencyKey(claims(tenant, "k"), "crashed")
	if err := run(crashed, firstStep(false)); err == nil {
		t.Fatal("the dying step answered")
	}
	if _, err := r.e(crashed, `{"n":1}`); !errs.Is(err, errs.IdempotencyKeyInProgress) {
		t.Fatalf("twin of a claim without answer: %v, want IDEMPOTENCY_KEY_IN_PROGRESS", err)
	}
	if _, err := r.e(crashed, `{"n":2}`); !errs.Is(err, errs.IdempotencyKeyReused) {
		t.Fatalf("other body on a claimed key: %v, want IDEMPOTENCY_KEY_REUSED", err)
	}
	if _, err := r.pool.Exec(context.Background(), "UPDATE idemtest.idempotency_keys SET created_at = now() - $1::interval WHERE key = 'crashed'",
		(idem.ClaimTimeout + time.Second).String()); err != nil {
		t.Fatal(err)
	}
	got, err := r.e(crashed, `{"n":1}`)
	if err != nil || count(t, r) != 2 || got.(*natsx.Response).Status != 201 {
		t.Fatalf("a stale claim is taken over: %v %v, %d effects", got, err, count(t, r))
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	r := newReplica(t, newDB(t))
	ctx := natsx.WithIdempotencyKey(claims(uuid.NewString(), "k"), "old")
	if _, err := r.e(ctx, `{}`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.pool.Exec(context.Background(), "UPDATE idemtest.idempotency_keys SET created_at = now() - interval '31 days'"); err != nil {
		t.Fatal(err)
	}
	if n, err := idem.Prune(context.Background(), r.pool, "idemtest", time.Now().Add(-idem.KeepFor)); err != nil || n != 1 {
		t.Fatalf("pruned %d, %v", n, err)
	}
}

// TestForward: an endpoint whose effect opens no transaction here (a
// forward, idempotent downstream) has its first answer stored afterwards
// and every repeat answered with it.
func TestForward(t *testing.T) {
	t.Parallel()
	r := newReplica(t, newDB(t))
	calls := 0
	forward := idem.Middleware(r.pool, "idemtest", "forward")(func(context.Context, any) (any, error) {
		calls++
		return &natsx.Response{Status: 202, Body: map[string]int{"call": calls}}, nil
	})
	ctx := natsx.WithIdempotencyKey(claims(uuid.NewString(), "k"), "fwd")
	var got []string
	for range 2 {
		v, err := forward(ctx, &natsx.Request{Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, answer(t, v))
	}
	if diff := cmp.Diff([]string{`{"call":1}`, `{"call":1}`}, got); diff != "" {
		t.Fatalf("answers (-want +got):\n%s", diff)
	}
}
