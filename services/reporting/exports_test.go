package reporting

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Fakes of the export tests: a ledger whose journal is either a fixed list
// of lines or generated on the fly, the tenant's master data, period
// statuses and an in-memory export store.

const expTenant = "7a1d1c52-8f7e-4d7c-9a43-2f1f7c1b0001"

type expLedger struct {
	lines []ledgerv1.JournalLine // a fixed journal, or
	n     int64                  // n generated events
	gen   func(int64) ledgerv1.JournalLine

	mu    sync.Mutex
	calls int
	codes []TaxCode
}

func (l *expLedger) Feed(ctx context.Context, r ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error) {
	l.mu.Lock()
	l.calls++
	l.mu.Unlock()
	if r.TenantID != expTenant {
		return ledgerv1.JournalFeed{}, fmt.Errorf("feed for tenant %q", r.TenantID)
	}
	if r.Limit < 1 || r.Limit > 5000 {
		return ledgerv1.JournalFeed{}, errs.Invalid("limit must be 1 to 5000")
	}
	head := l.n
	if l.gen == nil {
		head = int64(len(l.lines))
	}
	f := ledgerv1.JournalFeed{Lines: make([]ledgerv1.JournalLine, 0, min(int64(r.Limit), max(head-r.After, 0))), Last: r.After, Head: head}
	for n := r.After + 1; n <= head && len(f.Lines) < r.Limit; n++ {
		var line ledgerv1.JournalLine
		if l.gen != nil {
			line = l.gen(n)
		} else {
			line = l.lines[n-1]
		}
		if (r.From != "" && line.BookingDate < r.From) || (r.To != "" && line.BookingDate > r.To) {
			continue
		}
		f.Lines = append(f.Lines, line)
		f.Last = n
	}
	return f, nil
}

func (l *expLedger) Accounts(ctx context.Context) ([]Account, error) {
	return []Account{
		{Number: "1800", Name: "Bank", Type: "asset"},
		{Number: "6815", Name: "Bürobedarf", Type: "expense"},
		{Number: "4400", Name: "Erlöse 19 % USt", Type: "revenue"},
	}, nil
}

func (l *expLedger) TaxCodes(ctx context.Context) ([]TaxCode, error) {
	if l.codes != nil {
		return l.codes, nil
	}
	return []TaxCode{
		{Code: "VSt19", Rate: "19.00", Kind: "input", DATEVKey: "9", Label: "Vorsteuer 19 %"},
		{Code: "USt19", Rate: "19.00", Kind: "output", DATEVKey: "3", Label: "Umsatzsteuer 19 %"},
		{Code: "RC19", Rate: "19.00", Kind: "reverse_charge", DATEVKey: "94", Label: "§13b 19 %"},
		{Code: "frei", Rate: "0.00", Kind: "exempt", DATEVKey: "", Label: "steuerfrei"},
	}, nil
}

type expTenants struct{ t identityv1.Tenant }

func (t expTenants) Tenant(ctx context.Context) (identityv1.Tenant, error) {
	if c := auth.FromContext(ctx); c == nil || c.TenantID != t.t.ID {
		return identityv1.Tenant{}, errs.E(errs.Unauthenticated, "no claims")
	}
	return t.t, nil
}

type expPeriods struct{ statuses map[string]string }

func (p expPeriods) Statuses(ctx context.Context, tenant, from, to string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range p.statuses {
		if k >= from && k <= to {
			out[k] = v
		}
	}
	return out, nil
}

// expStore is an in-memory ExportStore.
type expStore struct {
	ProjectionStore
	mu    sync.Mutex
	blobs map[string]map[int][]byte // tenant/export → seq → data
}

func (s *expStore) PutExportBlob(ctx context.Context, tenant, id string, seq int, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blobs == nil {
		s.blobs = map[string]map[int][]byte{}
	}
	k := tenant + "/" + id
	if s.blobs[k] == nil {
		s.blobs[k] = map[int][]byte{}
	}
	s.blobs[k][seq] = append([]byte(nil), data...)
	return nil
}

func (s *expStore) ExportBlob(ctx context.Context, tenant, id string, seq int) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.blobs[tenant+"/"+id]
	d, ok := m[seq]
	if !ok {
		return nil, false, errs.NotFoundf("no piece")
	}
	_, more := m[seq+1]
	return d, !more, nil
}

func (s *expStore) DeleteExport(ctx context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.blobs, tenant+"/"+id)
	return nil
}

func (s *expStore) DeleteExportsBefore(ctx context.Context, t time.Time) (int64, error) {
	return 0, nil
}

// size is the bytes stored.
func (s *expStore) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.blobs {
		for _, d := range m {
			n += len(d)
		}
	}
	return n
}

func (s *expStore) pieces() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.blobs {
		n += len(m)
	}
	return n
}

type expVerifier struct {
	st  ChainStatus
	cps []ledgerv1.Checkpoint
}

func (v expVerifier) Verify(ctx context.Context) (ChainStatus, error) { return v.st, nil }

func (v expVerifier) Checkpoints(ctx context.Context) ([]ledgerv1.Checkpoint, error) {
	return v.cps, nil
}

// expCtx carries the claims of the test tenant.
func expCtx() context.Context {
	return auth.WithClaims(context.Background(), &auth.Claims{TenantID: expTenant, Scopes: []string{"auswertungen:read"}})
}

func expTenantData() identityv1.Tenant {
	return identityv1.Tenant{ID: expTenant, CompanyName: "Müller & Söhne GmbH", FiscalYearStartMonth: 1,
		DATEVConsultantNumber: "1234567", DATEVClientNumber: "4711",
		Address: identityv1.Address{Street: "Hauptstraße 1", Zip: "10115", City: "Berlin", Country: "DE"}}
}

func expService(l *expLedger, statuses map[string]string) (*Service, *expStore) {
	st := &expStore{}
	s := New(st, l, expTenants{expTenantData()}, expPeriods{statuses})
	s.now = func() time.Time { return time.Date(2026, 2, 3, 10, 11, 12, 345e6, time.UTC) }
	s.SetChainVerifier(expVerifier{st: ChainStatus{OK: true, Events: l.n + int64(len(l.lines)), HeadHash: "ab12"}})
	return s, st
}

// expGen generates event n of a journal dated through 2025.
func expGen(n int64) ledgerv1.JournalLine {
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(n%365))
	ref := fmt.Sprintf("RE-%d", n)
	return ledgerv1.JournalLine{
		EventLine: ledgerv1.EventLine{
			ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n*7919), JournalNumber: n,
			AccountDebit: "6815", AccountCredit: "1800", Amount: fmt.Sprintf("%d.%02d", n%10000, n%100),
			Description: fmt.Sprintf("Büromaterial Nr. %d", n), ExternalReference: &ref,
		},
		IntentID: fmt.Sprintf("%08x-1111-4000-8000-%012x", n, n), BookingDate: day.Format(time.DateOnly),
		Period: day.Format("2006-01"), Source: "api", CapturedAt: day.Add(9 * time.Hour),
	}
}

func TestBoundPage(t *testing.T) {
	lines := []ledgerv1.JournalLine{expGen(1), expGen(2), expGen(3)}
	for _, c := range []struct {
		head  int64
		limit int
		n     int
		done  bool
	}{
		{0, 3, 3, false}, {0, 4, 3, true}, {2, 3, 2, true}, {3, 3, 3, true}, {5, 3, 3, false},
	} {
		got, done := boundPage(lines, c.head, c.limit)
		if len(got) != c.n || done != c.done {
			t.Errorf("head %d limit %d: %d lines done %v, want %d %v", c.head, c.limit, len(got), done, c.n, c.done)
		}
	}
}

func TestFeedCursor(t *testing.T) {
	c, err := parseFeedCursor(feedCursor{After: 5000, Head: 12000}.String())
	if err != nil || c != (feedCursor{5000, 12000}) {
		t.Fatalf("round trip: %+v %v", c, err)
	}
	for _, bad := range []string{"x", "1", "1:", ":2", "-1:5", "7:3", "1:2:3"} {
		if _, err := parseFeedCursor(bad); !errs.Is(err, errs.InvalidInput) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

func TestFiscalYearStart(t *testing.T) {
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	for _, c := range []struct {
		day   string
		month int
		want  string
	}{
		{"2025-03-15", 1, "2025-01-01"}, {"2025-03-15", 0, "2025-01-01"}, {"2025-03-15", 7, "2024-07-01"},
		{"2025-07-01", 7, "2025-07-01"}, {"2025-12-31", 12, "2025-12-01"},
	} {
		if got := fiscalYearStart(d(c.day), c.month).Format(time.DateOnly); got != c.want {
			t.Errorf("%s start month %d: %s, want %s", c.day, c.month, got, c.want)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
