package natsrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/natsrpc"
)

// The report tests run the reporting service as it is deployed (see
// startReporting), the balances consumer retrying after 50ms. The ledger,
// identity and periods services are fakes answering their subjects from
// memory. rptLedger is also the test's journal: it
// numbers postings and hands out the intent_posted events, which the test
// publishes (or withholds, to make a gap).

// rptChart is the SKR04 excerpt of the tests.
var rptChart = []reporting.Account{
	{Number: "1200", Name: "Forderungen aus Lieferungen und Leistungen", Type: "asset"},
	{Number: "1406", Name: "Abziehbare Vorsteuer 19 %", Type: "asset"},
	{Number: "1800", Name: "Bank", Type: "asset"},
	{Number: "2000", Name: "Festkapital", Type: "equity"},
	{Number: "2900", Name: "Gezeichnetes Kapital", Type: "equity"},
	{Number: "3300", Name: "Verbindlichkeiten aus Lieferungen und Leistungen", Type: "liability"},
	{Number: "3806", Name: "Umsatzsteuer 19 %", Type: "liability"},
	{Number: "4400", Name: "Erlöse 19 % USt", Type: "revenue"},
	{Number: "5400", Name: "Wareneingang 19 % Vorsteuer", Type: "expense"},
	{Number: "6020", Name: "Gehälter", Type: "expense"},
	{Number: "6310", Name: "Miete (unbewegliche Wirtschaftsgüter)", Type: "expense"},
	{Number: "6815", Name: "Bürobedarf", Type: "expense"},
	{Number: "7100", Name: "Sonstige Zinsen und ähnliche Erträge", Type: "revenue"},
}

// reportingEvent is an event the fake ledger hands out.
type reportingEvent = ledgerv1.IntentPosted

// rptLine is one journal event of a posting.
type rptLine struct{ debit, credit, amount string }

// rptLedger fakes the ledger's chart, tax codes and journal feed.
type rptLedger struct {
	mu       sync.Mutex
	journal  map[string][]ledgerv1.JournalLine // tenant → lines in number order
	chart    []reporting.Account
	maxPage  int // the feed's page size cap (the real ledger: 5000)
	feeds    int // feed requests served
	accounts int // account list requests served
	claims   []*auth.Claims
}

// post appends a posting to the tenant's journal and returns its event.
func (l *rptLedger) post(tenant, date, period string, lines ...rptLine) ledgerv1.IntentPosted {
	l.mu.Lock()
	defer l.mu.Unlock()
	if period == "" {
		period = date[:7]
	}
	first := int64(len(l.journal[tenant])) + 1
	ev := ledgerv1.IntentPosted{TenantID: tenant, IntentID: uuid.NewString(), BookingDate: date, Period: period,
		Description: "test", Source: "manual", FirstNumber: first, LastNumber: first + int64(len(lines)) - 1, CapturedAt: time.Now().UTC()}
	for i, ln := range lines {
		e := ledgerv1.EventLine{ID: uuid.NewString(), JournalNumber: first + int64(i), AccountDebit: ln.debit, AccountCredit: ln.credit, Amount: ln.amount, Description: "test"}
		ev.Events = append(ev.Events, e)
		l.journal[tenant] = append(l.journal[tenant], ledgerv1.JournalLine{EventLine: e, IntentID: ev.IntentID,
			BookingDate: date, Period: period, Source: "manual", CapturedAt: ev.CapturedAt})
	}
	return ev
}

func (l *rptLedger) routes() []natsx.Route {
	return []natsx.Route{
		fake(ledgerv1.SubjectJournalFeed, func(ctx context.Context, req *natsx.Request) (any, error) {
			var r ledgerv1.JournalFeedRequest
			if err := natsx.Decode(req.Body, &r); err != nil {
				return nil, err
			}
			if r.Limit < 1 || r.Limit > 5000 {
				return nil, errs.Invalid("limit must be 1..5000")
			}
			// The tenant is the one of reporting's signed principal.
			tenant, err := natsx.Tenant(ctx, r.TenantID)
			if err != nil {
				return nil, err
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			l.feeds++
			lines, ok := l.journal[tenant]
			if !ok {
				return nil, errs.NotFoundf("tenant has no journal")
			}
			limit := min(r.Limit, l.maxPage)
			feed := ledgerv1.JournalFeed{Lines: []ledgerv1.JournalLine{}, Last: r.After, Head: int64(len(lines))}
			for _, ln := range lines {
				if ln.JournalNumber > r.After && len(feed.Lines) < limit {
					feed.Lines = append(feed.Lines, ln)
					feed.Last = ln.JournalNumber
				}
			}
			return feed, nil
		}),
		fake(ledgerv1.SubjectAccountsList, func(ctx context.Context, req *natsx.Request) (any, error) {
			c := auth.FromContext(ctx)
			if c == nil {
				return nil, errs.E(errs.Unauthenticated, "no claims")
			}
			limit, _ := strconv.Atoi(req.Query.Get("limit"))
			offset, _ := strconv.Atoi(req.Query.Get("offset"))
			if limit < 1 || limit > 500 {
				return nil, errs.Invalid("limit must be 1..500")
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			l.accounts++
			l.claims = append(l.claims, c)
			page := []reporting.Account{}
			for i := offset; i < len(l.chart) && i < offset+limit; i++ {
				page = append(page, l.chart[i])
			}
			return map[string]any{"accounts": page, "total": len(l.chart), "limit": limit, "offset": offset}, nil
		}),
		fake(ledgerv1.SubjectTaxCodesList, func(context.Context, *natsx.Request) (any, error) {
			return json.RawMessage(`{"tax_codes":[{"code":"USt19","label":"Umsatzsteuer 19 %","kind":"output","rate":19.00,"datev_bu_key":"3","is_active":true},
			{"code":"VSt7","label":"Vorsteuer 7 %","kind":"input","rate":7,"datev_bu_key":"8","is_active":false}]}`), nil
		}),
	}
}

// rptIdentity fakes identity's tenant master data.
type rptIdentity struct {
	mu    sync.Mutex
	start map[string]int // tenant → fiscal year start month
	calls int
}

func (i *rptIdentity) route() natsx.Route {
	return fake(identityv1.SubjectTenantGet, func(ctx context.Context, _ *natsx.Request) (any, error) {
		c := auth.FromContext(ctx)
		if c == nil {
			return nil, errs.E(errs.Unauthenticated, "no claims")
		}
		i.mu.Lock()
		defer i.mu.Unlock()
		i.calls++
		m := i.start[c.TenantID]
		if m == 0 {
			m = 1
		}
		return identityv1.Tenant{ID: c.TenantID, CompanyName: "Test GmbH", FiscalYearStartMonth: m, IsActive: true}, nil
	})
}

// rptHarness is a running reporting service with its fakes.
type rptHarness struct {
	*rpc
	ledger   *rptLedger
	identity *rptIdentity
}

func newRptHarness(t *testing.T) *rptHarness {
	t.Helper()
	h := &rptHarness{ledger: &rptLedger{journal: map[string][]ledgerv1.JournalLine{}, chart: rptChart, maxPage: 5000},
		identity: &rptIdentity{start: map[string]int{}}}
	periods := fake(periodsv1.SubjectStatus, func(context.Context, *natsx.Request) (any, error) {
		return periodsv1.StatusReply{Statuses: map[string]string{}}, nil
	})
	h.rpc = startReporting(t, append(h.ledger.routes(), h.identity.route(), periods), func(_ daemon.Env, _ *reporting.Service, p *daemon.Parts) {
		consumer(t, p, natsrpc.BalancesConsumer, false).RetryDelay = 50 * time.Millisecond
	})
	return h
}

// publish sends events to the LEDGER stream as the ledger's outbox relay
// does; dup makes a redelivery (a second message with its own id).
func (h *rptHarness) publish(t *testing.T, evs ...ledgerv1.IntentPosted) {
	t.Helper()
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.JS.Publish(context.Background(), ledgerv1.EventIntentPosted, b, jetstream.WithMsgID(uuid.NewString())); err != nil {
			t.Fatal(err)
		}
	}
}

// settle waits until the consumer has acknowledged everything published.
func (h *rptHarness) settle(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	// Settled means every message in the stream is acknowledged: "nothing
	// pending" alone also holds in the moment before a delivery.
	for time.Now().Before(deadline) {
		stream, err := h.JS.Stream(ctx, ledgerv1.StreamEvents)
		if err == nil {
			sinfo, serr := stream.Info(ctx)
			c, cerr := h.JS.Consumer(ctx, ledgerv1.StreamEvents, natsrpc.BalancesConsumer)
			if serr == nil && cerr == nil {
				info, err := c.Info(ctx)
				if err == nil && info.AckFloor.Stream >= sinfo.State.LastSeq && info.NumAckPending == 0 && info.NumPending == 0 {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the balances consumer did not settle")
}

// head is the tenant's projection head.
func (h *rptHarness) head(t *testing.T, tenant string) int64 {
	t.Helper()
	var n int64
	err := h.Pool.QueryRow(context.Background(), "SELECT coalesce((SELECT last_number FROM reporting.tenant_heads WHERE tenant_id = $1), 0)", tenant).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// balances returns the tenant's projection rows as "account period debit credit".
func (h *rptHarness) balances(t *testing.T, tenant string) []string {
	t.Helper()
	rows, err := h.Pool.Query(context.Background(), `SELECT account || ' ' || period || ' ' || debit::text || ' ' || credit::text
		FROM reporting.balances WHERE tenant_id = $1 ORDER BY account, period`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	// The yearly sums agree with the months.
	rows, err = h.Pool.Query(context.Background(), `SELECT coalesce(y.account, m.account) || ' ' || coalesce(y.year, m.year)
		FROM reporting.balance_years y
		FULL JOIN (SELECT account, left(period, 4)::int AS year, sum(debit) AS debit, sum(credit) AS credit
			FROM reporting.balances WHERE tenant_id = $1 GROUP BY 1, 2) m ON m.account = y.account AND m.year = y.year
		WHERE (y.tenant_id = $1 OR y.tenant_id IS NULL)
			AND (y.debit IS DISTINCT FROM m.debit OR y.credit IS DISTINCT FROM m.credit)`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("yearly sums differ from the months for %v", bad)
	}
	return out
}

// journalBalances is what the projection must hold: the journal summed per
// account and period.
func (h *rptHarness) journalBalances(tenant string) []string {
	h.ledger.mu.Lock()
	defer h.ledger.mu.Unlock()
	type key struct{ account, period string }
	sums := map[key][2]money.Amount{}
	for _, l := range h.ledger.journal[tenant] {
		a := money.MustParse(l.Amount)
		d := sums[key{l.AccountDebit, l.Period}]
		d[0] = d[0].Add(a)
		sums[key{l.AccountDebit, l.Period}] = d
		c := sums[key{l.AccountCredit, l.Period}]
		c[1] = c[1].Add(a)
		sums[key{l.AccountCredit, l.Period}] = c
	}
	var out []string
	for k, v := range sums {
		out = append(out, fmt.Sprintf("%s %s %s %s", k.account, k.period, v[0].StringFixed(2), v[1].StringFixed(2)))
	}
	slices.Sort(out)
	return out
}

// claims are an API key's claims for tenant.
func rptClaims(tenant string) *auth.Claims {
	return &auth.Claims{TenantID: tenant, KeyID: uuid.NewString(), KeyPrefix: "lgr_test", Scopes: []string{"auswertungen:read"}, Surface: "api"}
}

// report asks for a report over NATS as the gateway does and decodes a
// success into out; it returns the reply.
func (h *rptHarness) report(t *testing.T, tenant string, query url.Values, out any) *natsx.Reply {
	t.Helper()
	ctx := context.Background()
	if tenant != "" {
		ctx = auth.WithClaims(ctx, rptClaims(tenant))
	}
	r, err := h.client.Do(ctx, "reporting.v1.report", &natsx.Request{Query: query})
	if err != nil {
		t.Fatal(err)
	}
	if r.ErrCode == "" && out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			t.Fatalf("decode %s: %v", r.Body, err)
		}
	}
	return r
}
