package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
)

func smallSeed() ([]ledger.Account, []ledger.TaxCode) {
	self := "3837"
	return []ledger.Account{
			ledgertest.Acc("1200", "Forderungen", ledger.Asset), ledgertest.Acc("1406", "Vorsteuer 19 %", ledger.Asset), ledgertest.Acc("1407", "Vorsteuer §13b", ledger.Asset),
			ledgertest.Acc("1800", "Bank", ledger.Asset), ledgertest.Acc("2000", "Gezeichnetes Kapital", ledger.Equity), ledgertest.Acc("3300", "Verbindlichkeiten LuL", ledger.Liability),
			ledgertest.Acc("3806", "Umsatzsteuer 19 %", ledger.Liability), ledgertest.Acc("3837", "USt §13b", ledger.Liability), ledgertest.Acc("4400", "Erlöse 19 %", ledger.Revenue),
			ledgertest.Acc("6310", "Miete", ledger.Expense), ledgertest.Acc("6815", "Bürobedarf", ledger.Expense), ledgertest.Acc("5925", "Fremdleistungen §13b", ledger.Expense),
		}, []ledger.TaxCode{
			{Code: "VSt19", Label: "Vorsteuer 19 %", Kind: ledger.TaxInput, Rate: money.MustParse("19"), VATAccount: "1406", DATEVKey: "9"},
			{Code: "USt19", Label: "Umsatzsteuer 19 %", Kind: ledger.TaxOutput, Rate: money.MustParse("19"), VATAccount: "3806", DATEVKey: "3"},
			{Code: "RC19", Label: "§13b 19 %", Kind: ledger.TaxReverseCharge, Rate: money.MustParse("19"), VATAccount: "1407", SelfAssessAccount: &self, DATEVKey: "94"},
		}
}

// env is one test's ledger with smallSeed.
type env struct{ *ledgertest.Env }

func newEnv(t *testing.T) *env { return &env{ledgertest.NewEnv(t, 20, smallSeed)} }

func (e *env) req(key string, body any) ledger.Request {
	b, _ := json.Marshal(body)
	return ledger.Request{Claims: e.Claims, IdempotencyKey: key, Body: b, Channel: "rest"}
}

func (e *env) book(t *testing.T, b ledger.Booking) ledger.Posted {
	t.Helper()
	p, _, err := e.Svc.Book(context.Background(), e.req("", b), b, "", "")
	if err != nil {
		t.Fatalf("Book(%+v): %v", b, err)
	}
	return p
}

func TestTaxSplit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	type row struct{ Debit, Credit, Amount string }
	for _, tc := range []struct {
		name string
		b    ledger.Booking
		want []row
	}{
		{"input VAT split", ledger.Booking{BookingDate: "2025-03-01", Description: "Büromaterial", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "119.00", "VSt19")}},
			[]row{{"6815", "1800", "100.00"}, {"1406", "1800", "19.00"}}},
		{"output VAT split", ledger.Booking{BookingDate: "2025-03-02", Description: "Rechnung 1", Lines: []ledger.Line{ledgertest.Line("1200", "4400", "1190.00", "USt19")}},
			[]row{{"1200", "4400", "1000.00"}, {"1200", "3806", "190.00"}}},
		{"reverse charge", ledger.Booking{BookingDate: "2025-03-03", Description: "Bauleistung §13b", Lines: []ledger.Line{ledgertest.Line("5925", "3300", "1000.00", "RC19")}},
			[]row{{"5925", "3300", "1000.00"}, {"1407", "3837", "190.00"}}},
	} {
		p := e.book(t, tc.b)
		if p.EventCount != len(tc.want) {
			t.Fatalf("%s: event_count %d, want %d", tc.name, p.EventCount, len(tc.want))
		}
		d, err := e.Svc.Intent(context.Background(), e.Tenant, p.IntentID)
		if err != nil {
			t.Fatal(err)
		}
		var got []row
		for _, en := range d.Entries {
			got = append(got, row{en.AccountDebit, en.AccountCredit, en.Amount.StringFixed(2)})
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestJournalFilters: each filter of the journal list narrows it, the
// account and search filters on either side of a line.
func TestJournalFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.book(t, ledger.Booking{BookingDate: "2025-02-01", Description: "Miete Februar", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1500", "")}})
	e.book(t, ledger.Booking{BookingDate: "2025-02-10", Description: "Büro 100%", Lines: []ledger.Line{ledgertest.Line("6815", "3300", "20", "")}})
	day := func(s string) *time.Time { d, _ := time.Parse(time.DateOnly, s); return &d }
	for _, tc := range []struct {
		name string
		f    ledger.JournalFilter
		want []string // descriptions in journal order
	}{
		{"all", ledger.JournalFilter{}, []string{"Miete Februar", "Büro 100%"}},
		{"debit account", ledger.JournalFilter{Account: "6310"}, []string{"Miete Februar"}},
		{"credit account", ledger.JournalFilter{Account: "3300"}, []string{"Büro 100%"}},
		{"from", ledger.JournalFilter{From: day("2025-02-05")}, []string{"Büro 100%"}},
		{"to", ledger.JournalFilter{To: day("2025-02-05")}, []string{"Miete Februar"}},
		{"search text", ledger.JournalFilter{Search: "miete"}, []string{"Miete Februar"}},
		{"search account", ledger.JournalFilter{Search: "3300"}, []string{"Büro 100%"}},
		{"search percent literally", ledger.JournalFilter{Search: "100%"}, []string{"Büro 100%"}},
		{"offset", ledger.JournalFilter{Offset: 1}, []string{"Büro 100%"}},
		{"limit", ledger.JournalFilter{Limit: 1}, []string{"Miete Februar"}},
	} {
		if tc.f.Limit == 0 {
			tc.f.Limit = 100
		}
		got, err := e.Svc.Journal(ctx, e.Tenant, tc.f)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, ledgertest.Strings(got, func(en ledger.JournalEntry) string { return en.Description })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestConcurrentPostingsGapless: 200 concurrent postings leave a gapless
// number sequence and a verifying chain.
func TestConcurrentPostingsGapless(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 200
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := ledger.Booking{BookingDate: "2025-04-01", Description: fmt.Sprintf("Posting %d", i), Lines: []ledger.Line{ledgertest.Line("6815", "1800", fmt.Sprintf("%d.%02d", 1+i, i%100), "VSt19")}}
			if _, _, err := e.Svc.Book(context.Background(), e.req("", b), b, "", ""); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	var count, min, max int64
	if err := e.Owner.QueryRow(context.Background(), "SELECT count(*), min(journal_number), max(journal_number) FROM ledger.journal_events WHERE tenant_id = $1", e.Tenant).Scan(&count, &min, &max); err != nil {
		t.Fatal(err)
	}
	if count != 2*n || min != 1 || max != 2*n {
		t.Fatalf("numbers: count %d min %d max %d, want %d gapless from 1", count, min, max, 2*n)
	}
	v, err := e.Svc.Verify(context.Background(), e.Tenant, true)
	if err != nil || !v.OK || v.Events != 2*n {
		t.Fatalf("verify: %+v %v", v, err)
	}
}

// TestTamperDetected: a row changed behind the ledger's back (by a
// superuser who disables the triggers) breaks the chain at that row.
func TestTamperDetected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 0; i < 5; i++ {
		e.book(t, ledger.Booking{BookingDate: "2025-05-01", Description: fmt.Sprintf("Miete %d", i), Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1500", "")}})
	}
	ctx := context.Background()
	if v, _ := e.Svc.Verify(ctx, e.Tenant, true); !v.OK {
		t.Fatalf("chain broken before tampering: %+v", v)
	}
	conn, err := e.Owner.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "UPDATE ledger.journal_events SET amount = 15.00 WHERE tenant_id = $1 AND journal_number = 3", e.Tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SET session_replication_role = origin"); err != nil {
		t.Fatal(err)
	}
	v, err := e.Svc.Verify(ctx, e.Tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK || v.FirstBroken == nil || *v.FirstBroken != 3 {
		t.Fatalf("tampered row not reported: %+v", v)
	}
}

// TestAppendOnly: the service role cannot change or remove journal rows, and
// the triggers refuse even the owner.
func TestAppendOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.book(t, ledger.Booking{BookingDate: "2025-05-01", Description: "Miete", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1500", "")}})
	ledgertest.Refused(t, e.Owner,
		"UPDATE ledger.journal_events SET amount = 1",
		"DELETE FROM ledger.journal_events",
		"UPDATE ledger.intents SET description = 'x'",
		"DELETE FROM ledger.intents",
		"TRUNCATE ledger.journal_events CASCADE",
	)
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := ledger.Booking{BookingDate: "2025-06-01", Description: "Idem", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "50", "")}}
	first, replay, err := e.Svc.Book(ctx, e.req("k1", b), b, "", "")
	if err != nil || replay != nil {
		t.Fatalf("first: %v %v", replay, err)
	}
	_, replay, err = e.Svc.Book(ctx, e.req("k1", b), b, "", "")
	if err != nil || replay == nil || replay.Status != 201 {
		t.Fatalf("replay: %+v %v", replay, err)
	}
	var again ledger.Posted
	_ = json.Unmarshal(replay.Body, &again)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Fatalf("replayed response differs (-first +replay):\n%s", diff)
	}
	other := b
	other.Description = "Other"
	if _, _, err := e.Svc.Book(ctx, e.req("k1", other), other, "", ""); !errs.Is(err, errs.IdempotencyKeyReused) {
		t.Fatalf("other body: %v, want IDEMPOTENCY_KEY_REUSED", err)
	}
	// Concurrent duplicates: exactly one posting.
	b2 := ledger.Booking{BookingDate: "2025-06-02", Description: "Race", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "51", "")}, SkipDuplicateCheck: true}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := e.Svc.Book(ctx, e.req("k2", b2), b2, "", "")
			if err != nil && !errs.Is(err, errs.IdempotencyKeyInProgress) {
				t.Errorf("concurrent duplicate: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND description = 'Race'", e.Tenant); n != 1 {
		t.Fatalf("%d intents for one idempotency key", n)
	}
}

func TestReversalAndDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := ledger.Booking{BookingDate: "2025-07-01", Description: "Miete Juli", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1500", "")}}
	p := e.book(t, b)
	if _, _, err := e.Svc.Book(ctx, e.req("", b), b, "", ""); !errs.Is(err, errs.DuplicateBooking) {
		t.Fatalf("duplicate: %v", err)
	}
	b.SkipDuplicateCheck = true
	e.book(t, b)
	rev, _, err := e.Svc.Reverse(ctx, e.req("", nil), ledger.ReverseRequest{IntentID: p.IntentID, Reason: "falsch"})
	if err != nil || rev.EventCount != 1 {
		t.Fatalf("reverse: %+v %v", rev, err)
	}
	if _, _, err := e.Svc.Reverse(ctx, e.req("", nil), ledger.ReverseRequest{IntentID: p.IntentID}); !errs.Is(err, errs.AlreadyReversed) {
		t.Fatalf("second reversal: %v", err)
	}
	if _, _, err := e.Svc.Reverse(ctx, e.req("", nil), ledger.ReverseRequest{IntentID: rev.ReversalIntentID}); !errs.Is(err, errs.CannotReverseReversal) {
		t.Fatalf("reversing a reversal: %v", err)
	}
	d, _ := e.Svc.Intent(ctx, e.Tenant, p.IntentID)
	if diff := cmp.Diff([]ledger.LinkedIntent{{IntentID: rev.ReversalIntentID, Relation: "reversed_by"}}, d.LinkedIntents); diff != "" {
		t.Fatalf("links (-want +got):\n%s", diff)
	}
	r, _ := e.Svc.Intent(ctx, e.Tenant, rev.ReversalIntentID)
	if r.Entries[0].AccountDebit != "1800" || r.Entries[0].AccountCredit != "6310" {
		t.Fatalf("reversal not mirrored: %+v", r.Entries[0])
	}
}

// TestLockRace: postings racing a period lock never land in the locked
// period after the lock committed.
func TestLockRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.book(t, ledger.Booking{BookingDate: "2025-08-01", Description: "vorher", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1", "")}})
	var wg sync.WaitGroup
	var lockedAt time.Time
	var mu sync.Mutex
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := ledger.Booking{BookingDate: "2025-08-15", Description: fmt.Sprintf("race %d", i), Lines: []ledger.Line{ledgertest.Line("6310", "1800", "2", "")}}
			_, _, err := e.Svc.Book(ctx, e.req("", b), b, "", "")
			if err != nil && !errs.Is(err, errs.PeriodLocked) {
				t.Errorf("posting: %v", err)
			}
		}()
		if i == 25 {
			if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-08", "soft-locked", "tester"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			lockedAt = time.Now()
			mu.Unlock()
		}
	}
	wg.Wait()
	var after int
	if err := e.Owner.QueryRow(ctx, `SELECT count(*) FROM ledger.journal_events e JOIN ledger.period_locks l ON l.tenant_id = e.tenant_id AND l.period = '2025-08'
		WHERE e.tenant_id = $1 AND e.captured_at > l.changed_at`, e.Tenant).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != 0 {
		t.Fatalf("%d events captured after the lock committed", after)
	}
	b := ledger.Booking{BookingDate: "2025-08-20", Description: "danach", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "3", "")}}
	if _, _, err := e.Svc.Book(ctx, e.req("", b), b, "", ""); !errs.Is(err, errs.PeriodLocked) {
		t.Fatalf("posting into a locked period: %v", err)
	}
	_ = lockedAt
}

// TestBalanceProperty: random multi-line bookings keep Σdebit = Σcredit per
// intent and per account over the whole journal.
func TestBalanceProperty(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := rand.New(rand.NewPCG(1, 2))
	accounts := []string{"1200", "1800", "2000", "3300", "4400", "6310", "6815"}
	codes := []string{"", "", "VSt19", "USt19"}
	want := map[string]money.Amount{}
	for i := 0; i < 60; i++ {
		var lines []ledger.Line
		for j := 0; j < 1+r.IntN(5); j++ {
			d := accounts[r.IntN(len(accounts))]
			c := accounts[r.IntN(len(accounts))]
			for c == d {
				c = accounts[r.IntN(len(accounts))]
			}
			amt := fmt.Sprintf("%d.%02d", r.IntN(10000), r.IntN(100))
			if amt == "0.00" {
				amt = "0.01"
			}
			lines = append(lines, ledgertest.Line(d, c, amt, codes[r.IntN(len(codes))]))
		}
		p := e.book(t, ledger.Booking{BookingDate: "2025-09-01", Description: fmt.Sprintf("random %d", i), Lines: lines, SkipDuplicateCheck: true})
		d, err := e.Svc.Intent(context.Background(), e.Tenant, p.IntentID)
		if err != nil {
			t.Fatal(err)
		}
		gross, posted := money.Zero, money.Zero
		for _, l := range lines {
			gross = gross.Add(l.Amount)
		}
		for _, en := range d.Entries {
			posted = posted.Add(en.Amount)
			want[en.AccountDebit] = want[en.AccountDebit].Add(en.Amount)
			want[en.AccountCredit] = want[en.AccountCredit].Sub(en.Amount)
		}
		if !gross.Equal(posted.Decimal) {
			t.Fatalf("intent %d: events total %s, lines total %s", i, posted, gross)
		}
	}
	rows, err := e.Owner.Query(context.Background(), `SELECT account, sum(amt)::text FROM (
		SELECT account_debit AS account, amount AS amt FROM ledger.journal_events WHERE tenant_id = $1
		UNION ALL SELECT account_credit, -amount FROM ledger.journal_events WHERE tenant_id = $1) x GROUP BY account`, e.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	total := money.Zero
	got := map[string]money.Amount{}
	for rows.Next() {
		var acc, sum string
		rows.Scan(&acc, &sum)
		got[acc] = money.MustParse(sum)
		total = total.Add(got[acc])
	}
	if !total.IsZero() {
		t.Fatalf("Σdebit - Σcredit over all accounts = %s", total)
	}
	for acc, w := range want {
		if !w.Equal(got[acc].Decimal) {
			t.Errorf("account %s: balance %s, want %s", acc, got[acc], w)
		}
	}
}

func TestInvalidBookingWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	bad := []ledger.Booking{
		{BookingDate: "2025-02-30", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1", "")}},
		{BookingDate: "2025-02-01", Description: "", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1", "")}},
		{BookingDate: "2025-02-01", Description: "x"},
		{BookingDate: "2025-02-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "6815", "1", "")}},
		{BookingDate: "2025-02-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "9999", "1", "")}},
		{BookingDate: "2025-02-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1.001", "")}},
		{BookingDate: "2025-02-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "-1", "")}},
		{BookingDate: "2025-02-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1", "NOPE")}},
		{BookingDate: "2025-02-01", Description: "x", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "1", ""), ledgertest.Line("6815", "1800", "0", "")}},
	}
	for _, b := range bad {
		if _, _, err := e.Svc.Book(ctx, e.req("", b), b, "", ""); !errs.Is(err, errs.InvalidInput) {
			t.Errorf("%+v: %v, want INVALID_INPUT", b, err)
		}
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.journal_events"); n != 0 {
		t.Fatalf("%d events written by invalid bookings", n)
	}
}

// TestAdjustmentPeriod: closing entries go into YYYY-13 while the year's
// months are locked, once the adjustment period exists.
func TestAdjustmentPeriod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.book(t, ledger.Booking{BookingDate: "2025-12-31", Description: "Dezember", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "10", "")}})
	if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-12", "hard-locked", "tester"); err != nil {
		t.Fatal(err)
	}
	closing := ledger.Booking{BookingDate: "2025-12-31", Description: "Abschlussbuchung", Period: "2025-13", Lines: []ledger.Line{ledgertest.Line("6310", "3300", "99", "")}}
	if _, _, err := e.Svc.Book(ctx, e.req("", closing), closing, "", ""); !errs.Is(err, errs.NotFound) {
		t.Fatalf("posting into a missing adjustment period: %v, want NOT_FOUND", err)
	}
	wrongYear := closing
	wrongYear.Period = "2024-13"
	if _, _, err := e.Svc.Book(ctx, e.req("", wrongYear), wrongYear, "", ""); !errs.Is(err, errs.InvalidInput) {
		t.Fatalf("adjustment period of another year: %v, want INVALID_INPUT", err)
	}
	if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-13", "open", "tester"); err != nil {
		t.Fatal(err)
	}
	p := e.book(t, closing)
	d, _ := e.Svc.Intent(ctx, e.Tenant, p.IntentID)
	if d.Period != "2025-13" {
		t.Fatalf("period %q, want 2025-13", d.Period)
	}
	plain := ledger.Booking{BookingDate: "2025-12-30", Description: "zu spät", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1", "")}}
	if _, _, err := e.Svc.Book(ctx, e.req("", plain), plain, "", ""); !errs.Is(err, errs.PeriodLocked) {
		t.Fatalf("posting into the hard-locked month: %v", err)
	}
}

func TestJournalFeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for i := 0; i < 7; i++ {
		e.book(t, ledger.Booking{BookingDate: fmt.Sprintf("2025-0%d-01", 1+i%3), Description: fmt.Sprintf("Feed %d", i), Lines: []ledger.Line{ledgertest.Line("6815", "1800", "119", "VSt19")}})
	}
	var got []int64
	after := int64(0)
	for {
		f, err := e.Svc.JournalFeed(ctx, ledgerv1.JournalFeedRequest{TenantID: e.Tenant, After: after, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		if f.Head != 14 {
			t.Fatalf("head %d, want 14", f.Head)
		}
		if len(f.Lines) == 0 {
			break
		}
		for _, l := range f.Lines {
			got = append(got, l.JournalNumber)
			if l.Period != l.BookingDate[:7] || l.IntentID == "" {
				t.Fatalf("line lacks intent data: %+v", l)
			}
		}
		after = f.Last
	}
	if len(got) != 14 || got[0] != 1 || got[13] != 14 {
		t.Fatalf("feed numbers %v", got)
	}
	f, err := e.Svc.JournalFeed(ctx, ledgerv1.JournalFeedRequest{TenantID: e.Tenant, Limit: 100, From: "2025-02-01", To: "2025-02-28"})
	if err != nil || len(f.Lines) != 4 {
		t.Fatalf("date-filtered feed: %d lines, %v", len(f.Lines), err)
	}
	if _, err := e.Svc.JournalFeed(ctx, ledgerv1.JournalFeedRequest{TenantID: e.Tenant, Limit: 0}); !errs.Is(err, errs.InvalidInput) {
		t.Fatalf("limit 0: %v", err)
	}
}

// TestSkippedCheckStillCounts: a booking posted with skip_duplicate_check is
// itself found by later duplicate checks.
func TestSkippedCheckStillCounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := ledger.Booking{BookingDate: "2025-10-01", Description: "Miete Oktober", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1500", "")}, SkipDuplicateCheck: true}
	e.book(t, b)
	b.SkipDuplicateCheck = false
	if _, _, err := e.Svc.Book(context.Background(), e.req("", b), b, "", ""); !errs.Is(err, errs.DuplicateBooking) {
		t.Fatalf("duplicate of a skipped-check booking: %v, want DUPLICATE_BOOKING", err)
	}
}

func TestPruneIdempotencyKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := ledger.Booking{BookingDate: "2025-11-01", Description: "Prune", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "5", "")}}
	if _, _, err := e.Svc.Book(ctx, e.req("old-key", b), b, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Owner.Exec(ctx, "UPDATE ledger.idempotency_keys SET created_at = now() - interval '31 days' WHERE key = 'old-key'"); err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(ctx, e.Owner.Config().ConnString(), "ledger_svc", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	n, err := idem.Prune(ctx, pool, "ledger", time.Now().Add(-30*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want 1", n, err)
	}
}

// TestHardLockIsFinal: no set_lock command opens or soft-locks a
// hard-locked month, and postings into it stay refused.
func TestHardLockIsFinal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-06", "hard-locked", "tester"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"open", "soft-locked"} {
		if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-06", st, "tester"); !errs.Is(err, errs.PeriodAlreadyLocked) {
			t.Fatalf("set %s on a hard-locked month: %v, want PERIOD_ALREADY_LOCKED", st, err)
		}
	}
	if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-06", "hard-locked", "tester"); err != nil {
		t.Fatalf("the same hard lock again: %v", err)
	}
	june := ledger.Booking{BookingDate: "2025-06-30", Description: "zu spät", Lines: []ledger.Line{ledgertest.Line("6310", "1800", "1", "")}}
	if _, _, err := e.Svc.Book(ctx, e.req("", june), june, "", ""); !errs.Is(err, errs.PeriodLocked) {
		t.Fatalf("posting into the hard-locked month: %v", err)
	}
	var status string
	if err := e.Owner.QueryRow(ctx, "SELECT status FROM ledger.period_locks WHERE tenant_id = $1 AND period = '2025-06'", e.Tenant).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != "hard-locked" {
		t.Fatalf("status %s after the refusals, want hard-locked", status)
	}
}
