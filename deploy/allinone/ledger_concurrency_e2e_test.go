package allinone_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// parallel runs f(i) for i in [0,n) at once and collects the responses;
// transport errors fail the test afterwards, on the test's goroutine.
func parallel(t *testing.T, n int, f func(i int) (resp, error)) []resp {
	t.Helper()
	out := make([]resp, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out[i], errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

// TestLedgerIdempotency: the Idempotency-Key header replays the first
// answer, refuses another body, serialises concurrent twins and is scoped
// to the API key.
func TestLedgerIdempotency(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Idempotent GmbH")
	k1, k2 := p.apiKey(admin, "journal:write", "journal:read"), p.apiKey(admin, "journal:write", "journal:read")
	intents := func(desc string) int {
		return count(t, p.owner, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND description = $2", tenant, desc)
	}

	body := bookingBody("2025-06-10", "Hosting Juni", bline("6815", "1800", "35.70", "tax_code", "VSt19"))
	a := p.must(201, "POST", "/v1/bookings", k1, body, "Idempotency-Key", "order-42")
	b := p.must(201, "POST", "/v1/bookings", k1, body, "Idempotency-Key", "order-42")
	if !sameJSON(t, a.Raw, b.Raw) || a.str("intent_id") == "" {
		t.Fatalf("replay %s, first %s", b.Raw, a.Raw)
	}
	// Whitespace does not make another body.
	j, _ := json.MarshalIndent(body, "", "   ")
	if c := p.must(201, "POST", "/v1/bookings", k1, j, "Idempotency-Key", "order-42"); !sameJSON(t, c.Raw, a.Raw) {
		t.Fatalf("indented body with the same key: %s, first %s", c.Raw, a.Raw)
	}
	if n := intents("Hosting Juni"); n != 1 {
		t.Fatalf("%d intents after replays, want 1", n)
	}
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/bookings", k1,
		bookingBody("2025-06-10", "Hosting Juni", bline("6815", "1800", "35.71", "tax_code", "VSt19")), "Idempotency-Key", "order-42")
	// The same key on another route is another request.
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/journal/reverse", k1, map[string]any{"intent_id": a.str("intent_id")}, "Idempotency-Key", "order-42")
	// Keys belong to the API key: another key may use the same value.
	other := p.must(201, "POST", "/v1/bookings", k2, bookingBody("2025-06-11", "Hosting Juli", bline("6815", "1800", "35.70")), "Idempotency-Key", "order-42")
	if other.str("intent_id") == a.str("intent_id") {
		t.Fatal("another API key's request replayed the first key's answer")
	}
	if n := intents("Hosting Juni") + intents("Hosting Juli"); n != 2 {
		t.Fatalf("%d intents, want 2", n)
	}
	// A refused request stores no key: the corrected retry posts.
	p.expectInvalid([]string{"lines[0].amount"}, "POST", "/v1/bookings", k1, bookingBody("2025-06-12", "Strom", bline("6815", "1800", "1.001")), "Idempotency-Key", "strom")
	p.book(k1, bookingBody("2025-06-12", "Strom", bline("6815", "1800", "1.00")), "Idempotency-Key", "strom")
	p.expectError(400, "INVALID_INPUT", "POST", "/v1/bookings", k1, body, "Idempotency-Key", strings.Repeat("k", 256))

	// 20 identical requests at once: exactly one intent; the others replay
	// it or are told it is in progress.
	twin := bookingBody("2025-06-20", "Parallel", bline("6815", "1800", "20.00"))
	rs := parallel(t, 20, func(int) (resp, error) {
		return p.send("POST", "/v1/bookings", k1, twin, "Idempotency-Key", "twin")
	})
	created, inProgress := outcomes(t, "concurrent twin", rs, 201, "IDEMPOTENCY_KEY_IN_PROGRESS")
	var ids = map[string]bool{}
	for _, r := range rs {
		if r.Status == 201 {
			ids[fmt.Sprint(r.Body["intent_id"])] = true
		}
	}
	if n := intents("Parallel"); n != 1 || len(ids) != 1 || created == 0 {
		t.Fatalf("20 twins: %d intents, %d distinct intent ids in %d 201s (%d in progress)", n, len(ids), created, inProgress)
	}
	t.Logf("20 twins: %d answered 201, %d IDEMPOTENCY_KEY_IN_PROGRESS", created, inProgress)
	after := p.must(201, "POST", "/v1/bookings", k1, twin, "Idempotency-Key", "twin")
	if !ids[after.str("intent_id")] {
		t.Fatalf("replay after the race: %s", after.Raw)
	}

	// Reversal with a key: a retry gets the first answer.
	r1 := p.must(201, "POST", "/v1/journal/reverse", k1, map[string]any{"intent_id": a.str("intent_id")}, "Idempotency-Key", "storno-1")
	r2 := p.must(201, "POST", "/v1/journal/reverse", k1, map[string]any{"intent_id": a.str("intent_id")}, "Idempotency-Key", "storno-1")
	if !sameJSON(t, r1.Raw, r2.Raw) {
		t.Fatalf("reversal replay %s, first %s", r2.Raw, r1.Raw)
	}
	wantKeys(t, "reversal replay", r2.Raw, "reversal_intent_id", "original_intent_id", "event_count")
	p.wantCount(1, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND reverses = $2", tenant, a.str("intent_id"))
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/journal/reverse", k1, map[string]any{"intent_id": a.str("intent_id"), "reason": "anders"}, "Idempotency-Key", "storno-1")
	p.expectError(409, "ALREADY_REVERSED", "POST", "/v1/journal/reverse", k1, map[string]any{"intent_id": a.str("intent_id")}, "Idempotency-Key", "storno-2")
	// The key belongs to k1: k2 retrying it is a new reversal, refused.
	p.expectError(409, "ALREADY_REVERSED", "POST", "/v1/journal/reverse", k2, map[string]any{"intent_id": a.str("intent_id")}, "Idempotency-Key", "storno-1")
	p.expectError(409, "ALREADY_REVERSED", "POST", "/v1/journal/reverse", k1, map[string]any{"intent_id": a.str("intent_id")})

	// Account creation is idempotent too.
	acc := map[string]any{"number": "6817", "name": "Lizenzen", "type": "expense"}
	x := p.must(201, "POST", "/v1/accounts", admin, acc, "Idempotency-Key", "acc-1")
	y := p.must(201, "POST", "/v1/accounts", admin, acc, "Idempotency-Key", "acc-1")
	if !sameJSON(t, x.Raw, y.Raw) {
		t.Fatalf("account replay %s, first %s", y.Raw, x.Raw)
	}
	p.expectError(409, "ACCOUNT_EXISTS", "POST", "/v1/accounts", admin, acc)
	p.verifyOK(k1, -1)
}

// TestLedgerLockRace: 50 postings through the gateway race a soft lock of
// their month. None lands after the lock committed; every refusal is 409
// PERIOD_LOCKED.
func TestLedgerLockRace(t *testing.T) {
	p, admin, tenant := setup(t, env{"RATE_LIMIT_PER_MINUTE": "100000"}, "Sperre GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read")
	p.book(w, bookingBody("2025-08-01", "vorher", bline("6310", "1800", "1")))

	// The postings go out 1 ms apart; the lock command is sent as soon as
	// ten of them have been answered, while the others are in flight.
	posted, locked, lockedAt := p.lockRace(w, time.Millisecond, func() { p.setLock(tenant, "2025-08", "soft-locked") })
	t.Logf("lock sent after 10 answers, committed with %d answered", lockedAt)
	t.Logf("%d posted before the lock, %d refused", posted, locked)
	p.afterLockRace(tenant, w, posted)
}

// TestLedgerGaplessChain: 200 concurrent postings through the gateway get
// gapless journal numbers and a chain that verifies; a row changed behind
// the service's back breaks it at that row.
func TestLedgerGaplessChain(t *testing.T) {
	p, admin, tenant := setup(t, env{"RATE_LIMIT_PER_MINUTE": "100000"}, "Kette GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read")

	const n = 200
	rs := parallel(t, n, func(i int) (resp, error) {
		lines := []map[string]any{bline("6815", "1800", fmt.Sprintf("%d.%02d", 1+i, i%100))}
		if i%3 == 0 {
			lines = append(lines, bline("6805", "1800", "119.00", "tax_code", "VSt19"))
		}
		return p.send("POST", "/v1/bookings", w, bookingBody(fmt.Sprintf("2025-%02d-%02d", 1+i%12, 1+i%28), fmt.Sprintf("Buchung %d", i), lines...))
	})
	events := 0
	for i, r := range rs {
		if r.Status != 201 {
			t.Fatalf("posting %d: %d %s", i, r.Status, r.Raw)
		}
		events += int(r.Body["event_count"].(float64))
	}
	var lo, hi, cnt, distinct int64
	if err := p.owner.QueryRow(context.Background(), `SELECT min(journal_number), max(journal_number), count(*), count(DISTINCT journal_number)
		FROM ledger.journal_events WHERE tenant_id = $1`, tenant).Scan(&lo, &hi, &cnt, &distinct); err != nil {
		t.Fatal(err)
	}
	if lo != 1 || hi != int64(events) || cnt != int64(events) || distinct != cnt {
		t.Fatalf("journal numbers %d..%d, %d rows (%d distinct), want 1..%d", lo, hi, cnt, distinct, events)
	}
	// Each intent's events are consecutive.
	if bad := count(t, p.owner, `SELECT count(*) FROM ledger.intents i WHERE tenant_id = $1 AND (SELECT max(journal_number) - min(journal_number) + 1
		FROM ledger.journal_events e WHERE e.tenant_id = i.tenant_id AND e.intent_id = i.id) <> i.event_count`, tenant); bad != 0 {
		t.Fatalf("%d intents with scattered events", bad)
	}
	v := p.verify(w)
	if !v.OK || v.Events != int64(events) || v.FirstBroken != nil {
		t.Fatalf("verify %+v, want ok with %d events", v, events)
	}
	if pg := p.journal(w, "limit=1000"); len(pg.Entries) != events {
		t.Fatalf("journal lists %d of %d entries", len(pg.Entries), events)
	}

	// Tamper with one amount as superuser, bypassing the append-only trigger.
	target := int64(events / 2)
	ctx := context.Background()
	conn, err := p.owner.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer conn.Release()
		if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(ctx, "RESET session_replication_role")
		tag, err := conn.Exec(ctx, "UPDATE ledger.journal_events SET amount = amount + 0.01 WHERE tenant_id = $1 AND journal_number = $2", tenant, target)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("tamper: %v %v", tag, err)
		}
	}()
	// The service itself cannot do that.
	if _, err := p.owner.Exec(ctx, "UPDATE ledger.journal_events SET amount = amount + 0.01 WHERE tenant_id = $1 AND journal_number = 1", tenant); err == nil {
		t.Fatal("the append-only trigger let an update through")
	}
	v = p.verify(w)
	if v.OK || v.FirstBroken == nil || *v.FirstBroken != target || v.Reason == "" || v.Events != int64(events) {
		t.Fatalf("verify after tampering with %d: %+v", target, v)
	}
	raw := p.must(200, "GET", "/v1/journal/verify", w, nil).Raw
	wantKeys(t, "broken verify", raw, "ok", "events", "head_hash", "first_broken_journal_number", "reason",
		"full", "started_from", "recomputed_events", "checkpoints")
	// Postings go on; the break stays where it is.
	p.book(w, bookingBody("2025-12-31", "nach dem Bruch", bline("6815", "1800", "1")))
	if v := p.verify(w); v.OK || *v.FirstBroken != target {
		t.Fatalf("verify after a further posting: %+v", v)
	}
}
