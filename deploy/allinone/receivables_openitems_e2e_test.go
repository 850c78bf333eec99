package allinone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
)

// insertSalesInvoice writes a posted sales invoice as the schema owner,
// standing in for the finalisation: a receivable of gross posted under
// intent (a ledger intent of the tenant, so the bank can settle it; a
// new id when empty).
func insertSalesInvoice(t testing.TB, p *platform, tenant, debtor, number, date, due, gross, intent string) string {
	t.Helper()
	id := uuid.NewString()
	if intent == "" {
		intent = uuid.NewString()
	}
	_, err := p.owner.Exec(context.Background(), `INSERT INTO receivables.sales_invoices (id, tenant_id, debtor_id, type, state, number,
			invoice_date, due_date, lines, total_net, total_tax, total_gross, booking_intent_id, document_id, xml, pdf)
		VALUES ($1, $2, $3, 'invoice', 'posted', $4, $5, $6, '[]', round($7::numeric / 1.19, 2), $7::numeric - round($7::numeric / 1.19, 2), $7::numeric, $8, $9, '\x3c3e', '\x25')`,
		id, tenant, debtor, number, date, due, gross, intent, uuid.NewString())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// invoiceState is "status remaining" of one invoice in the list.
func invoiceState(p *platform, token, id string) string {
	p.t.Helper()
	for _, inv := range p.must(200, "GET", "/v1/outgoing-invoices?limit=500", token, nil).list("invoices") {
		if inv["id"] == id {
			return fmt.Sprintf("%s %.2f", inv["status"], inv["remaining_amount"])
		}
	}
	p.t.Fatalf("invoice %s not listed", id)
	return ""
}

// TestReceivablesPayments: reconciling a bank transaction against an
// invoice's booking intent through the bank's routes pays the invoice;
// unmatching opens it again; the views show it all, through REST and MCP.
func TestReceivablesPayments(t *testing.T) {
	s := newReconcileSetup(t, "Offene Posten GmbH")
	p, w := s.p, s.w
	rw := p.apiKey(s.admin, "debitoren:read", "debitoren:write")
	reader, outsider := p.apiKey(s.admin, "debitoren:read"), p.apiKey(s.admin, "journal:read")
	deb := p.must(201, "POST", "/v1/debtors", rw, map[string]any{"name": "Müller KG", "address": berlin()}).str("id")
	other := p.must(201, "POST", "/v1/debtors", rw, map[string]any{"name": "Anders AG", "address": berlin()}).str("id")
	inv := insertSalesInvoice(t, p, s.tenant, deb, "RE-2026-00001", "2026-03-02", "2999-12-31", "119.00", s.invoice)
	late := insertSalesInvoice(t, p, s.tenant, other, "RE-2026-00002", "2026-02-01", "2026-02-15", "50.00", uuid.NewString())

	if got := invoiceState(p, reader, inv); got != "open 119.00" {
		t.Fatalf("before payment: %s", got)
	}
	wait := func(want string) {
		t.Helper()
		eventually(t, 20*time.Second, func() error {
			if got := invoiceState(p, reader, inv); got != want {
				return fmt.Errorf("invoice %s, want %s", got, want)
			}
			return nil
		})
	}
	// A part payment, undone, then the whole amount.
	p.must(200, "POST", s.reconcile("Teil A"), w, map[string]any{"intent_id": s.invoice, "candidate_kind": "open_receivable"})
	wait("partially_paid 100.00")
	p.must(200, "POST", s.unmatch("Teil A"), w, nil)
	wait("open 119.00")
	p.must(200, "POST", s.reconcile("RE-2026-001"), w, map[string]any{"intent_id": s.invoice, "candidate_kind": "open_receivable"})
	wait("paid 0.00")
	if n := count(t, p.owner, `SELECT count(*) FROM receivables.invoice_payments WHERE tenant_id = $1 AND NOT released`, s.tenant); n != 1 {
		t.Fatalf("%d payments in force, want 1", n)
	}

	// The views: filters, the open items of the unpaid one.
	ids := func(path string) []string {
		out := []string{}
		for _, i := range p.must(200, "GET", path, reader, nil).list("invoices") {
			out = append(out, i["invoice_number"].(string)+" "+i["status"].(string))
		}
		return out
	}
	if d := cmp.Diff([]string{"RE-2026-00001 paid", "RE-2026-00002 overdue"}, ids("/v1/outgoing-invoices")); d != "" {
		t.Errorf("list (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"RE-2026-00002 overdue"}, ids("/v1/outgoing-invoices?status=overdue&type=invoice")); d != "" {
		t.Errorf("overdue (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"RE-2026-00001 paid"}, ids("/v1/outgoing-invoices?customer_id="+deb+"&start_date=2026-03-01&end_date=2026-03-31")); d != "" {
		t.Errorf("a customer's March (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{}, ids("/v1/outgoing-invoices?type=credit_note")); d != "" {
		t.Errorf("credit notes (-want +got):\n%s", d)
	}
	grouped := p.must(200, "GET", "/v1/outgoing-invoices/open-items", reader, nil).list("customers")
	if len(grouped) != 1 || grouped[0]["customer_id"] != other || grouped[0]["customer_name"] != "Anders AG" ||
		fmt.Sprint(grouped[0]["net_open"]) != "50" || fmt.Sprint(grouped[0]["credit_note_total"]) != "0" {
		t.Fatalf("open items by customer: %v", grouped)
	}
	items := p.must(200, "GET", "/v1/sales-invoices/open-items?period=2026-02", reader, nil).list("open_items")
	if len(items) != 1 || items[0]["invoice_id"] != late || items[0]["status"] != "overdue" || fmt.Sprint(items[0]["amount"]) != "50" {
		t.Fatalf("open items of February: %v", items)
	}
	if n := len(p.must(200, "GET", "/v1/sales-invoices/open-items?debtor_id="+deb, reader, nil).list("open_items")); n != 0 {
		t.Fatalf("the paid invoice's debtor has %d open items", n)
	}

	// Refusals: bad queries name each parameter; scopes; tenants apart.
	p.expectInvalid([]string{"customer_id", "status", "type", "start_date"}, "GET",
		"/v1/outgoing-invoices?customer_id=x&status=void&type=bill&start_date=2026-02-30", reader, nil)
	p.expectInvalid([]string{"end_date"}, "GET", "/v1/outgoing-invoices?start_date=2026-03-02&end_date=2026-03-01", reader, nil)
	p.expectInvalid([]string{"limit"}, "GET", "/v1/outgoing-invoices?limit=0", reader, nil)
	p.expectInvalid([]string{"offset"}, "GET", "/v1/outgoing-invoices?offset=-1", reader, nil)
	p.expectInvalid([]string{"debtor_id", "period"}, "GET", "/v1/sales-invoices/open-items?debtor_id=1&period=2026-3", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/outgoing-invoices?customer_id="+uuid.NewString(), reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/sales-invoices/open-items?debtor_id="+uuid.NewString(), reader, nil)
	for _, path := range []string{"/v1/outgoing-invoices", "/v1/outgoing-invoices/open-items", "/v1/sales-invoices/open-items"} {
		p.expectError(403, "FORBIDDEN", "GET", path, outsider, nil)
		p.expectError(401, "UNAUTHENTICATED", "GET", path, "", nil)
	}
	stranger, _ := p.newTenant("Fremde Offene Posten GmbH")
	if n := len(p.must(200, "GET", "/v1/outgoing-invoices", stranger, nil).list("invoices")); n != 0 {
		t.Fatalf("another tenant sees %d invoices", n)
	}
}

// cancelSetup is a tenant that can issue invoices: seller master data,
// the payment account, a debtor, and keys.
type cancelSetup struct {
	p                                 *platform
	tenant, admin, rw, reader, debtor string
}

func newCancelSetup(t *testing.T, company string) *cancelSetup {
	p, admin, tenant := setup(t, nil, company)
	s := &cancelSetup{p: p, tenant: tenant, admin: admin}
	s.rw = p.apiKey(admin, "debitoren:read", "debitoren:write", "journal:read")
	s.reader = p.apiKey(admin, "debitoren:read")
	sellerData(p, admin)
	s.debtor = p.must(201, "POST", "/v1/debtors", s.rw, map[string]any{"name": "Muster Handel GmbH", "address": berlin(),
		"vat_id": "DE987654321", "payment_terms": map[string]any{"days": 30}}).str("id")
	return s
}

// cancelFixture issues invoices of debtor for the contract test's tenant
// (whose seller data the fixture set): two to cancel, over REST and over
// MCP, and one to credit.
func cancelFixture(p *platform, admin, debtor string) (rest, mcp, credit string) {
	p.t.Helper()
	s := &cancelSetup{p: p, admin: admin, rw: admin, debtor: debtor}
	return s.issue(false).str("invoice_id"), s.issue(false).str("invoice_id"), s.issue(false).str("invoice_id")
}

func sellerData(p *platform, admin string) {
	p.t.Helper()
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"legal_form": "GmbH", "vat_id": "DE123456789", "tax_id": "2893081508152",
		"address": map[string]any{"street": "Lindenstr. 5", "zip": "10969", "city": "Berlin", "country": "DE"}})
	p.must(200, "PUT", "/v1/receivables/settings", admin, map[string]any{"payment_iban": "DE02 1203 0000 0000 2020 51",
		"contact_name": "Erika Muster", "contact_email": "rechnung@muster.example", "contact_phone": "+49 30 1234567"})
}

// issue creates and issues an invoice of two lines, 19 % and 7 %.
func (s *cancelSetup) issue(draft bool) resp {
	s.p.t.Helper()
	return s.p.must(201, "POST", "/v1/sales-invoices", s.rw, map[string]any{"debtor_id": s.debtor, "invoice_date": "2026-03-02",
		"delivery_date": "2026-03-01", "draft": draft, "line_items": []any{
			map[string]any{"description": "Beratung", "quantity": json.Number("2"), "unit_price": json.Number("100.00"), "tax_code": "USt19"},
			map[string]any{"description": "Fachbuch", "quantity": json.Number("1"), "unit_price": json.Number("50.00"), "tax_code": "USt7"},
		}})
}

// TestSalesInvoiceCancel: cancelling an issued invoice issues a credit
// note (type 381, own gapless number, naming the invoice) over its full
// gross that passes the EN 16931 validator, and reverses its receivable
// in the ledger; the invoice is then credited in full. Drafts, paid,
// cancelled and unknown invoices are refused.
func TestSalesInvoiceCancel(t *testing.T) {
	s := newCancelSetup(t, "Storno GmbH")
	p := s.p
	inv := s.issue(false)
	id, intent := inv.str("invoice_id"), inv.str("booking_intent_id")
	if inv.str("status") != "overdue" || intent == "" { // due 30 days after 2026-03-02
		t.Fatalf("issued %s", inv.Raw)
	}

	p.expectError(403, "FORBIDDEN", "POST", "/v1/sales-invoices/"+id+"/cancel", s.reader, nil)
	p.expectError(404, "NOT_FOUND", "POST", "/v1/sales-invoices/"+uuid.NewString()+"/cancel", s.rw, nil)
	p.expectError(404, "NOT_FOUND", "POST", "/v1/sales-invoices/nope/cancel", s.rw, nil)
	draft := s.issue(true).str("invoice_id")
	p.expectError(409, "CONFLICT", "POST", "/v1/sales-invoices/"+draft+"/cancel", s.rw, nil)
	paid := s.issue(false).str("invoice_id")
	if _, err := p.owner.Exec(context.Background(), `UPDATE receivables.sales_invoices SET paid_amount = 10 WHERE id = $1`, paid); err != nil {
		t.Fatal(err)
	}
	if r := p.expectError(409, "CONFLICT", "POST", "/v1/sales-invoices/"+paid+"/cancel", s.rw, nil); !strings.Contains(r.str("error"), "refund") {
		t.Fatalf("paid: %s", r.Raw)
	}

	c := p.must(200, "POST", "/v1/sales-invoices/"+id+"/cancel", s.rw, nil)
	cn, reversal, number := c.str("credit_note_id"), c.str("reversal_intent_id"), c.str("credit_note_number")
	// Numbers: the invoice 00001, the paid one 00002, the credit note 00003 (the draft has none).
	if c.Body["ok"] != true || cn == "" || reversal == "" || !strings.HasSuffix(number, "-00003") {
		t.Fatalf("cancelled %s", c.Raw)
	}
	p.expectError(409, "CONFLICT", "POST", "/v1/sales-invoices/"+id+"/cancel", s.rw, nil)
	p.expectError(409, "CONFLICT", "POST", "/v1/sales-invoices/"+cn+"/cancel", s.rw, nil)

	// The ledger: the reversal of the invoice's booking, with the credit
	// note's document on the journal entry of the reversal's intent.
	rv := p.must(200, "GET", "/v1/journal/"+reversal, s.rw, nil)
	if rv.str("reverses") != intent {
		t.Fatalf("reversal %s does not reverse %s", rv.Raw, intent)
	}
	bal := p.must(200, "GET", "/v1/accounts/1200/entries", s.rw, nil)
	// Left on 1200: the paid invoice's 291.50 (2 × 100 + 19 % and 50 + 7 %).
	if fmt.Sprint(bal.Body["balance"]) != "291.5" {
		t.Fatalf("receivables after the cancellation: %s", bal.Raw)
	}

	// The views: the invoice credited in full, the credit note listed.
	if got := invoiceState(p, s.reader, id); got != "paid 0.00" {
		t.Fatalf("the cancelled invoice: %s", got)
	}
	notes := p.must(200, "GET", "/v1/outgoing-invoices?type=credit_note", s.reader, nil).list("invoices")
	if len(notes) != 1 || notes[0]["id"] != cn || fmt.Sprint(notes[0]["total_gross"]) != "291.5" || notes[0]["invoice_number"] != number {
		t.Fatalf("credit notes: %v", notes)
	}
	var credited string
	if err := p.owner.QueryRow(context.Background(), `SELECT credited_amount::text FROM receivables.sales_invoices WHERE id = $1`, id).Scan(&credited); err != nil || credited != "291.50" {
		t.Fatalf("credited amount %s, %v", credited, err)
	}

	// The credit note's XML: type 381, the preceding invoice, valid.
	xml := p.must(200, "GET", "/v1/sales-invoices/"+cn+"/zugferd", s.rw, nil).Raw
	for _, want := range []string{"<ram:TypeCode>381</ram:TypeCode>", "<ram:InvoiceReferencedDocument>", inv.str("number"), "<ram:GrandTotalAmount>291.50</ram:GrandTotalAmount>"} {
		if !bytes.Contains(xml, []byte(want)) {
			t.Errorf("credit note XML lacks %s", want)
		}
	}
	f := filepath.Join(t.TempDir(), "gutschrift.xml")
	if err := os.WriteFile(f, xml, 0o600); err != nil {
		t.Fatal(err)
	}
	for file, findings := range einvoicetest.RunValidator(t, false, f) {
		if findings != nil {
			t.Errorf("validator on %s:\n%s", file, strings.Join(findings, "\n"))
		}
	}
	if pdf := p.must(200, "GET", "/v1/sales-invoices/"+cn+"/pdf", s.rw, nil).Raw; !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Fatalf("the credit note's PDF is no PDF")
	}

	// An invoice whose booking an accountant reversed by hand in the
	// journal: the cancellation documents that reversal with its credit
	// note instead of failing on ALREADY_REVERSED.
	byHand := s.issue(false)
	journal := p.apiKey(s.admin, "journal:read", "journal:write")
	hand := p.must(201, "POST", "/v1/journal/reverse", journal, map[string]any{"intent_id": byHand.str("booking_intent_id"), "reason": "falsch gebucht"})
	c = p.must(200, "POST", "/v1/sales-invoices/"+byHand.str("invoice_id")+"/cancel", s.rw, nil)
	if c.str("reversal_intent_id") != hand.str("reversal_intent_id") || c.str("credit_note_number") == "" {
		t.Fatalf("cancelled after a reversal by hand: %s (the reversal: %s)", c.Raw, hand.Raw)
	}
	if got := invoiceState(p, s.reader, byHand.str("invoice_id")); got != "paid 0.00" {
		t.Fatalf("the invoice reversed by hand, then cancelled: %s", got)
	}
}

// validXML runs the EN 16931 validator on each credit note's XML.
func validXML(t *testing.T, p *platform, token string, ids ...string) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, id := range ids {
		f := filepath.Join(dir, id+".xml")
		if err := os.WriteFile(f, p.must(200, "GET", "/v1/sales-invoices/"+id+"/zugferd", token, nil).Raw, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for file, findings := range einvoicetest.RunValidator(t, false, files...) {
		if findings != nil {
			t.Errorf("validator on %s:\n%s", file, strings.Join(findings, "\n"))
		}
	}
}

// TestSalesInvoiceCreditNote: partial credit notes of an issued invoice
// (part of a line's quantity, a price reduction) are issued with their own
// numbers and valid XML, posted as their own bookings (revenue and VAT
// debited, the receivable credited) and lower what is open; more than is
// open, bad lines, drafts and unknown invoices are refused.
func TestSalesInvoiceCreditNote(t *testing.T) {
	s := newCancelSetup(t, "Gutschrift GmbH")
	p := s.p
	inv := s.issue(false)
	id := inv.str("invoice_id")
	path := "/v1/sales-invoices/" + id + "/credit-notes"
	body := func(reason string, items ...map[string]any) map[string]any {
		return map[string]any{"line_items": items, "reason": reason}
	}

	// Refusals first: nothing is issued.
	p.expectError(403, "FORBIDDEN", "POST", path, s.reader, body("x", map[string]any{"line": 1}))
	p.expectError(404, "NOT_FOUND", "POST", "/v1/sales-invoices/"+uuid.NewString()+"/credit-notes", s.rw, body("x", map[string]any{"line": 1}))
	p.expectInvalid([]string{"line_items", "reason"}, "POST", path, s.rw, map[string]any{"line_items": []any{}, "reason": ""})
	p.expectInvalid([]string{"line_items[1].quantity"}, "POST", path, s.rw, body("x", map[string]any{"line": 1}, map[string]any{"line": 2, "quantity": json.Number("-1")}))
	p.expectInvalid([]string{"line_items[0].line", "line_items[1].line", "line_items[2]"}, "POST", path, s.rw, body("x",
		map[string]any{"line": 9}, map[string]any{"line": 9},
		map[string]any{"line": 2, "quantity": json.Number("1"), "amount": json.Number("1")}))
	p.expectInvalid([]string{"line_items[0].quantity"}, "POST", path, s.rw, body("x", map[string]any{"line": 1, "quantity": json.Number("3")}))
	p.expectInvalid([]string{"line_items[0].amount"}, "POST", path, s.rw, body("x", map[string]any{"line": 2, "amount": json.Number("50.01")}))
	draft := s.issue(true).str("invoice_id")
	p.expectError(409, "CONFLICT", "POST", "/v1/sales-invoices/"+draft+"/credit-notes", s.rw, body("x", map[string]any{"line": 1}))

	// One of the two consulting hours back: 100 + 19 % VAT.
	key := []string{"Idempotency-Key", "credit-1"}
	c1 := p.must(201, "POST", path, s.rw, body("Eine Stunde nicht erbracht", map[string]any{"line": 1, "quantity": json.Number("1")}), key...)
	if fmt.Sprint(c1.Body["total_gross"]) != "119" || fmt.Sprint(c1.Body["total_tax"]) != "19" || c1.str("corrects_id") != id {
		t.Fatalf("credit note %s", c1.Raw)
	}
	if again := p.must(201, "POST", path, s.rw, body("Eine Stunde nicht erbracht", map[string]any{"line": 1, "quantity": json.Number("1")}), key...); string(again.Raw) != string(c1.Raw) {
		t.Fatalf("replay %s, first %s", again.Raw, c1.Raw)
	}
	entry := p.must(200, "GET", "/v1/journal/"+c1.str("booking_intent_id"), s.rw, nil)
	var got []string
	for _, e := range entry.list("entries") {
		got = append(got, fmt.Sprintf("%s>%s %v %v", e["account_debit"], e["account_credit"], e["amount"], e["tax_code"]))
	}
	// Posted with the invoice's code, so the code's tax base shrinks too.
	if d := cmp.Diff([]string{"4400>1200 100 USt19", "3806>1200 19 USt19"}, got); d != "" || entry.str("document_id") != c1.str("document_id") {
		t.Fatalf("the credit note's booking (-want +got):\n%s\n%s", d, entry.Raw)
	}
	// A price reduction of 10.00 net on the book: 10.70 with 7 % VAT.
	c2 := p.must(201, "POST", path, s.rw, body("Mängelrüge", map[string]any{"line": 2, "amount": json.Number("10")}))
	if fmt.Sprint(c2.Body["total_gross"]) != "10.7" || c2.str("credit_note_number") == c1.str("credit_note_number") {
		t.Fatalf("price reduction %s", c2.Raw)
	}
	// 291.50 - 119.00 - 10.70 = 161.80 open: the whole first line (238.00) is too much.
	if r := p.expectError(409, "CONFLICT", "POST", path, s.rw, body("zu viel", map[string]any{"line": 1})); !strings.Contains(r.str("error"), "161.80") {
		t.Fatalf("too much: %s", r.Raw)
	}
	// Something was credited and something remains: partially paid, or
	// overdue once its due date has passed (which wins: a reminder is due).
	want := "partially_paid 161.80"
	if due := p.must(200, "GET", "/v1/sales-invoices/"+id, s.reader, nil).str("due_date"); due < time.Now().Format(time.DateOnly) {
		want = "overdue 161.80"
	}
	if got := invoiceState(p, s.reader, id); got != want {
		t.Fatalf("the credited invoice: %s", got)
	}
	if bal := p.must(200, "GET", "/v1/accounts/1200/entries", s.rw, nil); fmt.Sprint(bal.Body["balance"]) != "161.8" {
		t.Fatalf("receivables: %s", bal.Raw)
	}
	grouped := p.must(200, "GET", "/v1/outgoing-invoices/open-items", s.reader, nil).list("customers")
	if len(grouped) != 1 || fmt.Sprint(grouped[0]["total_open"]) != "291.5" || fmt.Sprint(grouped[0]["credit_note_total"]) != "129.7" ||
		fmt.Sprint(grouped[0]["net_open"]) != "161.8" {
		t.Fatalf("open items: %v", grouped)
	}
	// The rest can still be cancelled? No: a partly credited invoice is
	// credited further, not cancelled.
	p.expectError(409, "CONFLICT", "POST", "/v1/sales-invoices/"+id+"/cancel", s.rw, nil)
	validXML(t, p, s.rw, c1.str("credit_note_id"), c2.str("credit_note_id"))
}
