package allinone_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
)

// reconcileSetup is a tenant with a bank account on 1800, an outgoing
// invoice (receivable 119.00), an incoming one (payable 238.00) and a
// booking already on 1800 (20.00), all projected into the bank's open
// items, and the bank transactions that pay them, by reference.
type reconcileSetup struct {
	p                   *platform
	w, reader, tenant   string
	admin               string
	giro                string
	invoice, bill, cash string
	tx                  map[string]string // reference -> transaction id
}

func newReconcileSetup(t *testing.T, company string) *reconcileSetup {
	p, admin, tenant := setup(t, nil, company)
	s := &reconcileSetup{p: p, tenant: tenant, admin: admin, tx: map[string]string{}}
	s.w = p.apiKey(admin, "journal:write", "journal:read", "bank:read", "bank:write")
	s.reader = p.apiKey(admin, "bank:read")
	s.giro = p.must(201, "POST", "/v1/bank-accounts", s.w, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")
	s.invoice = p.book(s.w, bookingBody("2026-03-02", "Ausgangsrechnung RE-2026-001 Müller KG",
		bline("1200", "4400", "119.00", "tax_code", "USt19", "external_reference", "RE-2026-001"))).IntentID
	s.bill = p.book(s.w, bookingBody("2026-03-03", "Eingangsrechnung Werbeagentur", bline("6815", "3300", "238.00", "tax_code", "VSt19"))).IntentID
	s.cash = p.book(s.w, bookingBody("2026-03-09", "Einzahlung Kasse", bline("1800", "1600", "20.00"))).IntentID
	var items []any
	for ref, amount := range map[string]string{"RE-2026-001": "119.00", "Werbeagentur": "-238.00", "Einzahlung": "20.00",
		"Rueckbuchung": "-5.00", "Zu viel": "1000.00", "Teil A": "19.00", "Teil B": "-19.00", "Parken": "-4.50"} {
		items = append(items, map[string]any{"tx_date": "2026-03-10", "amount": json.Number(amount), "reference": ref, "bank_reference": "B-" + ref})
	}
	p.must(201, "POST", "/v1/bank-transactions", s.w, map[string]any{"bank_account_id": s.giro, "transactions": items})
	for _, tx := range p.must(200, "GET", "/v1/bank-transactions?limit=500", s.w, nil).list("transactions") {
		s.tx[tx["reference"].(string)] = tx["id"].(string)
	}
	eventually(t, 20*time.Second, func() error {
		items := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1`, tenant)
		bookings := count(t, p.owner, `SELECT count(*) FROM bank.ledger_bookings WHERE tenant_id = $1 AND account_number = '1800'`, tenant)
		if items != 2 || bookings != 1 {
			return fmt.Errorf("%d open items, %d bank bookings", items, bookings)
		}
		return nil
	})
	return s
}

func (s *reconcileSetup) reconcile(ref string) string {
	return "/v1/bank-transactions/" + s.tx[ref] + "/reconcile"
}
func (s *reconcileSetup) unmatch(ref string) string {
	return "/v1/bank-transactions/" + s.tx[ref] + "/unmatch"
}

// bankIntents counts the intents the bank posted for the tenant.
func (s *reconcileSetup) bankIntents() int {
	return count(s.p.t, s.p.owner, `SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND source = 'bank'`, s.tenant)
}

func (s *reconcileSetup) status(ref string) string {
	return s.p.must(200, "GET", "/v1/bank-transactions/"+s.tx[ref], s.reader, nil).str("status")
}

// TestBankReconcile: reconcile, unmatch and their refusals through the
// gateway, against the real ledger: an open item gets one clearing
// booking however often the call is retried, unmatch reverses it, and a
// bank booking is linked without posting.
func TestBankReconcile(t *testing.T) {
	s := newReconcileSetup(t, "Abgleich GmbH")
	p, w := s.p, s.w
	var mu sync.Mutex
	var events []bankv1.TransactionReconciled
	var subjects []string
	sub, err := p.nc.Subscribe(bankv1.EventsFilter, func(m *nats.Msg) {
		var ev bankv1.TransactionReconciled
		if json.Unmarshal(m.Data, &ev) == nil && ev.TenantID == s.tenant {
			mu.Lock()
			events, subjects = append(events, ev), append(subjects, m.Subject)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	// Refusals change nothing.
	p.expectError(403, "FORBIDDEN", "POST", s.reconcile("RE-2026-001"), s.reader, map[string]any{"intent_id": s.invoice})
	p.expectError(404, "NOT_FOUND", "POST", "/v1/bank-transactions/"+uuid.NewString()+"/reconcile", w, map[string]any{"intent_id": s.invoice})
	p.expectError(404, "NOT_FOUND", "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": uuid.NewString()})
	p.expectError(400, "DIRECTION_MISMATCH", "POST", s.reconcile("Rueckbuchung"), w, map[string]any{"intent_id": s.invoice})
	p.expectError(400, "DIRECTION_MISMATCH", "POST", s.reconcile("Einzahlung"), w, map[string]any{"intent_id": s.bill})
	p.expectError(400, "SETTLEMENT_EXCEEDS_OPEN_AMOUNT", "POST", s.reconcile("Zu viel"), w, map[string]any{"intent_id": s.invoice})
	p.expectInvalid([]string{"intent_id"}, "POST", s.reconcile("RE-2026-001"), w, map[string]any{})
	p.expectInvalid([]string{"candidate_kind"}, "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice, "candidate_kind": "invoice"})
	if n := s.bankIntents(); n != 0 || s.status("RE-2026-001") != "open" {
		t.Fatalf("a refusal posted %d intents", n)
	}

	// The payment settles the invoice: one clearing booking 1800 to 1200.
	key := []string{"Idempotency-Key", "reconcile-re-2026-001"}
	r := p.must(200, "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice, "candidate_kind": "open_receivable"}, key...)
	clearing := r.str("intent_id")
	if r.Body["ok"] != true || r.str("mode") != "open_item" || r.str("matched_intent_id") != s.invoice || r.str("bank_transaction_id") != s.tx["RE-2026-001"] {
		t.Fatalf("reconciled %s", r.Raw)
	}
	entry := p.must(200, "GET", "/v1/journal/"+clearing, w, nil)
	if entries := entry.list("entries"); len(entries) != 1 || entries[0]["account_debit"] != "1800" || entries[0]["account_credit"] != "1200" ||
		fmt.Sprint(entries[0]["amount"]) != "119" || entry.str("source") != "bank" || entry.str("booking_date") != "2026-03-10" {
		t.Fatalf("clearing booking %s", entry.Raw)
	}
	// Retries post nothing more: the same key replays, another call is 409.
	again := p.must(200, "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice, "candidate_kind": "open_receivable"}, key...)
	if string(again.Raw) != string(r.Raw) {
		t.Fatalf("replay %s, first %s", again.Raw, r.Raw)
	}
	p.expectError(409, "CONFLICT", "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice})
	if n := s.bankIntents(); n != 1 || s.status("RE-2026-001") != "reconciled" {
		t.Fatalf("%d bank intents, status %s", n, s.status("RE-2026-001"))
	}
	if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2 AND allocated_amount = 119`, s.tenant, s.invoice); n != 1 {
		t.Fatal("the invoice is not allocated")
	}
	// The clearing booking's line on 1800 is explained by the transaction,
	// so it is no bank-booking candidate.
	eventually(t, 20*time.Second, func() error {
		if n := count(t, p.owner, `SELECT count(*) FROM bank.ledger_bookings WHERE tenant_id = $1 AND intent_id = $2 AND explained_by = $3`,
			s.tenant, clearing, s.tx["RE-2026-001"]); n != 1 {
			return fmt.Errorf("clearing booking explained: %d", n)
		}
		return nil
	})

	// The supplier's bill is paid: 3300 to 1800.
	r = p.must(200, "POST", s.reconcile("Werbeagentur"), w, map[string]any{"intent_id": s.bill})
	if e := p.must(200, "GET", "/v1/journal/"+r.str("intent_id"), w, nil).list("entries"); e[0]["account_debit"] != "3300" || e[0]["account_credit"] != "1800" {
		t.Fatalf("payable clearing %v", e)
	}

	// A booking already on 1800 is linked; nothing is posted.
	r = p.must(200, "POST", s.reconcile("Einzahlung"), w, map[string]any{"intent_id": s.cash, "candidate_kind": "bank_booking"})
	if r.str("mode") != "bank_booking" || r.str("intent_id") != s.cash || s.bankIntents() != 2 {
		t.Fatalf("bank booking %s, %d bank intents", r.Raw, s.bankIntents())
	}

	// Unmatch: the clearing booking is reversed once, the item open again.
	p.expectError(403, "FORBIDDEN", "POST", s.unmatch("RE-2026-001"), s.reader, nil)
	p.expectError(404, "NOT_FOUND", "POST", "/v1/bank-transactions/"+uuid.NewString()+"/unmatch", w, nil)
	p.expectError(409, "CONFLICT", "POST", s.unmatch("Zu viel"), w, nil)
	u := p.must(200, "POST", s.unmatch("RE-2026-001"), w, nil)
	if u.Body["ok"] != true || u.str("status") != "open" || u.str("mode") != "open_item" || u.str("reversal_intent_id") == "" {
		t.Fatalf("unmatched %s", u.Raw)
	}
	if n := count(t, p.owner, `SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND reverses = $2`, s.tenant, clearing); n != 1 {
		t.Fatalf("%d reversals of the clearing booking", n)
	}
	p.expectError(409, "CONFLICT", "POST", s.unmatch("RE-2026-001"), w, nil)
	if s.status("RE-2026-001") != "open" || count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2 AND allocated_amount = 0`, s.tenant, s.invoice) != 1 {
		t.Fatal("the invoice is not open again")
	}
	u = p.must(200, "POST", s.unmatch("Einzahlung"), w, nil)
	if u.Body["reversal_intent_id"] != nil || u.str("mode") != "bank_booking" || s.status("Einzahlung") != "open" {
		t.Fatalf("unlinked %s", u.Raw)
	}
	// Reconciled again: a new clearing booking.
	r = p.must(200, "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice})
	if r.str("intent_id") == clearing || s.bankIntents() != 3 { // the invoice twice, the payable once (the reversal is the ledger's)
		t.Fatalf("again %s, %d bank-sourced intents", r.Raw, s.bankIntents())
	}
	p.verifyOK(w, -1)

	// Each reconcile and unmatch announced itself with its allocation.
	eventually(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		var got []string
		for i, ev := range events {
			a := ev.Allocations[0]
			got = append(got, fmt.Sprintf("%s %s %s %s %s %s", subjects[i][len("evt.bank.v1."):], ev.Mode, a.CandidateKind, a.OpenItemAccount, a.Amount.StringFixed(2), a.Currency))
		}
		want := []string{
			"transaction_reconciled open_item open_receivable 1200 119.00 EUR",
			"transaction_reconciled open_item open_liability 3300 238.00 EUR",
			"transaction_reconciled bank_booking bank_booking  20.00 EUR",
			"transaction_unmatched open_item open_receivable 1200 119.00 EUR",
			"transaction_unmatched bank_booking bank_booking  20.00 EUR",
			"transaction_reconciled open_item open_receivable 1200 119.00 EUR",
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("events %q, want %q", got, want)
		}
		if events[0].Allocations[0].IntentID != s.invoice || events[0].IntentID != clearing || events[3].ReversalIntentID == "" {
			return fmt.Errorf("event ids %+v", events)
		}
		return nil
	})
}

// TestBankBatchReconcileAndEvidence: batch pairs each on their own, and
// evidence with its rules.
func TestBankBatchReconcileAndEvidence(t *testing.T) {
	s := newReconcileSetup(t, "Stapel GmbH")
	p, w := s.p, s.w

	const batch = "/v1/bank-transactions/batch-reconcile"
	p.expectError(403, "FORBIDDEN", "POST", batch, s.reader, map[string]any{"pairs": []any{}})
	p.expectInvalid([]string{"pairs"}, "POST", batch, w, map[string]any{"pairs": []any{}})
	r := p.must(200, "POST", batch, w, map[string]any{"pairs": []any{
		map[string]any{"bank_transaction_id": s.tx["Teil A"], "intent_id": s.invoice, "candidate_kind": "open_receivable", "open_item_account": "1200"},
		map[string]any{"bank_transaction_id": s.tx["Teil B"], "intent_id": s.invoice, "candidate_kind": "open_receivable"},
		map[string]any{"bank_transaction_id": s.tx["Zu viel"], "intent_id": s.invoice, "candidate_kind": "open_receivable"},
		map[string]any{"bank_transaction_id": uuid.NewString(), "intent_id": s.invoice, "candidate_kind": "open_receivable"},
		map[string]any{"bank_transaction_id": s.tx["Einzahlung"], "intent_id": s.cash, "candidate_kind": "bank_booking"},
	}})
	var got struct {
		Reconciled int `json:"reconciled"`
		Errors     []struct {
			Index int    `json:"index"`
			Code  string `json:"code"`
		} `json:"errors"`
	}
	decodeJSON(t, r.Raw, &got)
	if got.Reconciled != 2 || fmt.Sprint(got.Errors) != "[{1 DIRECTION_MISMATCH} {2 SETTLEMENT_EXCEEDS_OPEN_AMOUNT} {3 NOT_FOUND}]" {
		t.Fatalf("batch %s", r.Raw)
	}
	if s.status("Teil A") != "reconciled" || s.status("Einzahlung") != "reconciled" || s.status("Teil B") != "open" || s.bankIntents() != 1 {
		t.Fatal("batch effects")
	}

	// Evidence.
	ev := "/v1/bank-transactions/" + s.tx["Parken"] + "/evidence"
	if r := p.must(200, "GET", ev, s.reader, nil); string(r.Raw) != `{"evidence":null}` {
		t.Fatalf("no evidence: %s", r.Raw)
	}
	p.expectError(403, "FORBIDDEN", "PUT", ev, s.reader, map[string]any{"evidence_type": "bank_statement"})
	p.expectInvalid([]string{"note"}, "PUT", ev, w, map[string]any{"evidence_type": "eigenbeleg", "title": "Parken"})
	p.expectInvalid([]string{"document_id"}, "PUT", ev, w, map[string]any{"evidence_type": "uploaded_document"})
	p.expectInvalid([]string{"evidence_type"}, "PUT", ev, w, map[string]any{"evidence_type": "quittung"})
	p.expectError(404, "NOT_FOUND", "PUT", "/v1/bank-transactions/"+uuid.NewString()+"/evidence", w, map[string]any{"evidence_type": "bank_statement"})
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-transactions/"+uuid.NewString()+"/evidence", w, nil)
	if s.status("Parken") != "open" {
		t.Fatal("a refusal changed the status")
	}
	put := p.must(200, "PUT", ev, w, map[string]any{"evidence_type": "eigenbeleg", "title": "Parkgebühr", "note": "Automat ohne Beleg", "metadata": map[string]any{"ort": "Köln"}})
	read := p.must(200, "GET", ev, s.reader, nil)
	if string(put.Raw) != string(read.Raw) || read.str("evidence", "note") != "Automat ohne Beleg" || read.str("evidence", "evidence_type") != "eigenbeleg" {
		t.Fatalf("put %s, read %s", put.Raw, read.Raw)
	}
	if s.status("Parken") != "evidenced" || s.bankIntents() != 1 {
		t.Fatal("evidence posts nothing and marks the transaction evidenced")
	}
	doc := p.upload(201, "/v1/documents", w, fileField("beleg.pdf", "application/pdf", pdfOf("evidence"))).str("id")
	again := p.must(200, "PUT", ev, w, map[string]any{"evidence_type": "uploaded_document", "document_id": doc})
	if again.str("evidence", "id") != put.str("evidence", "id") || again.str("evidence", "document_id") != doc || again.Body["evidence"].(map[string]any)["note"] != nil {
		t.Fatalf("replaced %s", again.Raw)
	}

	// A clearing booking into a locked month is refused by the ledger: the
	// claim is given up and the transaction stays open.
	p.must(200, "POST", "/v1/periods/2026-03/soft-lock", s.admin, nil)
	p.expectError(409, "PERIOD_LOCKED", "POST", s.reconcile("Werbeagentur"), w, map[string]any{"intent_id": s.bill})
	if s.status("Werbeagentur") != "open" || s.bankIntents() != 1 ||
		count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND allocated_amount > 0 AND intent_id = $2`, s.tenant, s.bill) != 0 {
		t.Fatal("a refused clearing left something behind")
	}
	p.must(200, "POST", "/v1/periods/2026-03/reopen", s.admin, nil)
	p.must(200, "POST", s.reconcile("Werbeagentur"), w, map[string]any{"intent_id": s.bill})
	if s.bankIntents() != 2 {
		t.Fatalf("%d bank intents", s.bankIntents())
	}
}

// TestBankReconcileRace: eight concurrent reconciles of one transaction
// post one clearing booking. A call that finds the first one's claim
// still pending resumes it (as a retry after a crash does) and answers
// the same intent; the others are refused. Two transactions
// racing for the last open amount of one item cannot both settle it.
func TestBankReconcileRace(t *testing.T) {
	s := newReconcileSetup(t, "Wettlauf GmbH")
	p, w := s.p, s.w
	rs := make([]resp, 8)
	var wg sync.WaitGroup
	for i := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i] = p.call("POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice})
		}()
	}
	wg.Wait()
	won, intent := 0, ""
	for _, r := range rs {
		switch {
		case r.Status == 200 && (intent == "" || r.str("intent_id") == intent):
			won, intent = won+1, r.str("intent_id")
		case r.Status == 409 && r.code() == "CONFLICT":
		default:
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	}
	if won == 0 || s.bankIntents() != 1 {
		t.Fatalf("%d won, %d clearing bookings", won, s.bankIntents())
	}
	p.must(200, "POST", s.unmatch("RE-2026-001"), w, nil)

	// 119.00 open: 119.00 and 19.00 race; both fit alone, not together.
	var a, b resp
	wg.Add(2)
	go func() {
		defer wg.Done()
		a = p.call("POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice})
	}()
	go func() {
		defer wg.Done()
		b = p.call("POST", s.reconcile("Teil A"), w, map[string]any{"intent_id": s.invoice})
	}()
	wg.Wait()
	if (a.Status == 200) == (b.Status == 200) {
		t.Fatalf("both or neither settled: %d %s / %d %s", a.Status, a.Raw, b.Status, b.Raw)
	}
	if loser := map[bool]resp{true: b, false: a}[a.Status == 200]; loser.Status != 400 || loser.code() != "SETTLEMENT_EXCEEDS_OPEN_AMOUNT" {
		t.Fatalf("loser %d %s", loser.Status, loser.Raw)
	}
	if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2 AND allocated_amount <= original_amount AND allocated_amount > 0`, s.tenant, s.invoice); n != 1 {
		t.Fatal("allocation")
	}
}
