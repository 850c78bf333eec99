package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
	"github.com/ledgerplatform/ledger/services/ledger/skr04"
)

// chartEnv is a ledger with the real SKR04 seed on its own database, run
// as the service role ledger_svc.
type chartEnv struct {
	svc    *ledger.Service
	claims *auth.Claims
}

func newChartEnv(t *testing.T) *chartEnv {
	t.Helper()
	pool, _ := ledgertest.DB(t, 4)
	store := ledgertest.Store(pool)
	svc := ledger.New(store, func() ([]ledger.Account, []ledger.TaxCode) { return skr04.Accounts(), skr04.TaxCodes() }, ledgertest.CheckpointKeys(t))
	return &chartEnv{svc: svc, claims: chartClaims()}
}

func chartClaims() *auth.Claims {
	return &auth.Claims{TenantID: uuid.NewString(), KeyID: uuid.NewString(), KeyPrefix: "lgr_chart", Label: "chart test", Scopes: []string{"admin"}, Surface: "api"}
}

func (e *chartEnv) req(key string, body any) ledger.Request {
	b, _ := json.Marshal(body)
	return ledger.Request{Claims: e.claims, IdempotencyKey: key, Body: b, Channel: "rest"}
}

func (e *chartEnv) book(t *testing.T, date, desc string, lines ...ledger.Line) {
	t.Helper()
	if _, _, err := e.svc.Book(context.Background(), e.req("", nil), ledger.Booking{BookingDate: date, Description: desc, Lines: lines}, "", ""); err != nil {
		t.Fatalf("book %s: %v", desc, err)
	}
}

// chartErrFields lists the fields named by the details of err.
func chartErrFields(err error) []string {
	var out []string
	if e := errs.As(err); e != nil {
		for _, d := range e.Details {
			out = append(out, d.Field)
		}
	}
	return out
}

func TestCreateAccount(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	long := func(n int) string { return strings.Repeat("ä", n) }
	tests := []struct {
		name   string
		in     ledger.AccountInput
		code   string
		fields []string
	}{
		{name: "minimal", in: ledger.AccountInput{Number: "6816", Name: "Software-Abos", Type: "expense"}},
		{name: "all fields, trimmed", in: ledger.AccountInput{Number: " 12000 ", Name: " Debitor Müller ", Type: "asset", Category: "Debitoren", ReportGroup: "receivables"}},
		{name: "eight digits, leading zero", in: ledger.AccountInput{Number: "01234567", Name: "x", Type: "equity"}},
		{name: "limits exactly", in: ledger.AccountInput{Number: "6817", Name: long(255), Type: "expense", Category: long(100), ReportGroup: strings.Repeat("g", 40)}},
		{name: "seeded number", in: ledger.AccountInput{Number: "4400", Name: "Erlöse", Type: "revenue"}, code: errs.AccountExists},
		{name: "added standard account", in: ledger.AccountInput{Number: "1800", Name: "Bank", Type: "asset"}, code: errs.AccountExists},
		{name: "nothing", in: ledger.AccountInput{}, code: errs.InvalidInput, fields: []string{"number", "name", "type"}},
		{name: "nine digits", in: ledger.AccountInput{Number: "123456789", Name: "x", Type: "asset"}, code: errs.InvalidInput, fields: []string{"number"}},
		{name: "letters", in: ledger.AccountInput{Number: "12a4", Name: "x", Type: "asset"}, code: errs.InvalidInput, fields: []string{"number"}},
		{name: "negative", in: ledger.AccountInput{Number: "-1200", Name: "x", Type: "asset"}, code: errs.InvalidInput, fields: []string{"number"}},
		{name: "blank name", in: ledger.AccountInput{Number: "6818", Name: "  ", Type: "expense"}, code: errs.InvalidInput, fields: []string{"name"}},
		{name: "name 256", in: ledger.AccountInput{Number: "6818", Name: long(256), Type: "expense"}, code: errs.InvalidInput, fields: []string{"name"}},
		{name: "name with newline", in: ledger.AccountInput{Number: "6818", Name: "a\nb", Type: "expense"}, code: errs.InvalidInput, fields: []string{"name"}},
		{name: "name with NUL", in: ledger.AccountInput{Number: "6818", Name: "a\x00b", Type: "expense"}, code: errs.InvalidInput, fields: []string{"name"}},
		{name: "unknown type", in: ledger.AccountInput{Number: "6818", Name: "x", Type: "income"}, code: errs.InvalidInput, fields: []string{"type"}},
		{name: "type in capitals", in: ledger.AccountInput{Number: "6818", Name: "x", Type: "Expense"}, code: errs.InvalidInput, fields: []string{"type"}},
		{name: "category 101", in: ledger.AccountInput{Number: "6818", Name: "x", Type: "expense", Category: long(101)}, code: errs.InvalidInput, fields: []string{"category"}},
		{name: "report group 41", in: ledger.AccountInput{Number: "6818", Name: "x", Type: "expense", ReportGroup: strings.Repeat("g", 41)}, code: errs.InvalidInput, fields: []string{"report_group"}},
	}
	for _, tc := range tests {
		a, replay, err := e.svc.CreateAccount(ctx, e.req("", tc.in), tc.in)
		if got := ledgertest.Code(err); got != tc.code {
			t.Errorf("%s: code %q, want %q (%v)", tc.name, got, tc.code, err)
			continue
		}
		if diff := cmp.Diff(tc.fields, chartErrFields(err)); diff != "" {
			t.Errorf("%s: detail fields (-want +got):\n%s", tc.name, diff)
		}
		if err != nil {
			continue
		}
		want := ledger.Account{Number: strings.TrimSpace(tc.in.Number), Name: strings.TrimSpace(tc.in.Name), Type: tc.in.Type,
			Category: tc.in.Category, ReportGroup: tc.in.ReportGroup, IsActive: true}
		if replay != nil || a.CreatedAt.IsZero() {
			t.Errorf("%s: replay %v, created_at %v", tc.name, replay, a.CreatedAt)
		}
		a.CreatedAt = want.CreatedAt
		if diff := cmp.Diff(want, a); diff != "" {
			t.Errorf("%s: account (-want +got):\n%s", tc.name, diff)
		}
	}
	// Only the four valid accounts were added to the 1,225 seeded ones.
	page, err := e.svc.Accounts(ctx, e.claims.TenantID, ledger.AccountFilter{Limit: 1})
	if err != nil || page.Total != 1225+4 {
		t.Fatalf("total %d, %v; want %d", page.Total, err, 1225+4)
	}
	// Duplicate of a created account.
	_, _, err = e.svc.CreateAccount(ctx, e.req("", nil), ledger.AccountInput{Number: "6816", Name: "again", Type: "expense"})
	if ledgertest.Code(err) != errs.AccountExists || errs.Status(ledgertest.Code(err)) != 409 {
		t.Fatalf("duplicate: %v, want 409 ACCOUNT_EXISTS", err)
	}
}

// TestCreatedAccountIsBookable: the chart cache is invalidated, so a new
// account can be booked on at once.
func TestCreatedAccountIsBookable(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	e.book(t, "2024-05-02", "warm the chart cache", ledgertest.Line("6815", "1800", "10.00", ""))
	_, _, err := e.svc.Book(ctx, e.req("", nil), ledger.Booking{BookingDate: "2024-05-03", Description: "Abo", Lines: []ledger.Line{ledgertest.Line("6816", "1800", "5.00", "")}}, "", "")
	if ledgertest.Code(err) != errs.InvalidInput {
		t.Fatalf("booking on a missing account: %v", err)
	}
	if _, _, err := e.svc.CreateAccount(ctx, e.req("", nil), ledger.AccountInput{Number: "6816", Name: "Software-Abos", Type: "expense"}); err != nil {
		t.Fatal(err)
	}
	e.book(t, "2024-05-03", "Abo", ledgertest.Line("6816", "1800", "5.00", "VSt19"))
}

func TestCreateAccountIdempotent(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	in := ledger.AccountInput{Number: "6816", Name: "Software-Abos", Type: "expense"}
	first, replay, err := e.svc.CreateAccount(ctx, e.req("k1", in), in)
	if err != nil || replay != nil {
		t.Fatalf("first: %v %v", replay, err)
	}
	_, replay, err = e.svc.CreateAccount(ctx, e.req("k1", in), in)
	if err != nil || replay == nil || replay.Status != 201 {
		t.Fatalf("repeat: replay %+v, %v; want the stored 201", replay, err)
	}
	var again ledger.Account
	if err := json.Unmarshal(replay.Body, &again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.CreatedAt.UTC(), again.CreatedAt.UTC()); diff != "" || again.Number != "6816" {
		t.Fatalf("replayed %+v, want %+v", again, first)
	}
	other := ledger.AccountInput{Number: "6817", Name: "Other", Type: "expense"}
	if _, _, err := e.svc.CreateAccount(ctx, e.req("k1", other), other); ledgertest.Code(err) != errs.IdempotencyKeyReused {
		t.Fatalf("same key, other body: %v, want IDEMPOTENCY_KEY_REUSED", err)
	}
	// The same key from another API key is another request.
	e2 := *e
	e2.claims = &auth.Claims{TenantID: e.claims.TenantID, KeyID: uuid.NewString(), Scopes: []string{"admin"}}
	if _, _, err := e2.svc.CreateAccount(ctx, e2.req("k1", in), in); ledgertest.Code(err) != errs.AccountExists {
		t.Fatalf("other key holder: %v, want ACCOUNT_EXISTS", err)
	}
}

func chartNumbers(accounts []ledger.Account) []string {
	return ledgertest.Strings(accounts, func(a ledger.Account) string { return a.Number })
}

func TestListAccounts(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	tenant := e.claims.TenantID
	tests := []struct {
		name    string
		f       ledger.AccountFilter
		code    string
		total   int
		numbers []string // nil: only count
	}{
		{name: "default page", f: ledger.AccountFilter{}, total: 1225},
		{name: "offset at the end", f: ledger.AccountFilter{Limit: 10, Offset: 1220}, total: 1225, numbers: []string{"9008", "9009", "9090", "9991", "9994"}},
		{name: "offset past the end", f: ledger.AccountFilter{Offset: 5000}, total: 1225, numbers: []string{}},
		{name: "number prefix", f: ledger.AccountFilter{Q: "160"}, total: 1, numbers: []string{"1600"}},
		{name: "number prefix 161", f: ledger.AccountFilter{Q: "161"}, total: 1, numbers: []string{"1610"}},
		{name: "name part, any case", f: ledger.AccountFilter{Q: "BÜROBEDARF"}, total: 1, numbers: []string{"6815"}},
		{name: "name part", f: ledger.AccountFilter{Q: "Nebenkasse"}, total: 2, numbers: []string{"1610", "1620"}},
		{name: "like wildcards are literal", f: ledger.AccountFilter{Q: "_"}, total: 0, numbers: []string{}},
		{name: "category", f: ledger.AccountFilter{Category: "aktiva b.iv kassenbestand, guthaben bei kreditinstituten und schecks", Limit: 3}, total: 17, numbers: []string{"1550", "1600", "1610"}},
		{name: "type", f: ledger.AccountFilter{Type: "equity", Q: "Saldenvorträge"}, total: 3, numbers: []string{"9000", "9008", "9009"}},
		{name: "q and type exclude", f: ledger.AccountFilter{Type: "asset", Q: "Bürobedarf"}, total: 0, numbers: []string{}},
		{name: "limit 501", f: ledger.AccountFilter{Limit: 501}, code: errs.InvalidInput},
		{name: "limit negative", f: ledger.AccountFilter{Limit: -1}, code: errs.InvalidInput},
		{name: "offset negative", f: ledger.AccountFilter{Offset: -1}, code: errs.InvalidInput},
		{name: "bad type", f: ledger.AccountFilter{Type: "income"}, code: errs.InvalidInput},
		{name: "q too long", f: ledger.AccountFilter{Q: strings.Repeat("x", 101)}, code: errs.InvalidInput},
		{name: "category too long", f: ledger.AccountFilter{Category: strings.Repeat("x", 101)}, code: errs.InvalidInput},
	}
	for _, tc := range tests {
		page, err := e.svc.Accounts(ctx, tenant, tc.f)
		if got := ledgertest.Code(err); got != tc.code {
			t.Errorf("%s: code %q, want %q (%v)", tc.name, got, tc.code, err)
			continue
		}
		if err != nil {
			continue
		}
		if page.Total != tc.total {
			t.Errorf("%s: total %d, want %d", tc.name, page.Total, tc.total)
		}
		if tc.numbers != nil {
			if diff := cmp.Diff(tc.numbers, chartNumbers(page.Accounts)); diff != "" {
				t.Errorf("%s: numbers (-want +got):\n%s", tc.name, diff)
			}
		}
	}
	page, err := e.svc.Accounts(ctx, tenant, ledger.AccountFilter{})
	if err != nil || len(page.Accounts) != 500 || page.Limit != 500 || page.Offset != 0 || page.Accounts[0].Number != "0050" {
		t.Fatalf("default page: %d accounts, limit %d, %v", len(page.Accounts), page.Limit, err)
	}
	// The listing is the seed.
	kasse := page.Accounts[0]
	for _, a := range page.Accounts {
		if a.Number == "1600" {
			kasse = a
		}
	}
	kasse.CreatedAt = kasse.CreatedAt.UTC()
	want := ledger.Account{Number: "1600", Name: "Kasse", Type: "asset", Category: "Aktiva B.IV Kassenbestand, Guthaben bei Kreditinstituten und Schecks",
		ReportGroup: "cash", IsActive: true, IsSystem: true, CreatedAt: kasse.CreatedAt}
	if diff := cmp.Diff(want, kasse); diff != "" {
		t.Errorf("1600 (-want +got):\n%s", diff)
	}
}

func TestSearchAccounts(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	hit := func(n, name, typ string) ledger.AccountHit {
		return ledger.AccountHit{Number: n, Name: name, Type: typ}
	}
	tests := []struct {
		name string
		f    ledger.AccountSearch
		code string
		want []ledger.AccountHit
	}{
		{name: "name, any case; names starting with q first", f: ledger.AccountSearch{Q: "KASSE"}, want: []ledger.AccountHit{
			hit("1600", "Kasse", "asset"), hit("9991", "Kassendifferenzen (Ertrag)", "revenue"), hit("9994", "Kassendifferenzen (Aufwand)", "expense"),
			hit("1369", "Forderungen gegenüber Krankenkassen aus Aufwendungsausgleichsgesetz", "asset"),
			hit("1610", "Nebenkasse 1", "asset"), hit("1620", "Nebenkasse 2", "asset"),
			hit("3011", "Rückstellungen für Zuschussverpflichtungen für Pensionskassen und Lebensversicherungen", "liability"),
			hit("6150", "Versorgungskassen", "expense")}},
		{name: "number prefix first, then names", f: ledger.AccountSearch{Q: "1800", Limit: 3}, want: []ledger.AccountHit{hit("1800", "Bank", "asset")}},
		{name: "prefix ranks before name", f: ledger.AccountSearch{Q: "Bank", Limit: 2}, want: []ledger.AccountHit{
			hit("1700", "Bank (Postbank)", "asset"), hit("1710", "Bank (Postbank 1)", "asset")}},
		{name: "type filter", f: ledger.AccountSearch{Q: "Porto", Type: "expense"}, want: []ledger.AccountHit{hit("6800", "Porto", "expense")}},
		{name: "type filter excludes", f: ledger.AccountSearch{Q: "Porto", Type: "revenue"}, want: []ledger.AccountHit{}},
		{name: "limit", f: ledger.AccountSearch{Q: "4", Limit: 2}, want: []ledger.AccountHit{
			hit("4000", "Umsatzerlöse (Zur freien Verfügung)", "revenue"), hit("4100", "Steuerfreie Umsätze § 4 Nr. 8 ff. UStG", "revenue")}},
		{name: "percent in a name", f: ledger.AccountSearch{Q: "19 % USt", Limit: 1}, want: []ledger.AccountHit{
			hit("3272", "Erhaltene, versteuerte Anzahlungen 19 % USt (Verbindlichkeiten)", "liability")}},
		{name: "like wildcards are literal", f: ledger.AccountSearch{Q: "1%"}, want: []ledger.AccountHit{}},
		{name: "underscore is literal", f: ledger.AccountSearch{Q: "1_0"}, want: []ledger.AccountHit{}},
		{name: "no match", f: ledger.AccountSearch{Q: "gibt es nicht"}, want: []ledger.AccountHit{}},
		{name: "q missing", f: ledger.AccountSearch{}, code: errs.InvalidInput},
		{name: "q blank", f: ledger.AccountSearch{Q: "  "}, code: errs.InvalidInput},
		{name: "q too long", f: ledger.AccountSearch{Q: strings.Repeat("a", 101)}, code: errs.InvalidInput},
		{name: "bad type", f: ledger.AccountSearch{Q: "a", Type: "assets"}, code: errs.InvalidInput},
		{name: "limit 101", f: ledger.AccountSearch{Q: "a", Limit: 101}, code: errs.InvalidInput},
	}
	for _, tc := range tests {
		hits, err := e.svc.SearchAccounts(ctx, e.claims.TenantID, tc.f)
		if got := ledgertest.Code(err); got != tc.code {
			t.Errorf("%s: code %q, want %q (%v)", tc.name, got, tc.code, err)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(tc.want, hits); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
	}
	hits, err := e.svc.SearchAccounts(ctx, e.claims.TenantID, ledger.AccountSearch{Q: "e"})
	if err != nil || len(hits) != ledger.DefaultSearchLimit {
		t.Fatalf("default limit: %d hits, %v", len(hits), err)
	}
}

// chartEntryView is what the entries test compares of an account entry.
type chartEntryView struct {
	Date, Side, Contra, Amount string
}

func TestAccountEntries(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	tenant := e.claims.TenantID
	e.book(t, "2024-01-10", "Kunde zahlt", ledgertest.Line("1800", "1200", "119.00", ""))
	e.book(t, "2024-02-05", "Bankgebühr", ledgertest.Line("6855", "1800", "10.00", ""))
	e.book(t, "2024-03-01", "Barverkauf", ledgertest.Line("1800", "4400", "119.00", "USt19"))
	e.book(t, "2024-03-02", "Fremd", ledgertest.Line("6815", "1600", "20.00", ""))

	type result struct {
		Entries              []chartEntryView
		Count                int64
		Debit, Credit, Saldo string
		StartDate, EndDate   string
		Limit, Offset        int
	}
	view := func(r *ledger.AccountEntries) result {
		out := result{Count: r.EntryCount, Debit: r.DebitTotal.StringFixed(2), Credit: r.CreditTotal.StringFixed(2),
			Saldo: r.Balance.StringFixed(2), Limit: r.Limit, Offset: r.Offset, Entries: []chartEntryView{}}
		if r.StartDate != nil {
			out.StartDate = *r.StartDate
		}
		if r.EndDate != nil {
			out.EndDate = *r.EndDate
		}
		for _, x := range r.Entries {
			out.Entries = append(out.Entries, chartEntryView{x.BookingDate, x.Side, x.ContraAccount, x.Amount.StringFixed(2)})
		}
		return out
	}
	all := []chartEntryView{{"2024-01-10", "debit", "1200", "119.00"}, {"2024-02-05", "credit", "6855", "10.00"},
		{"2024-03-01", "debit", "4400", "100.00"}, {"2024-03-01", "debit", "3806", "19.00"}}
	tests := []struct {
		name   string
		number string
		q      ledger.EntriesQuery
		code   string
		want   result
	}{
		{name: "everything", number: "1800", want: result{Entries: all, Count: 4, Debit: "238.00", Credit: "10.00", Saldo: "228.00", Limit: 200}},
		{name: "from February", number: "1800", q: ledger.EntriesQuery{StartDate: "2024-02-01"},
			want: result{Entries: all[1:], Count: 3, Debit: "119.00", Credit: "10.00", Saldo: "109.00", StartDate: "2024-02-01", Limit: 200}},
		{name: "one day", number: "1800", q: ledger.EntriesQuery{StartDate: "2024-02-05", EndDate: "2024-02-05"},
			want: result{Entries: all[1:2], Count: 1, Debit: "0.00", Credit: "10.00", Saldo: "-10.00", StartDate: "2024-02-05", EndDate: "2024-02-05", Limit: 200}},
		{name: "page: totals cover the range", number: "1800", q: ledger.EntriesQuery{Limit: 2, Offset: 1},
			want: result{Entries: all[1:3], Count: 4, Debit: "238.00", Credit: "10.00", Saldo: "228.00", Limit: 2, Offset: 1}},
		{name: "credit side", number: "4400", want: result{Entries: []chartEntryView{{"2024-03-01", "credit", "1800", "100.00"}}, Count: 1,
			Debit: "0.00", Credit: "100.00", Saldo: "-100.00", Limit: 200}},
		{name: "no entries", number: "1610", want: result{Entries: []chartEntryView{}, Count: 0, Debit: "0.00", Credit: "0.00", Saldo: "0.00", Limit: 200}},
		{name: "unknown account", number: "9999", code: errs.NotFound},
		{name: "not a number", number: "18x0", code: errs.NotFound},
		{name: "too long", number: "123456789", code: errs.NotFound},
		{name: "bad start", number: "1800", q: ledger.EntriesQuery{StartDate: "2024-02-30"}, code: errs.InvalidInput},
		{name: "bad end", number: "1800", q: ledger.EntriesQuery{EndDate: "01.02.2024"}, code: errs.InvalidInput},
		{name: "end before start", number: "1800", q: ledger.EntriesQuery{StartDate: "2024-02-02", EndDate: "2024-02-01"}, code: errs.InvalidInput},
		{name: "limit 1001", number: "1800", q: ledger.EntriesQuery{Limit: 1001}, code: errs.InvalidInput},
		{name: "offset negative", number: "1800", q: ledger.EntriesQuery{Offset: -1}, code: errs.InvalidInput},
	}
	for _, tc := range tests {
		res, err := e.svc.AccountEntries(ctx, tenant, tc.number, tc.q)
		if got := ledgertest.Code(err); got != tc.code {
			t.Errorf("%s: code %q, want %q (%v)", tc.name, got, tc.code, err)
			continue
		}
		if err != nil {
			continue
		}
		if diff := cmp.Diff(tc.want, view(res)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		if res.Account.Number != tc.number {
			t.Errorf("%s: account %+v", tc.name, res.Account)
		}
	}
	// An entry carries the full journal line.
	res, err := e.svc.AccountEntries(ctx, tenant, "1800", ledger.EntriesQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Entries[0]
	if x.ID == "" || x.JournalNumber != 1 || x.IntentID == "" || x.Description != "Kunde zahlt" || x.ProvenanceSummary.ActorKeyPrefix != "lgr_chart" {
		t.Fatalf("entry %+v", x)
	}
	// Another tenant has the same seeded account but none of the entries.
	other, err := e.svc.AccountEntries(ctx, uuid.NewString(), "1800", ledger.EntriesQuery{})
	if err != nil || other.EntryCount != 0 || len(other.Entries) != 0 {
		t.Fatalf("other tenant: %+v, %v", other, err)
	}
}

func chartTaxCodeNames(codes []ledger.TaxCode) []string {
	return ledgertest.Strings(codes, func(c ledger.TaxCode) string { return c.Code })
}

func TestTaxCodesAndUpdate(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	tenant := e.claims.TenantID
	all := []string{"AUS0", "IGE19", "IGE7", "IGL0", "RC19", "RC7", "STF0", "USt19", "USt7", "VSt19", "VSt7"}
	codes, err := e.svc.TaxCodes(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, chartTaxCodeNames(codes)); diff != "" {
		t.Fatalf("codes (-want +got):\n%s", diff)
	}
	patch := func(body string) (ledger.TaxCodePatch, error) { return ledger.ParseTaxCodePatch([]byte(body)) }
	tests := []struct {
		name, code, body string
		errCode          string
		fields           []string
		want             ledger.TaxCodeChanged
	}{
		{name: "label", code: "VSt19", body: `{"label":"Vorsteuer 19 % (Inland)"}`, want: ledger.TaxCodeChanged{Code: "VSt19", Label: "Vorsteuer 19 % (Inland)", IsActive: true}},
		{name: "same label again", code: "VSt19", body: `{"label":"Vorsteuer 19 % (Inland)"}`, errCode: errs.NoChanges},
		{name: "empty body", code: "VSt19", body: ``, errCode: errs.NoChanges},
		{name: "empty object", code: "VSt19", body: `{}`, errCode: errs.NoChanges},
		{name: "all equal", code: "USt19", body: `{"rate":19.00,"vat_account":"3806","self_assess_account":null,"is_active":true}`, errCode: errs.NoChanges},
		{name: "rate as text equal", code: "USt7", body: `{"rate":"7"}`, errCode: errs.NoChanges},
		{name: "unknown code", code: "USt16", body: `{"label":"x"}`, errCode: errs.TaxCodeNotFound},
		{name: "unknown code, empty body", code: "USt16", body: `{}`, errCode: errs.TaxCodeNotFound},
		{name: "malformed code", code: "a b", body: `{"label":"x"}`, errCode: errs.TaxCodeNotFound},
		{name: "codes are case-sensitive", code: "ust19", body: `{"label":"x"}`, errCode: errs.TaxCodeNotFound},
		{name: "missing vat account", code: "USt19", body: `{"vat_account":"3999"}`, errCode: errs.AccountNotFound, fields: []string{"vat_account"}},
		{name: "missing self-assess account", code: "RC19", body: `{"self_assess_account":"3999"}`, errCode: errs.AccountNotFound, fields: []string{"self_assess_account"}},
		{name: "self-assess on output code", code: "USt19", body: `{"self_assess_account":"3837"}`, errCode: errs.InvalidInput, fields: []string{"self_assess_account"}},
		{name: "rate on tax-free code", code: "IGL0", body: `{"rate":19}`, errCode: errs.InvalidInput, fields: []string{"rate"}},
		{name: "rate 100", code: "USt19", body: `{"rate":100}`, errCode: errs.InvalidInput, fields: []string{"rate"}},
		{name: "three decimals", code: "USt19", body: `{"rate":19.125}`, errCode: errs.InvalidInput, fields: []string{"rate"}},
		{name: "unknown field", code: "USt19", body: `{"kind":"input"}`, errCode: errs.InvalidInput, fields: []string{"kind"}},
		{name: "new rate and account", code: "USt7", body: `{"rate":5.5,"vat_account":"3800","description":null}`, want: ledger.TaxCodeChanged{Code: "USt7", Label: "Umsatzsteuer 7 %", IsActive: true}},
		{name: "remove self-assessment", code: "RC7", body: `{"self_assess_account":null}`, want: ledger.TaxCodeChanged{Code: "RC7", Label: "Steuerschuldnerschaft des Leistungsempfängers 7 % (§ 13b UStG)", IsActive: true}},
		{name: "deactivate", code: "VSt7", body: `{"is_active":false}`, want: ledger.TaxCodeChanged{Code: "VSt7", Label: "Vorsteuer 7 %", IsActive: false}},
		{name: "deactivate again", code: "VSt7", body: `{"is_active":false}`, errCode: errs.NoChanges},
	}
	for _, tc := range tests {
		p, err := patch(tc.body)
		var got ledger.TaxCodeChanged
		if err == nil {
			got, _, err = e.svc.UpdateTaxCode(ctx, e.req("", nil), tc.code, p)
		}
		if c := ledgertest.Code(err); c != tc.errCode {
			t.Errorf("%s: code %q, want %q (%v)", tc.name, c, tc.errCode, err)
			continue
		}
		if diff := cmp.Diff(tc.fields, chartErrFields(err)); diff != "" {
			t.Errorf("%s: detail fields (-want +got):\n%s", tc.name, diff)
		}
		if err == nil {
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
	}
	// Deactivated codes are listed only on request.
	active, err := e.svc.TaxCodes(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"AUS0", "IGE19", "IGE7", "IGL0", "RC19", "RC7", "STF0", "USt19", "USt7", "VSt19"}, chartTaxCodeNames(active)); diff != "" {
		t.Errorf("active codes (-want +got):\n%s", diff)
	}
	codes, err = e.svc.TaxCodes(ctx, tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, chartTaxCodeNames(codes)); diff != "" {
		t.Errorf("all codes (-want +got):\n%s", diff)
	}
	type stored struct {
		Rate, VAT  string
		Self, Desc *string
		Active     bool
	}
	got := map[string]stored{}
	for _, c := range codes {
		got[c.Code] = stored{c.Rate.StringFixed(2), c.VATAccount, c.SelfAssessAccount, c.Description, c.IsActive}
	}
	if diff := cmp.Diff(stored{"5.50", "3800", nil, nil, true}, got["USt7"]); diff != "" {
		t.Errorf("USt7 (-want +got):\n%s", diff)
	}
	if g := got["RC7"]; g.Self != nil {
		t.Errorf("RC7 still self-assesses to %s", *g.Self)
	}
	if g := got["VSt7"]; g.Active {
		t.Error("VSt7 still active")
	}
	// Postings see the change at once: VSt7 is inactive, USt7 books 5.5 % on 3800.
	_, _, err = e.svc.Book(ctx, e.req("", nil), ledger.Booking{BookingDate: "2024-06-01", Description: "Buch",
		Lines: []ledger.Line{ledgertest.Line("6820", "1800", "10.70", "VSt7")}}, "", "")
	if ledgertest.Code(err) != errs.InvalidInput || !strings.Contains(fmt.Sprint(errs.As(err).Details), "inactive") {
		t.Fatalf("inactive code: %v", err)
	}
	e.book(t, "2024-06-01", "Verkauf ermäßigt", ledgertest.Line("1800", "4300", "105.50", "USt7"))
	res, err := e.svc.AccountEntries(ctx, tenant, "3800", ledger.EntriesQuery{})
	if err != nil || res.CreditTotal.StringFixed(2) != "5.50" {
		t.Fatalf("tax on 3800: %+v, %v", res, err)
	}
}

func TestUpdateTaxCodeIdempotent(t *testing.T) {
	t.Parallel()
	e := newChartEnv(t)
	ctx := context.Background()
	body := `{"is_active":false}`
	p, err := ledger.ParseTaxCodePatch([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	r := ledger.Request{Claims: e.claims, IdempotencyKey: "p1", Body: []byte(body)}
	first, replay, err := e.svc.UpdateTaxCode(ctx, r, "IGL0", p)
	if err != nil || replay != nil {
		t.Fatalf("first: %v %v", replay, err)
	}
	// The retry replays instead of answering NO_CHANGES.
	_, replay, err = e.svc.UpdateTaxCode(ctx, r, "IGL0", p)
	if err != nil || replay == nil || replay.Status != 200 {
		t.Fatalf("retry: %+v %v", replay, err)
	}
	var again ledger.TaxCodeChanged
	if err := json.Unmarshal(replay.Body, &again); err != nil || again != first {
		t.Fatalf("replayed %+v (%v), want %+v", again, err, first)
	}
	// The same key on another code is another request.
	if _, _, err := e.svc.UpdateTaxCode(ctx, r, "AUS0", p); ledgertest.Code(err) != errs.IdempotencyKeyReused {
		t.Fatalf("same key, other code: %v", err)
	}
}

func TestParseTaxCodePatch(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	type view struct {
		Label, Desc, Rate, VAT, Self, Active string
	}
	opt := func(set bool, v string) string {
		if !set {
			return "-"
		}
		return v
	}
	optPtr := func(set bool, v *string) string {
		switch {
		case !set:
			return "-"
		case v == nil:
			return "null"
		}
		return *v
	}
	show := func(p ledger.TaxCodePatch) view {
		return view{opt(p.Label.Set, p.Label.Value), optPtr(p.Description.Set, p.Description.Value), opt(p.Rate.Set, p.Rate.Value.String()),
			opt(p.VATAccount.Set, p.VATAccount.Value), optPtr(p.SelfAssessAccount.Set, p.SelfAssessAccount.Value), opt(p.IsActive.Set, fmt.Sprint(p.IsActive.Value))}
	}
	none := view{"-", "-", "-", "-", "-", "-"}
	tests := []struct {
		body   string
		want   view
		fields []string
	}{
		{body: ``, want: none},
		{body: ` {} `, want: none},
		{body: `{"label":" Neu "}`, want: view{"Neu", "-", "-", "-", "-", "-"}},
		{body: `{"description":null}`, want: view{"-", "null", "-", "-", "-", "-"}},
		{body: `{"description":""}`, want: view{"-", "null", "-", "-", "-", "-"}},
		{body: `{"description":"Text"}`, want: view{"-", *str("Text"), "-", "-", "-", "-"}},
		{body: `{"rate":0}`, want: view{"-", "-", "0", "-", "-", "-"}},
		{body: `{"rate":99.99}`, want: view{"-", "-", "99.99", "-", "-", "-"}},
		{body: `{"rate":"16"}`, want: view{"-", "-", "16", "-", "-", "-"}},
		{body: `{"vat_account":"3806","self_assess_account":"3837"}`, want: view{"-", "-", "-", "3806", "3837", "-"}},
		{body: `{"self_assess_account":null,"is_active":false}`, want: view{"-", "-", "-", "-", "null", "false"}},
		{body: `null`, fields: []string{""}},
		{body: `[]`, fields: []string{""}},
		{body: `{"label":"x"} {}`, fields: []string{""}},
		{body: `{"label":`, fields: []string{""}},
		{body: `{"label":null}`, fields: []string{"label"}},
		{body: `{"label":""}`, fields: []string{"label"}},
		{body: `{"label":5}`, fields: []string{"label"}},
		{body: `{"label":"` + strings.Repeat("x", 101) + `"}`, fields: []string{"label"}},
		{body: `{"description":"` + strings.Repeat("x", 501) + `"}`, fields: []string{"description"}},
		{body: `{"description":7}`, fields: []string{"description"}},
		{body: `{"rate":null}`, fields: []string{"rate"}},
		{body: `{"rate":-1}`, fields: []string{"rate"}},
		{body: `{"rate":100}`, fields: []string{"rate"}},
		{body: `{"rate":1.001}`, fields: []string{"rate"}},
		{body: `{"rate":"abc"}`, fields: []string{"rate"}},
		{body: `{"vat_account":null}`, fields: []string{"vat_account"}},
		{body: `{"vat_account":""}`, fields: []string{"vat_account"}},
		{body: `{"vat_account":"123456789"}`, fields: []string{"vat_account"}},
		{body: `{"vat_account":3806}`, fields: []string{"vat_account"}},
		{body: `{"self_assess_account":"38x7"}`, fields: []string{"self_assess_account"}},
		{body: `{"is_active":null}`, fields: []string{"is_active"}},
		{body: `{"is_active":"true"}`, fields: []string{"is_active"}},
		{body: `{"code":"X","kind":"input"}`, fields: []string{"code", "kind"}},
		{body: `{"rate":-1,"label":""}`, fields: []string{"label", "rate"}},
	}
	for _, tc := range tests {
		p, err := ledger.ParseTaxCodePatch([]byte(tc.body))
		if tc.fields != nil {
			if ledgertest.Code(err) != errs.InvalidInput {
				t.Errorf("%s: %v, want INVALID_INPUT", tc.body, err)
			} else if diff := cmp.Diff(tc.fields, chartErrFields(err)); diff != "" {
				t.Errorf("%s: fields (-want +got):\n%s", tc.body, diff)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		if diff := cmp.Diff(tc.want, show(p)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.body, diff)
		}
	}
}

// TestApplyTaxCodePatch: Apply never changes its input.
func TestApplyTaxCodePatch(t *testing.T) {
	t.Parallel()
	var rc ledger.TaxCode
	for _, c := range skr04.TaxCodes() {
		if c.Code == "RC19" {
			rc = c
		}
	}
	p, err := ledger.ParseTaxCodePatch([]byte(`{"self_assess_account":"3835","description":"neu"}`))
	if err != nil {
		t.Fatal(err)
	}
	next, err := p.Apply(rc)
	if err != nil {
		t.Fatal(err)
	}
	if *rc.SelfAssessAccount != "3837" || *rc.Description == "neu" || *next.SelfAssessAccount != "3835" || *next.Description != "neu" {
		t.Fatalf("cur %+v, next %+v", rc, next)
	}
	if p, _ := ledger.ParseTaxCodePatch([]byte(`{"self_assess_account":"1407"}`)); true {
		if _, err := p.Apply(rc); ledgertest.Code(err) != errs.InvalidInput {
			t.Fatalf("self-assess equal to vat account: %v", err)
		}
	}
}
