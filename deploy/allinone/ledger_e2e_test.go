package allinone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/rpc"
)

// ---- helpers of the ledger end-to-end tests ----

// bookingBody is a POST /v1/bookings body.
func bookingBody(date, desc string, lines ...map[string]any) map[string]any {
	if lines == nil {
		lines = []map[string]any{}
	}
	return map[string]any{"booking_date": date, "description": desc, "lines": lines}
}

// bline is one booking line; amount is sent as an exact JSON number.
// extra holds further field/value pairs.
func bline(debit, credit, amount string, extra ...any) map[string]any {
	l := map[string]any{"account_debit": debit, "account_credit": credit, "amount": json.Number(amount)}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i].(string)] = extra[i+1]
	}
	return l
}

// decodeJSON decodes a response body into v, numbers kept exact.
func decodeJSON(t testing.TB, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// keysOf lists the top-level fields of a JSON object, sorted.
func keysOf(t testing.TB, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	decodeJSON(t, raw, &m)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func wantKeys(t testing.TB, what string, raw []byte, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := keysOf(t, raw); !slices.Equal(got, want) {
		t.Fatalf("%s: fields %v, want %v: %s", what, got, want, raw)
	}
}

// detailFields lists the field of every detail of an error response.
func detailFields(t testing.TB, r resp) []string {
	t.Helper()
	var b struct {
		Details []struct {
			Field string `json:"field"`
		} `json:"details"`
	}
	decodeJSON(t, r.Raw, &b)
	out := []string{}
	for _, d := range b.Details {
		out = append(out, d.Field)
	}
	slices.Sort(out)
	return out
}

// sameFields compares detail fields as sets: the boundary names every
// problem it finds, in no promised order.
func sameFields(got, want []string) bool {
	want = slices.Clone(want)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// expectInvalid asserts 400 INVALID_INPUT whose details name exactly fields.
func (p *platform) expectInvalid(fields []string, method, path, token string, body any, headers ...string) resp {
	p.t.Helper()
	r := p.expectError(400, "INVALID_INPUT", method, path, token, body, headers...)
	if got := detailFields(p.t, r); !sameFields(got, fields) {
		p.t.Fatalf("%s %s: detail fields %q, want %q: %s", method, path, got, fields, r.Raw)
	}
	return r
}

type postedBody struct {
	IntentID   string `json:"intent_id"`
	EventCount int    `json:"event_count"`
	DocumentID string `json:"document_id"`
}

// book posts a booking that must succeed.
func (p *platform) book(token string, body any, headers ...string) postedBody {
	p.t.Helper()
	r := p.must(201, "POST", "/v1/bookings", token, body, headers...)
	var out postedBody
	decodeJSON(p.t, r.Raw, &out)
	if out.IntentID == "" || out.EventCount < 1 {
		p.t.Fatalf("booking answered %s", r.Raw)
	}
	return out
}

// intentHead is what an intent and each of its entries show alike.
type intentHead struct {
	IntentID    string `json:"intent_id"`
	BookingDate string `json:"booking_date"`
	Description string `json:"description"`
	Source      string `json:"source"`
}

// entryLine is the booking line an entry books.
type entryLine struct {
	AccountDebit  string      `json:"account_debit"`
	AccountCredit string      `json:"account_credit"`
	Amount        json.Number `json:"amount"`
	TaxCode       *string     `json:"tax_code"`
}

// entryBody is a journal entry as far as the tests read it; the optional
// fields are read where they are tested.
type entryBody struct {
	intentHead
	entryLine
	JournalNumber int64  `json:"journal_number"`
	Hash          string `json:"hash"`
	// Provenance holds surface, channel and actor, each with its label.
	Provenance map[string]string `json:"provenance_summary"`
}

// intentLinks are an intent's reversal links.
type intentLinks struct {
	Reverses      *string `json:"reverses"`
	ReversedBy    *string `json:"reversed_by"`
	LinkedIntents []struct {
		IntentID string `json:"intent_id"`
		Relation string `json:"relation"`
	} `json:"linked_intents"`
}

type intentBody struct {
	intentHead
	Category   string      `json:"category"`
	DocumentID *string     `json:"document_id"`
	Entries    []entryBody `json:"entries"`
	intentLinks
	// Summary holds event_count, total_amount, total_debit, total_credit
	// and balanced.
	Summary map[string]any `json:"summary"`
}

// getJSON fetches path, which must answer 200, into a T.
func getJSON[T any](p *platform, token, path string) T {
	p.t.Helper()
	var out T
	decodeJSON(p.t, p.must(200, "GET", path, token, nil).Raw, &out)
	return out
}

func (p *platform) intent(token, id string) intentBody {
	p.t.Helper()
	return getJSON[intentBody](p, token, "/v1/journal/"+id)
}

type journalPage struct {
	Entries []entryBody `json:"entries"`
	Limit   int         `json:"limit"`
	Offset  int         `json:"offset"`
}

func (p *platform) journal(token, query string) journalPage {
	p.t.Helper()
	return getJSON[journalPage](p, token, "/v1/journal?"+query)
}

// summarySig is an intent's summary as "events amount/debit/credit balanced".
func summarySig(s map[string]any) string {
	return fmt.Sprintf("%v %v/%v/%v %v", s["event_count"], s["total_amount"], s["total_debit"], s["total_credit"], s["balanced"])
}

// entrySig is an entry reduced to what a test compares.
func entrySig(e entryBody) string {
	tc := ""
	if e.TaxCode != nil {
		tc = *e.TaxCode
	}
	return fmt.Sprintf("%s>%s %s %s", e.AccountDebit, e.AccountCredit, e.Amount, tc)
}

func entrySigs(es []entryBody) []string { return sigsOf(es, entrySig) }

type verifyBody struct {
	OK          bool   `json:"ok"`
	Events      int64  `json:"events"`
	HeadHash    string `json:"head_hash"`
	FirstBroken *int64 `json:"first_broken_journal_number"`
	Reason      string `json:"reason"`
}

func (p *platform) verify(token string) verifyBody {
	p.t.Helper()
	return getJSON[verifyBody](p, token, "/v1/journal/verify")
}

// rpc sends an internal command of a service that does not exist yet, as
// the service as would: under its own signed principal for the tenant the
// command names (its tenant_id), which the body no longer carries.
func (p *platform) rpc(as, subject string, in, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		return err
	}
	tenant, _ := body["tenant_id"].(string)
	delete(body, "tenant_id")
	return p.bus.Client(p.t, as).Call(rpc.ForTenant(ctx, tenant), subject, nil, body, out)
}

// setLock sets a period's lock state as the periods service will.
func (p *platform) setLock(tenant, period, status string) {
	p.t.Helper()
	var out map[string]any
	if err := p.rpc("periods", ledgerv1.SubjectSetPeriodLock, ledgerv1.SetPeriodLock{TenantID: tenant, Period: period, Status: status, LockedBy: "e2e"}, &out); err != nil {
		p.t.Fatalf("set lock %s %s: %v", period, status, err)
	}
	if out["ok"] != true || out["status"] != status {
		p.t.Fatalf("set lock answered %v", out)
	}
}

// part is one part of a multipart body; file parts have a filename.
type part struct {
	name, filename, contentType string
	content                     []byte
}

func fileField(filename, contentType string, content []byte) part {
	return part{name: "file", filename: filename, contentType: contentType, content: content}
}

func textField(name, value string) part { return part{name: name, content: []byte(value)} }

// multipartBody encodes parts and returns the body and its Content-Type.
func multipartBody(t testing.TB, parts ...part) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, pt := range parts {
		h := textproto.MIMEHeader{"Content-Disposition": {fmt.Sprintf(`form-data; name="%s"`, pt.name)}}
		if pt.filename != "" || pt.contentType != "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, pt.name, pt.filename))
		}
		if pt.contentType != "" {
			h.Set("Content-Type", pt.contentType)
		}
		if w, err := mw.CreatePart(h); err != nil {
			t.Fatal(err)
		} else {
			w.Write(pt.content)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// upload posts a multipart body.
func (p *platform) upload(status int, path, token string, parts ...part) resp {
	p.t.Helper()
	body, ct := multipartBody(p.t, parts...)
	return p.must(status, "POST", path, token, body, "Content-Type", ct)
}

// send is call for goroutines: it reports transport errors instead of
// failing the test from a goroutine that is not the test's.
func (p *platform) send(method, path, token string, body any, headers ...string) (resp, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return resp{}, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		return resp{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{}, err
	}
	r := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			return r, fmt.Errorf("response is not JSON: %s", raw)
		}
	}
	return r, nil
}

// sameJSON reports whether two JSON documents are equal as values (a
// replayed response comes back from jsonb, in its key order).
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	decodeJSON(t, a, &x)
	decodeJSON(t, b, &y)
	return reflect.DeepEqual(x, y)
}

// ledgerSnapshot describes everything a tenant's ledger holds, so a test
// can show that refused requests changed nothing.
func ledgerSnapshot(t testing.TB, p *platform, tenant string) string {
	t.Helper()
	var s strings.Builder
	for _, table := range []string{"journal_events", "intents", "idempotency_keys", "documents", "review_items", "period_locks", "accounts"} {
		fmt.Fprintf(&s, "%s=%d ", table, count(t, p.owner, "SELECT count(*) FROM ledger."+table+" WHERE tenant_id = $1", tenant))
	}
	var extra string
	if err := p.owner.QueryRow(context.Background(), `SELECT
			COALESCE((SELECT string_agg(row_to_json(t)::text, ',' ORDER BY code) FROM ledger.tax_codes t WHERE tenant_id = $1), '') ||
			COALESCE((SELECT string_agg(row_to_json(r)::text, ',' ORDER BY id) FROM ledger.review_items r WHERE tenant_id = $1), '') ||
			COALESCE((SELECT last_number::text || encode(last_hash, 'hex') FROM ledger.journal_heads WHERE tenant_id = $1), '')`, tenant).Scan(&extra); err != nil {
		t.Fatal(err)
	}
	return s.String() + extra
}

// ---- the journal ----

// TestLedgerJournal walks the journal routes: posting, the hand-computed
// tax split, the listing and its filters, one intent, reversal and its
// links both ways, and the hash chain.
func TestLedgerJournal(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Journal GmbH")
	w, ro := p.apiKey(admin, "journal:write", "journal:read"), p.apiKey(admin, "journal:read")

	// The hand-computed example: 119.00 gross with VSt19 on 6815/1800 is
	// 100.00 net on 6815/1800 and 19.00 input VAT on 1406/1800.
	r := p.must(201, "POST", "/v1/bookings", w, bookingBody("2025-03-15", "Büromaterial März", bline("6815", "1800", "119.00", "tax_code", "VSt19")))
	wantKeys(t, "booking", r.Raw, "intent_id", "event_count")
	var first postedBody
	decodeJSON(t, r.Raw, &first)
	if first.EventCount != 2 {
		t.Fatalf("taxed line: event_count %d, want 2", first.EventCount)
	}
	d := p.intent(ro, first.IntentID)
	if got, want := entrySigs(d.Entries), []string{"6815>1800 100.00 VSt19", "1406>1800 19.00 VSt19"}; !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if d.IntentID != first.IntentID || d.BookingDate != "2025-03-15" || d.Description != "Büromaterial März" || d.Source != "api" ||
		summarySig(d.Summary) != "2 119.00/119.00/119.00 true" || d.LinkedIntents == nil || len(d.LinkedIntents) != 0 || d.Reverses != nil || d.ReversedBy != nil {
		t.Fatalf("intent %+v", d)
	}
	for i, e := range d.Entries {
		pv := e.Provenance
		if e.JournalNumber != int64(i+1) || e.IntentID != first.IntentID || e.BookingDate != "2025-03-15" || e.Description != "Büromaterial März" ||
			e.Source != "api" || len(e.Hash) != 64 || pv["surface"] != "api" || pv["surface_label"] != "REST API" || pv["channel"] != "rest" ||
			pv["channel_label"] != "Direct booking" || pv["actor_type"] != "api_key" || pv["actor_key_prefix"] == "" || !strings.HasPrefix(w, pv["actor_key_prefix"]) ||
			!strings.Contains(pv["actor_display"], pv["actor_key_prefix"]) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}

	// More bookings for the filters; one with two lines, external
	// references, foreign currency and custom metadata.
	rent := p.book(w, bookingBody("2025-04-02", "Miete April", bline("6310", "1800", "1000.00", "external_reference", "RE-2025-001")))
	pay := p.book(w, bookingBody("2025-05-10", "Kunde zahlt", bline("1800", "1200", "500", "external_reference", "RE-2025-002",
		"fx_currency", "USD", "fx_amount", json.Number("545.123456"), "custom_metadata", map[string]any{"order": "A-17"}),
		bline("6855", "1800", "2.50", "description", "Bankgebühr")))
	if pay.EventCount != 2 {
		t.Fatalf("two untaxed lines: %+v", pay)
	}

	all := p.journal(ro, "")
	if all.Limit != 200 || all.Offset != 0 || len(all.Entries) != 5 {
		t.Fatalf("journal default page: limit %d offset %d, %d entries", all.Limit, all.Offset, len(all.Entries))
	}
	raw := p.must(200, "GET", "/v1/journal", ro, nil).Raw
	wantKeys(t, "journal", raw, "entries", "limit", "offset")
	var rawEntries struct {
		Entries []json.RawMessage `json:"entries"`
	}
	decodeJSON(t, raw, &rawEntries)
	for _, e := range rawEntries.Entries {
		for _, f := range []string{"id", "journal_number", "booking_date", "account_debit", "account_credit", "amount", "description", "source",
			"intent_id", "fx_currency", "fx_amount", "external_reference", "custom_metadata", "provenance_summary"} {
			if !slices.Contains(keysOf(t, e), f) {
				t.Fatalf("journal entry lacks %s: %s", f, e)
			}
		}
	}
	for i, e := range all.Entries {
		if e.JournalNumber != int64(i+1) {
			t.Fatalf("journal order: entry %d has number %d", i, e.JournalNumber)
		}
	}
	var optional struct {
		Entries []struct {
			FXCurrency        *string         `json:"fx_currency"`
			FXAmount          *json.Number    `json:"fx_amount"`
			ExternalReference *string         `json:"external_reference"`
			CustomMetadata    json.RawMessage `json:"custom_metadata"`
		} `json:"entries"`
	}
	decodeJSON(t, raw, &optional)
	payEntry, pay3 := all.Entries[3], optional.Entries[3]
	if pay3.FXCurrency == nil || *pay3.FXCurrency != "USD" || pay3.FXAmount == nil || *pay3.FXAmount != "545.123456" ||
		pay3.ExternalReference == nil || *pay3.ExternalReference != "RE-2025-002" || string(pay3.CustomMetadata) != `{"order":"A-17"}` ||
		payEntry.Description != "Kunde zahlt" || all.Entries[4].Description != "Bankgebühr" || optional.Entries[0].ExternalReference != nil {
		t.Fatalf("optional fields: %+v %+v / %+v", payEntry, pay3, all.Entries[4])
	}

	intentsOf := func(pg journalPage) []string {
		out := []string{}
		for _, e := range pg.Entries {
			if !slices.Contains(out, e.IntentID) {
				out = append(out, e.IntentID)
			}
		}
		return out
	}
	filters := []struct {
		query string
		want  []string
	}{
		{"account=6310", []string{rent.IntentID}},
		{"account=1800", []string{first.IntentID, rent.IntentID, pay.IntentID}},
		{"startDate=2025-04-01&endDate=2025-04-30", []string{rent.IntentID}},
		{"startDate=2025-04-02", []string{rent.IntentID, pay.IntentID}},
		{"endDate=2025-04-01", []string{first.IntentID}},
		{"search=MIETE", []string{rent.IntentID}},
		{"search=1200", []string{pay.IntentID}},
		{"search=RE-2025", []string{rent.IntentID, pay.IntentID}},
		{"search=" + url.QueryEscape("%"), []string{}},
		{"externalReference=RE-2025-001", []string{rent.IntentID}},
		{"externalReference=RE-2025", []string{}},
		{"account=6310&startDate=2025-05-01", []string{}},
	}
	for _, f := range filters {
		if got := intentsOf(p.journal(ro, f.query)); !slices.Equal(got, f.want) {
			t.Errorf("journal?%s: intents %v, want %v", f.query, got, f.want)
		}
	}
	if pg := p.journal(ro, "limit=2&offset=1"); pg.Limit != 2 || pg.Offset != 1 || len(pg.Entries) != 2 || pg.Entries[0].JournalNumber != 2 {
		t.Fatalf("journal page limit=2 offset=1: %+v", pg)
	}
	if pg := p.journal(ro, "limit=1000"); pg.Limit != 1000 || len(pg.Entries) != 5 {
		t.Fatalf("journal limit=1000: limit %d, %d entries", pg.Limit, len(pg.Entries))
	}
	p.expectInvalid([]string{"limit"}, "GET", "/v1/journal?limit=1001", ro, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/journal?limit=0", ro, nil)
	p.expectInvalid([]string{"offset"}, "GET", "/v1/journal?offset=-1", ro, nil)
	p.expectInvalid([]string{"startDate"}, "GET", "/v1/journal?startDate=2025-02-30", ro, nil)
	p.expectInvalid([]string{"endDate"}, "GET", "/v1/journal?startDate=2025-05-01&endDate=2025-04-01", ro, nil)
	p.expectInvalid([]string{"account"}, "GET", "/v1/journal?account=abc", ro, nil)

	// Reversal: a mirror image, linked both ways.
	r = p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": first.IntentID, "reason": "falsch gebucht"})
	wantKeys(t, "reversal", r.Raw, "reversal_intent_id", "original_intent_id", "event_count")
	var rev struct {
		ReversalIntentID string `json:"reversal_intent_id"`
		OriginalIntentID string `json:"original_intent_id"`
		EventCount       int    `json:"event_count"`
	}
	decodeJSON(t, r.Raw, &rev)
	if rev.OriginalIntentID != first.IntentID || rev.EventCount != 2 || rev.ReversalIntentID == "" {
		t.Fatalf("reversal %+v", rev)
	}
	orig := p.intent(ro, first.IntentID)
	if orig.ReversedBy == nil || *orig.ReversedBy != rev.ReversalIntentID || len(orig.LinkedIntents) != 1 ||
		orig.LinkedIntents[0].IntentID != rev.ReversalIntentID || orig.LinkedIntents[0].Relation != "reversed_by" {
		t.Fatalf("original after reversal: %+v", orig)
	}
	mirror := p.intent(ro, rev.ReversalIntentID)
	if mirror.Reverses == nil || *mirror.Reverses != first.IntentID || len(mirror.LinkedIntents) != 1 ||
		mirror.LinkedIntents[0].IntentID != first.IntentID || mirror.LinkedIntents[0].Relation != "reverses" ||
		mirror.Source != "reversal" || mirror.BookingDate != "2025-03-15" || mirror.Description != "Storno: Büromaterial März (falsch gebucht)" {
		t.Fatalf("reversal intent: %+v", mirror)
	}
	if got, want := entrySigs(mirror.Entries), []string{"1800>6815 100.00 VSt19", "1800>1406 19.00 VSt19"}; !slices.Equal(got, want) {
		t.Fatalf("reversal entries %v, want %v", got, want)
	}
	if pv := mirror.Entries[0].Provenance; pv["channel"] != "reversal" || pv["channel_label"] != "Reversal" {
		t.Fatalf("reversal provenance %+v", pv)
	}
	// A reversal may be dated elsewhere.
	r = p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": rent.IntentID, "booking_date": "2025-06-30"})
	var rev2 struct {
		ReversalIntentID string `json:"reversal_intent_id"`
	}
	decodeJSON(t, r.Raw, &rev2)
	if d := p.intent(ro, rev2.ReversalIntentID); d.BookingDate != "2025-06-30" || d.Description != "Storno: Miete April" {
		t.Fatalf("dated reversal %+v", d)
	}
	p.expectError(409, "ALREADY_REVERSED", "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": first.IntentID})
	p.expectError(409, "CANNOT_REVERSE_REVERSAL", "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": rev.ReversalIntentID})
	unknown := "00000000-0000-4000-8000-000000000000"
	p.expectError(404, "NOT_FOUND", "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": unknown})
	p.expectError(404, "NOT_FOUND", "GET", "/v1/journal/"+unknown, ro, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/journal/not-a-uuid", ro, nil)
	p.expectInvalid([]string{"intent_id"}, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": "x"})
	p.expectInvalid([]string{"booking_date"}, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": pay.IntentID, "booking_date": "2025-02-29"})

	// Account entries with their totals.
	r = p.must(200, "GET", "/v1/accounts/1800/entries?startDate=2025-01-01&endDate=2025-12-31", ro, nil)
	var acc struct {
		Account struct {
			Number string `json:"number"`
			Name   string `json:"name"`
		} `json:"account"`
		Entries []struct {
			entryBody
			Side          string `json:"side"`
			ContraAccount string `json:"contra_account"`
		} `json:"entries"`
		EntryCount  int         `json:"entry_count"`
		DebitTotal  json.Number `json:"debit_total"`
		CreditTotal json.Number `json:"credit_total"`
		Balance     json.Number `json:"balance"`
		StartDate   string      `json:"start_date"`
		EndDate     string      `json:"end_date"`
		Limit       int         `json:"limit"`
	}
	decodeJSON(t, r.Raw, &acc)
	// 1800: credit 100+19+1000+2.50, debit 500 + reversal 119 + 1000.
	if acc.Account.Number != "1800" || acc.Account.Name != "Bank" || acc.EntryCount != 8 || len(acc.Entries) != 8 ||
		acc.DebitTotal != "1619.00" || acc.CreditTotal != "1121.50" || acc.Balance != "497.50" ||
		acc.StartDate != "2025-01-01" || acc.EndDate != "2025-12-31" || acc.Limit != 200 {
		t.Fatalf("account entries: %s", r.Raw)
	}
	if e := acc.Entries[0]; e.Side != "credit" || e.ContraAccount != "6815" {
		t.Fatalf("first 1800 entry seen from 1800: %+v", e)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/accounts/99999/entries", ro, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/accounts/1800/entries?limit=1001", ro, nil)

	// The chain holds.
	v := p.verify(ro)
	if !v.OK || v.Events != 8 || len(v.HeadHash) != 64 || v.FirstBroken != nil {
		t.Fatalf("verify %+v", v)
	}
	wantKeys(t, "verify", p.must(200, "GET", "/v1/journal/verify", ro, nil).Raw, "ok", "events", "head_hash",
		"full", "started_from", "recomputed_events", "checkpoints")
	// full=true recomputes every event; no checkpoint was signed yet.
	full := p.must(200, "GET", "/v1/journal/verify?full=true", ro, nil).Body
	if full["ok"] != true || full["full"] != true || full["recomputed_events"] != float64(8) || full["started_from"] != nil {
		t.Fatalf("verify full=true: %v", full)
	}
	p.expectInvalid([]string{"full"}, "GET", "/v1/journal/verify?full=yes", ro, nil)
	p.wantCount(5, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1", tenant)
}

// TestLedgerIntentPostedEvent: a posting's event reaches JetStream within
// 2 s with every line.
func TestLedgerIntentPostedEvent(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Event GmbH")
	msgs := make(chan []byte, 64)
	sub, err := p.nc.Subscribe(ledgerv1.EventIntentPosted, func(m *nats.Msg) { msgs <- m.Data })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	posted := p.book(admin, bookingBody("2025-07-01", "Wareneinkauf und Erlös",
		bline("6815", "3300", "119.00", "tax_code", "VSt19"),
		bline("1200", "4400", "238.00", "tax_code", "USt19"),
		bline("6855", "1800", "1.00", "external_reference", "BANK-1")))
	deadline := time.After(2*time.Second - time.Since(start))
	for {
		select {
		case data := <-msgs:
			var ev ledgerv1.IntentPosted
			if err := json.Unmarshal(data, &ev); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			if ev.IntentID != posted.IntentID {
				continue
			}
			var got []string
			for _, l := range ev.Events {
				tc := ""
				if l.TaxCode != nil {
					tc = *l.TaxCode
				}
				got = append(got, fmt.Sprintf("%d %s>%s %s %s", l.JournalNumber, l.AccountDebit, l.AccountCredit, l.Amount, tc))
			}
			want := []string{"1 6815>3300 100.00 VSt19", "2 1406>3300 19.00 VSt19", "3 1200>4400 200.00 USt19", "4 1200>3806 38.00 USt19", "5 6855>1800 1.00 "}
			if !slices.Equal(got, want) || ev.TenantID != tenant || ev.BookingDate != "2025-07-01" || ev.Source != "api" ||
				ev.FirstNumber != 1 || ev.LastNumber != 5 || ev.Description != "Wareneinkauf und Erlös" || ev.CapturedAt.IsZero() ||
				ev.Period != "2025-07" || ev.Events[4].ExternalReference == nil || *ev.Events[4].ExternalReference != "BANK-1" || ev.Events[0].ExternalReference != nil {
				t.Fatalf("event %+v\nlines %v, want %v", ev, got, want)
			}
			t.Logf("intent_posted after %v", time.Since(start))
			return
		case <-deadline:
			t.Fatalf("no intent_posted event for %s within 2 s", posted.IntentID)
		}
	}
}
