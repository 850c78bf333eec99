package contract_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ledgerplatform/ledger/contracts"
	"github.com/ledgerplatform/ledger/gateway/contract"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// FuzzBoundary sends arbitrary bodies and query strings to the booking
// operation of the real document. The boundary must never panic, must
// refuse only with INVALID_INPUT, and what it lets through must be strict
// JSON whose every string is text: valid UTF-8 without NUL.
func FuzzBoundary(f *testing.F) {
	doc, err := contract.Load(contracts.OpenAPI)
	if err != nil {
		f.Fatal(err)
	}
	post := doc.Operation("POST", "/v1/bookings")
	list := doc.Operation("GET", "/v1/journal")
	good := `{"booking_date":"2025-03-14","description":"Büromaterial","lines":[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]}`
	for _, seed := range []struct{ body, query string }{
		{good, "limit=10&startDate=2025-01-01"},
		{strings.Replace(good, "Büromaterial", `B\u0000ro`, 1), "search=a%00b"},
		{strings.Replace(good, "Büromaterial", "B\xffro", 1), "search=%ff"},
		{strings.Replace(good, "Büromaterial", `B\ud800ro`, 1), "search=%ED%A0%80"},
		{strings.Replace(good, "119.00", "1e400", 1), "limit=99999999999999999999"},
		{strings.Replace(good, "119.00", "-0.001", 1), "limit=1&limit=abc"},
		{strings.Replace(good, "2025-03-14", "0000-01-01", 1), "startDate=0000-01-01"},
		{strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), "offset=-1"},
		{strings.Repeat("[", 5000), "account=1800&account=1200"},
		{`{"booking_date":"2025-03-14","booking_date":"2025-03-15"}`, "Search=x"},
		{good + " {}", ""},
	} {
		f.Add(seed.body, seed.query)
	}
	f.Fuzz(func(t *testing.T, body, query string) {
		err := post.CheckRequest(nil, nil, "application/json", []byte(body))
		if err == nil {
			var v any
			if !json.Valid([]byte(body)) || json.Unmarshal([]byte(body), &v) != nil {
				t.Fatalf("accepted a body that is not JSON: %q", body)
			}
			if !utf8.ValidString(body) || strings.Contains(body, `\u0000`) || strings.ContainsRune(body, 0) {
				t.Fatalf("accepted a body with a NUL or invalid UTF-8: %q", body)
			}
		} else if e := errs.As(err); e == nil || e.Code != errs.InvalidInput {
			t.Fatalf("body %q: refused with %v, want INVALID_INPUT", body, err)
		}
		q, perr := url.ParseQuery(query)
		if perr != nil {
			return
		}
		err = list.CheckRequest(nil, q, "", nil)
		if err == nil {
			for name, vs := range q {
				if len(vs) != 1 || !utf8.ValidString(vs[0]) || strings.ContainsRune(vs[0], 0) {
					t.Fatalf("accepted query %s=%q", name, vs)
				}
			}
		} else if e := errs.As(err); e == nil || e.Code != errs.InvalidInput {
			t.Fatalf("query %q: refused with %v, want INVALID_INPUT", query, err)
		}
	})
}
