package allinone_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// getSuggestions reads GET /v1/bank-transactions/suggestions, whose
// answer is an array.
func (p *platform) getSuggestions(token, query string) []map[string]any {
	p.t.Helper()
	req, err := http.NewRequest("GET", p.base+"/v1/bank-transactions/suggestions?"+query, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out []map[string]any
	if res.StatusCode != 200 || json.Unmarshal(raw, &out) != nil {
		p.t.Fatalf("suggestions?%s: %d %s", query, res.StatusCode, raw)
	}
	return out
}

// TestBankSuggestions: a transaction whose remittance names an invoice
// booked on 1200 gets that intent as its top suggestion, with reasons; an
// invoice of the same amount comes second, a payable of the same amount
// not at all (money in settles no payable), and a booking already on the
// bank's account answers a transaction of its amount. Then the query's
// rules, scopes and the MCP tool.
func TestBankSuggestions(t *testing.T) {
	p, admin, _ := setup(t, nil, "Vorschlag GmbH")
	w := p.apiKey(admin, "journal:write", "bank:read", "bank:write")
	giro := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")

	invoice := p.book(w, bookingBody("2026-03-02", "Ausgangsrechnung RE-2026-042 Müller KG",
		bline("1200", "4400", "238.00", "tax_code", "USt19", "external_reference", "RE-2026-042")))
	other := p.book(w, bookingBody("2026-03-03", "Ausgangsrechnung RE-2026-043 Schmidt GmbH",
		bline("1200", "4400", "238.00", "tax_code", "USt19", "external_reference", "RE-2026-043")))
	p.book(w, bookingBody("2026-03-03", "Eingangsrechnung ER-77 Druckerei",
		bline("6815", "3300", "238.00", "tax_code", "VSt19", "external_reference", "ER-77")))
	fee := p.book(w, bookingBody("2026-03-31", "Kontoführungsgebühr März", bline("6855", "1800", "9.90")))

	p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": giro, "transactions": []any{
		map[string]any{"tx_date": "2026-03-10", "amount": json.Number("238.00"), "counterparty_name": "MUELLER KG",
			"counterparty_iban": "DE44 5001 0517 5407 3249 31", "reference": "re 2026 042 vielen Dank", "bank_reference": "B-1"},
		map[string]any{"tx_date": "2026-03-31", "amount": json.Number("-9.90"), "reference": "Entgelt Kontofuehrung", "bank_reference": "B-2"},
	}})
	txs := p.must(200, "GET", "/v1/bank-transactions?bank_account_id="+giro, w, nil).list("transactions")
	ids := map[string]string{}
	for _, tx := range txs {
		ids[tx["bank_reference"].(string)] = tx["id"].(string)
	}

	// The open items arrive through the ledger's events.
	var ss []map[string]any
	eventually(t, 20*time.Second, func() error {
		ss = p.getSuggestions(w, "bank_account_id="+giro)
		if len(ss) != 3 {
			return fmt.Errorf("%d suggestions: %v", len(ss), ss)
		}
		return nil
	})
	top := ss[0]
	if top["bank_transaction_id"] != ids["B-1"] || top["ledger_intent_id"] != invoice.IntentID || top["candidate_kind"] != "open_receivable" ||
		top["open_item_account"] != "1200" || top["match_score"] != 1.0 || top["ledger_amount"] != 238.0 || top["ledger_date"] != "2026-03-02" ||
		top["ledger_description"] != "Ausgangsrechnung RE-2026-042 Müller KG" {
		t.Fatalf("top suggestion %v", top)
	}
	reasons := fmt.Sprint(top["match_reasons"])
	for _, want := range []string{"amount matches the open receivable on 1200 exactly (238.00 EUR)", "invoice number RE-2026-042 appears in the payment reference",
		"counterparty MUELLER KG appears", "Paid 8 days after the invoice date"} {
		if !strings.Contains(reasons, want) {
			t.Fatalf("reasons %s lack %q", reasons, want)
		}
	}
	// Equal scores in booking order: the other invoice of the amount, then
	// the fee booking (exact and on the same day).
	if s := ss[2]; s["bank_transaction_id"] != ids["B-2"] || s["ledger_intent_id"] != fee.IntentID || s["candidate_kind"] != "bank_booking" ||
		s["open_item_account"] != nil || s["ledger_amount"] != -9.9 || s["match_score"] != 0.55 {
		t.Fatalf("second %v", s)
	}
	if s := ss[1]; s["bank_transaction_id"] != ids["B-1"] || s["ledger_intent_id"] != other.IntentID || s["match_score"] != 0.55 {
		t.Fatalf("third %v", s)
	}

	if got := p.getSuggestions(w, "bank_account_id="+giro+"&limit=1&period=2026-03"); len(got) != 1 || got[0]["ledger_intent_id"] != invoice.IntentID {
		t.Fatalf("limit 1: %v", got)
	}
	if got := p.getSuggestions(w, "bank_account_id="+giro+"&period=2026-02"); len(got) != 0 {
		t.Fatalf("February: %v", got)
	}
	reader, _ := p.newKey(admin, "bank:read")
	if got := p.getSuggestions(reader, "bank_account_id="+giro); len(got) != 3 {
		t.Fatalf("bank:read: %d", len(got))
	}
	journal, _ := p.newKey(admin, "journal:read")
	p.expectError(403, "FORBIDDEN", "GET", "/v1/bank-transactions/suggestions?bank_account_id="+giro, journal, nil)
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/bank-transactions/suggestions", w, nil)
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/bank-transactions/suggestions?bank_account_id="+giro+"&period=2026-13", w, nil)
	p.expectError(400, "INVALID_INPUT", "GET", "/v1/bank-transactions/suggestions?bank_account_id="+giro+"&limit=1001", w, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-transactions/suggestions?bank_account_id=0b7c7f0e-8d1a-4a53-9d2e-4f1a2b3c4d5e", w, nil)
	otherKey, _ := p.newTenant("Fremde Vorschlag GmbH")
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-transactions/suggestions?bank_account_id="+giro, otherKey, nil)

	// The MCP tool answers the same.
	r := p.mcpCall(t, reader, 1, "tools/call", map[string]any{"name": "suggest_bank_matches", "arguments": map[string]any{"bank_account_id": giro, "limit": 1}})
	res, _ := r.Body["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if r.Status != 200 || res["isError"] == true || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), invoice.IntentID) {
		t.Fatalf("MCP: %d %s", r.Status, r.Raw)
	}
}
