package allinone_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
)

// journalLines are a journal entry's events as "debit credit amount".
func journalLines(p *platform, token, intentID string) []string {
	var out []string
	for _, e := range p.must(200, "GET", "/v1/journal/"+intentID, token, nil).list("entries") {
		out = append(out, fmt.Sprintf("%s %s %v", e["account_debit"], e["account_credit"], e["amount"]))
	}
	slices.Sort(out)
	return out
}

// TestBankMatchGroup: match groups through the gateway against the real
// ledger: every refusal with its code and status (and nothing posted), a
// Skonto payment whose clearing booking corrects the output VAT, two part
// payments of one invoice, a USD invoice paid in EUR with the FX gain on
// 4840, a supplier paid less Skonto received (input VAT corrected), a
// replay under the same Idempotency-Key posting once, the events with
// the allocations, and unmatch of one member reopening the whole group.
func TestBankMatchGroup(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Sammelzahlung GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read", "bank:read", "bank:write")
	reader := p.apiKey(admin, "bank:read")
	giro := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")
	paypal := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "Paypal", "iban": "DE02120300000000202051", "account_number": "1810"}).str("id")
	usdAccount := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "USD-Konto", "iban": "DE12500105170648489890", "account_number": "1820", "currency": "USD"}).str("id")

	skonto := p.book(w, bookingBody("2026-03-02", "Ausgangsrechnung RE-MG-1", bline("1200", "4400", "119.00", "tax_code", "USt19", "external_reference", "RE-MG-1"))).IntentID
	parts := p.book(w, bookingBody("2026-03-02", "Ausgangsrechnung RE-MG-2", bline("1200", "4400", "50.00", "external_reference", "RE-MG-2"))).IntentID
	bill := p.book(w, bookingBody("2026-03-03", "Eingangsrechnung ER-MG-1", bline("6815", "3300", "238.00", "tax_code", "VSt19", "external_reference", "ER-MG-1"))).IntentID
	usd := p.book(w, bookingBody("2026-03-04", "Invoice INV-USD", bline("1200", "4120", "900.00", "fx_currency", "USD", "fx_amount", json.Number("1000.00"),
		"external_reference", "INV-USD"))).IntentID

	tx := map[string]string{}
	imp := func(account string, items map[string]string, currency string) {
		var rows []any
		for ref, amount := range items {
			rows = append(rows, map[string]any{"tx_date": "2026-03-10", "amount": json.Number(amount), "reference": ref, "bank_reference": "B-" + ref, "currency": currency})
		}
		p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": account, "transactions": rows})
	}
	imp(giro, map[string]string{"Skonto": "116.62", "Teil A": "30.00", "Teil B": "20.00", "USD": "950.00", "Lieferant": "-233.24", "Raus": "-10.00"}, "EUR")
	imp(paypal, map[string]string{"Paypal": "5.00"}, "EUR")
	imp(usdAccount, map[string]string{"Dollar": "100.00"}, "USD")
	for _, t := range p.must(200, "GET", "/v1/bank-transactions?limit=500", w, nil).list("transactions") {
		tx[t["reference"].(string)] = t["id"].(string)
	}
	eventually(t, 20*time.Second, func() error {
		if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1`, tenant); n != 4 {
			return fmt.Errorf("%d open items", n)
		}
		return nil
	})
	if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2 AND currency = 'USD' AND original_doc_amount = 1000
		AND original_amount = 900`, tenant, usd); n != 1 {
		t.Fatal("the USD invoice is not projected with its document amount")
	}
	if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2
		AND tax_split = '[{"tax_code": "USt19", "gross": 119.00, "tax": 19.00, "vat_account": "3806"}]'::jsonb`, tenant, skonto); n != 1 {
		t.Fatal("the taxed invoice has no tax composition")
	}

	var mu sync.Mutex
	var events []string
	sub, err := p.nc.Subscribe(bankv1.EventsFilter, func(m *nats.Msg) {
		var ev bankv1.TransactionReconciled
		if json.Unmarshal(m.Data, &ev) != nil || ev.TenantID != tenant || ev.MatchGroupID == "" {
			return
		}
		s := fmt.Sprintf("%s %s %s", m.Subject[len("evt.bank.v1."):], ev.Mode, ev.BankTransactionID)
		for _, a := range ev.Allocations {
			s += fmt.Sprintf(" %s:%s:%s", a.OpenItemAccount, a.Amount.StringFixed(2), a.Currency)
		}
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	const path = "/v1/bank-match-groups"
	alloc := func(intent, kind, account, amount string, settled ...string) map[string]any {
		a := map[string]any{"intent_id": intent, "candidate_kind": kind, "open_item_account": account, "allocated_bank_amount": json.Number(amount)}
		if len(settled) > 0 {
			a["settled_document_amount"] = json.Number(settled[0])
		}
		return a
	}
	recv := func(intent, amount string, settled ...string) map[string]any {
		return alloc(intent, "open_receivable", "1200", amount, settled...)
	}
	adj := func(account, side, amount string) map[string]any {
		return map[string]any{"account_number": account, "posting_side": side, "amount": json.Number(amount)}
	}
	group := func(txs []string, allocs []any, adjs ...any) map[string]any {
		ids := make([]any, len(txs))
		for i, ref := range txs {
			ids[i] = tx[ref]
			if tx[ref] == "" {
				ids[i] = ref // an id of no transaction
			}
		}
		b := map[string]any{"bank_transaction_ids": ids, "allocations": allocs}
		if adjs != nil {
			b["adjustments"] = adjs
		}
		return b
	}
	skontoBody := group([]string{"Skonto"}, []any{recv(skonto, "116.62", "119.00")}, adj("4730", "debit", "2.38"))
	bankIntents := func() int {
		return count(t, p.owner, `SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND source = 'bank'`, tenant)
	}

	// Refusals change nothing.
	p.expectError(403, "FORBIDDEN", "POST", path, reader, skontoBody)
	p.expectInvalid([]string{"allocations[0].allocated_bank_amount"}, "POST", path, w, group([]string{"Skonto"}, []any{recv(skonto, "116.625")}))
	p.expectInvalid([]string{"bank_transaction_ids[1]"}, "POST", path, w, group([]string{"Skonto", "Skonto"}, []any{recv(skonto, "116.62")}))
	p.expectError(400, "TARGET_KIND_UNSUPPORTED", "POST", path, w, group([]string{"Skonto"}, []any{alloc(skonto, "bank_booking", "1200", "116.62")}))
	p.expectError(404, "NOT_FOUND", "POST", path, w, group([]string{"Skonto", uuid.NewString()}, []any{recv(skonto, "116.62")}))
	p.expectError(404, "NOT_FOUND", "POST", path, w, group([]string{"Skonto"}, []any{recv(uuid.NewString(), "116.62")}))
	p.expectError(400, "BANK_TX_MIXED_BANK_ACCOUNTS", "POST", path, w, group([]string{"Skonto", "Paypal"}, []any{recv(skonto, "121.62")}))
	p.expectError(400, "DIRECTION_MISMATCH", "POST", path, w, group([]string{"Skonto", "Raus"}, []any{recv(skonto, "126.62")}))
	p.expectError(400, "DIRECTION_MISMATCH", "POST", path, w, group([]string{"Raus"}, []any{alloc(skonto, "open_liability", "1200", "10.00")}))
	p.expectError(422, "UNSUPPORTED_SETTLEMENT_CURRENCY", "POST", path, w, group([]string{"Dollar"}, []any{recv(skonto, "100.00")}))
	p.expectError(400, "MIXED_SETTLEMENT_CURRENCY", "POST", path, w, group([]string{"USD"}, []any{recv(usd, "900.00", "900.00"), recv(parts, "50.00")}))
	p.expectError(400, "SETTLED_DOCUMENT_AMOUNT_REQUIRED", "POST", path, w, group([]string{"USD"}, []any{recv(usd, "950.00")}))
	p.expectError(400, "SETTLEMENT_EXCEEDS_OPEN_AMOUNT", "POST", path, w, group([]string{"USD"}, []any{recv(usd, "950.00", "1000.01")}))
	p.expectError(400, "SETTLEMENT_EXCEEDS_OPEN_AMOUNT", "POST", path, w, group([]string{"Teil A", "Teil B"}, []any{recv(parts, "50.00", "50.01")}))
	p.expectError(404, "ADJUSTMENT_ACCOUNT_NOT_FOUND", "POST", path, w, group([]string{"Skonto"}, []any{recv(skonto, "116.62", "119.00")}, adj("1234567", "debit", "2.38")))
	notBalanced := p.expectError(400, "GROUP_NOT_BALANCED", "POST", path, w, group([]string{"Skonto"}, []any{recv(skonto, "116.62", "119.00")}, adj("4730", "debit", "2.00")))
	// Debits 116.62 + 1.68 + 0.32 (the 2.00 split), credits 119.00.
	for _, figure := range []string{"118.62", "119.00", "0.38"} {
		if msg := notBalanced.str("error"); !strings.Contains(msg, figure) {
			t.Fatalf("the message does not name %s: %s", figure, msg)
		}
	}
	p.expectError(400, "GROUP_NOT_BALANCED", "POST", path, w, group([]string{"Skonto"}, []any{recv(skonto, "100.00", "119.00")}, adj("4730", "debit", "2.38")))
	if n := bankIntents(); n != 0 || count(t, p.owner, `SELECT count(*) FROM bank.transactions WHERE tenant_id = $1 AND status <> 'open'`, tenant) != 0 {
		t.Fatalf("a refusal posted %d intents or changed a transaction", n)
	}

	// Skonto: 116.62 settle 119.00; the 2.38 discount is 2.00 net on 4730
	// and 0.38 output VAT taken back on 3806. A replay posts once.
	key := []string{"Idempotency-Key", "mg-skonto"}
	r := p.must(201, "POST", path, w, skontoBody, key...)
	if r.Body["ok"] != true || r.str("mode") != "match_group" || r.str("match_group_id") == "" || r.str("intent_id") == "" {
		t.Fatalf("created %s", r.Raw)
	}
	if got, want := journalLines(p, w, r.str("intent_id")), []string{"1800 1200 116.62", "3806 1200 0.38", "4730 1200 2"}; !slices.Equal(got, want) {
		t.Fatalf("Skonto clearing %v, want %v", got, want)
	}
	again := p.must(201, "POST", path, w, skontoBody, key...)
	if string(again.Raw) != string(r.Raw) || bankIntents() != 1 {
		t.Fatalf("replay %s, first %s, %d bank intents", again.Raw, r.Raw, bankIntents())
	}
	p.expectError(409, "CONFLICT", "POST", path, w, skontoBody)
	if m := p.must(200, "GET", "/v1/bank-transactions/"+tx["Skonto"], reader, nil); m.str("status") != "reconciled" || m.str("match_group_id") != r.str("match_group_id") {
		t.Fatalf("member %s", m.Raw)
	}
	// Projected, the clearing booking is explained by the group and opens
	// no item (its discount lines credit the receivable).
	eventually(t, 20*time.Second, func() error {
		if n := count(t, p.owner, `SELECT count(*) FROM bank.ledger_bookings WHERE tenant_id = $1 AND intent_id = $2 AND explained_by = $3`,
			tenant, r.str("intent_id"), tx["Skonto"]); n != 1 {
			return fmt.Errorf("clearing booking explained: %d", n)
		}
		return nil
	})
	if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2`, tenant, r.str("intent_id")); n != 0 {
		t.Fatalf("the clearing booking opened %d items", n)
	}
	vat := p.must(200, "GET", "/v1/accounts/3806/entries", w, nil)
	if !strings.Contains(string(vat.Raw), r.str("intent_id")) {
		t.Fatalf("3806 shows no VAT correction: %s", vat.Raw)
	}

	// One invoice, two transfers.
	two := p.must(201, "POST", path, w, group([]string{"Teil A", "Teil B"}, []any{recv(parts, "50.00")}))
	if got, want := journalLines(p, w, two.str("intent_id")), []string{"1800 1200 20", "1800 1200 30"}; !slices.Equal(got, want) {
		t.Fatalf("two transfers %v, want %v", got, want)
	}

	// USD 1000.00 carried at 900.00 paid with 950.00: a 50.00 FX gain.
	fx := p.must(201, "POST", path, w, group([]string{"USD"}, []any{recv(usd, "950.00", "1000.00")}))
	if got, want := journalLines(p, w, fx.str("intent_id")), []string{"1800 1200 900", "1800 4840 50"}; !slices.Equal(got, want) {
		t.Fatalf("FX clearing %v, want %v", got, want)
	}

	// The supplier paid less 2 % Skonto received: 4.00 on 5730, 0.76
	// input VAT (1406) corrected.
	out := p.must(201, "POST", path, w, group([]string{"Lieferant"}, []any{alloc(bill, "open_liability", "3300", "233.24", "238.00")}, adj("5730", "credit", "4.76")))
	if got, want := journalLines(p, w, out.str("intent_id")), []string{"3300 1406 0.76", "3300 1800 233.24", "3300 5730 4"}; !slices.Equal(got, want) {
		t.Fatalf("payable clearing %v, want %v", got, want)
	}
	if bankIntents() != 4 {
		t.Fatalf("%d bank intents", bankIntents())
	}

	// Unmatch one part payment: the whole group is undone, reversed once.
	u := p.must(200, "POST", "/v1/bank-transactions/"+tx["Teil B"]+"/unmatch", w, nil)
	if u.str("mode") != "match_group" || u.str("status") != "open" || u.str("reversal_intent_id") == "" {
		t.Fatalf("unmatched %s", u.Raw)
	}
	for _, ref := range []string{"Teil A", "Teil B"} {
		if s := p.must(200, "GET", "/v1/bank-transactions/"+tx[ref], reader, nil).str("status"); s != "open" {
			t.Fatalf("%s is %s", ref, s)
		}
	}
	if n := count(t, p.owner, `SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND reverses = $2`, tenant, two.str("intent_id")); n != 1 {
		t.Fatalf("%d reversals", n)
	}
	if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2 AND allocated_amount = 0`, tenant, parts); n != 1 {
		t.Fatal("the invoice is not open again")
	}
	p.expectError(409, "CONFLICT", "POST", "/v1/bank-transactions/"+tx["Teil A"]+"/unmatch", w, nil)
	p.verifyOK(w, -1)

	eventually(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		want := []string{
			"transaction_reconciled match_group " + tx["Skonto"] + " 1200:119.00:EUR",
			"transaction_reconciled match_group " + tx["Teil A"] + " 1200:50.00:EUR",
			"transaction_reconciled match_group " + tx["Teil B"] + " 1200:50.00:EUR",
			"transaction_reconciled match_group " + tx["USD"] + " 1200:1000.00:USD",
			"transaction_reconciled match_group " + tx["Lieferant"] + " 3300:238.00:EUR",
			"transaction_unmatched match_group " + tx["Teil A"] + " 1200:50.00:EUR",
			"transaction_unmatched match_group " + tx["Teil B"] + " 1200:50.00:EUR",
		}
		got := slices.Sorted(slices.Values(events))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("events %q, want %q", got, want)
		}
		return nil
	})
}
