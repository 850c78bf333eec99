package allinone_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
)

func init() { api.DisableConfigDir() } // pdfcpu would write a config file under $HOME

// invoiceSeller gives the tenant the master data a seller needs on an
// invoice (§14 Abs. 4 Nr. 1, 2 UStG) and the invoicing settings.
func invoiceSeller(p *platform, admin string) {
	p.t.Helper()
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"legal_form": "GmbH", "vat_id": "DE123456789", "tax_id": "2893081508152",
		"address": map[string]any{"street": "Lindenstr. 5", "zip": "10969", "city": "Berlin", "country": "DE"}})
}

func invoiceSettings(p *platform, token string) resp {
	p.t.Helper()
	return p.must(200, "PUT", "/v1/receivables/settings", token, map[string]any{"payment_iban": "DE02 1203 0000 0000 2020 51", "payment_bic": "byladem1001",
		"contact_name": "Erika Muster", "contact_email": "rechnung@muster.example", "contact_phone": "+49 30 1234567"})
}

type invoiceDebtors struct{ de, fr, us, city, inactive string }

func newInvoiceDebtors(p *platform, w string) invoiceDebtors {
	p.t.Helper()
	mk := func(body map[string]any) string { return p.must(201, "POST", "/v1/debtors", w, body).str("id") }
	var d invoiceDebtors
	d.de = mk(map[string]any{"name": "Muster Handel GmbH", "address": berlin(), "vat_id": "DE987654321", "payment_terms": map[string]any{"days": 30}})
	d.fr = mk(map[string]any{"name": "Dupont SARL", "vat_id": "FR40303265045",
		"address": map[string]any{"street": "1 Rue de Rivoli", "zip": "75001", "city": "Paris", "country": "FR"}})
	d.us = mk(map[string]any{"name": "Acme Inc.", "address": map[string]any{"street": "1 Main St", "zip": "10001", "city": "New York", "country": "US"}})
	d.city = mk(map[string]any{"name": "Stadt Bremen", "address": map[string]any{"street": "Am Markt 21", "zip": "28195", "city": "Bremen"},
		"email": "rechnung@bremen.example", "leitweg_id": "04011000-1234512345-06"})
	d.inactive = mk(map[string]any{"name": "Alt GmbH", "address": berlin()})
	p.must(200, "PATCH", "/v1/debtors/"+d.inactive, w, map[string]any{"is_active": false})
	return d
}

func item(desc string, qty, price string, tax ...any) map[string]any {
	m := map[string]any{"description": desc, "quantity": json.Number(qty), "unit_price": json.Number(price)}
	for i := 0; i+1 < len(tax); i += 2 {
		m[tax[i].(string)] = tax[i+1]
	}
	return m
}

// embeddedXML extracts the one attachment of a PDF.
func embeddedXML(t *testing.T, pdf []byte) []byte {
	t.Helper()
	aa, err := api.ExtractAttachmentsRaw(bytes.NewReader(pdf), "", nil, model.NewDefaultConfiguration())
	if err != nil || len(aa) != 1 {
		t.Fatalf("attachments of the PDF: %d, %v", len(aa), err)
	}
	b, err := io.ReadAll(aa[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSalesInvoiceRoutes: sales invoices through the gateway against the
// real ledger and identity: each kind of invoice (19 %, mixed rates, K,
// AE, USD export, XRechnung) issued with its gapless number, posted with
// the PDF as the document and valid by the official validator; drafts and
// their finalisation; every refusal with its field; listing, files,
// settings, idempotency, scopes and tenants apart.
func TestSalesInvoiceRoutes(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Rechnungsbau")
	w := p.apiKey(admin, "debitoren:read", "debitoren:write")
	reader := p.apiKey(admin, "debitoren:read")
	journal := p.apiKey(admin, "journal:read")
	other, _ := p.newTenant("Fremde Rechnungen GmbH")
	invoiceSeller(p, admin)
	d := newInvoiceDebtors(p, w)
	const far = "2099-12-31" // open, not overdue, whenever the test runs
	var evMu sync.Mutex
	var issued []string
	sub, err := p.nc.Subscribe(receivablesv1.EventInvoiceIssued, func(m *nats.Msg) {
		var ev receivablesv1.InvoiceIssued
		if json.Unmarshal(m.Data, &ev) == nil && ev.TenantID == tenant {
			evMu.Lock()
			issued = append(issued, ev.Number+" "+ev.Gross.String()+" "+ev.Currency)
			evMu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	// Settings: defaults, then the payment account and contact.
	if got := p.must(200, "GET", "/v1/receivables/settings", reader, nil); string(got.Raw) != `{"invoice_number_prefix":"RE-","payment_iban":null,"payment_bic":null,"contact_name":null,"contact_email":null,"contact_phone":null}` {
		t.Fatalf("default settings %s", got.Raw)
	}
	// XRechnung needs the payment account: 409 before any number is taken.
	xr := map[string]any{"debtor_id": d.city, "invoice_date": "2026-03-02", "due_date": far, "line_items": []any{item("Beratung", "2", "100", "tax_code", "USt19", "unit", "HUR")}}
	p.expectError(409, "CONFLICT", "POST", "/v1/sales-invoices", w, xr)
	r := p.expectError(400, "INVALID_INPUT", "PUT", "/v1/receivables/settings", w, map[string]any{"payment_iban": "DE02120300000000202052", "payment_bic": "X", "contact_email": "nope"})
	if diff := cmp.Diff([]string{"INVALID_INPUT", "payment_iban: not a valid IBAN", "payment_bic: not a BIC (8 or 11 letters and digits)", "contact_email: not an e-mail address"}, detailsOf(r)); diff != "" {
		t.Fatalf("settings refusal (-want +got):\n%s", diff)
	}
	p.expectError(403, "FORBIDDEN", "PUT", "/v1/receivables/settings", reader, map[string]any{})
	if got := invoiceSettings(p, w); got.str("payment_iban") != "DE02120300000000202051" || got.str("payment_bic") != "BYLADEM1001" {
		t.Fatalf("settings %s", got.Raw)
	}

	// Each kind of invoice, numbered in order.
	type kind struct {
		name  string
		body  map[string]any
		xr    bool
		lines []string // the journal entry: debit credit amount
		gross string
	}
	kinds := []kind{
		{"19", map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-01", "due_date": far, "line_items": []any{item("Beratung März", "10", "120", "tax_code", "USt19", "unit", "HUR")}},
			false, []string{"1200 3806 228", "1200 4400 1200"}, "1428"},
		{"mixed", map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-01", "due_date": far, "exemption_reason": "Steuerfrei nach § 4 Nr. 8 UStG",
			"service_period": map[string]any{"start": "2026-02-01", "end": "2026-02-28"}, "notes": "Vielen Dank für Ihren Auftrag.",
			"line_items": []any{item("Software", "1", "1000", "tax_rate", 19), item("Fachbuch", "3", "33.3333", "tax_code", "USt7", "discount", 5),
				item("Vermittlung", "1", "50", "tax_code", "STF0")}},
			false, []string{"1200 3801 6.65", "1200 3806 190", "1200 4100 50", "1200 4300 95", "1200 4400 1000"}, "1341.65"},
		{"K", map[string]any{"debtor_id": d.fr, "invoice_date": "2026-03-03", "due_date": far, "line_items": []any{item("Maschine", "1", "5000", "tax_rate", 0, "tax_category", "K", "unit", "H87")}},
			false, []string{"1200 4125 5000"}, "5000"},
		{"AE", map[string]any{"debtor_id": d.fr, "invoice_date": "2026-03-03", "due_date": far, "line_items": []any{item("Montage", "8", "95", "tax_rate", 0, "tax_category", "AE", "unit", "HUR")}},
			false, []string{"1200 4337 760"}, "760"},
		{"USD", map[string]any{"debtor_id": d.us, "invoice_date": "2026-03-04", "due_date": far, "currency": "USD", "exchange_rate": json.Number("0.9214"),
			"line_items": []any{item("Export goods", "100", "12.5", "tax_code", "AUS0")}},
			false, []string{"1200 4120 1151.75"}, "1250"},
		{"XRechnung", xr, true, []string{"1200 3806 38", "1200 4400 200"}, "238"},
	}
	dir := t.TempDir()
	var files, xrFiles []string
	for i, k := range kinds {
		created := p.must(201, "POST", "/v1/sales-invoices", w, k.body)
		id, intent, doc := created.str("invoice_id"), created.str("booking_intent_id"), created.str("document_id")
		wantNumber := fmt.Sprintf("RE-2026-%05d", i+1)
		if created.str("number") != wantNumber || created.str("status") != "open" || intent == "" || doc == "" {
			t.Fatalf("%s: created %s, want number %s", k.name, created.Raw, wantNumber)
		}
		entry := p.must(200, "GET", "/v1/journal/"+intent, journal, nil)
		if diff := cmp.Diff(k.lines, journalLines(p, journal, intent)); diff != "" {
			t.Fatalf("%s: journal (-want +got):\n%s\n%s", k.name, diff, entry.Raw)
		}
		if entry.str("source") != "receivables" || entry.str("document_id") != doc {
			t.Fatalf("%s: journal entry %s", k.name, entry.Raw)
		}
		for _, e := range entry.list("entries") {
			if e["external_reference"] != wantNumber {
				t.Fatalf("%s: entry without the invoice number: %v", k.name, e)
			}
			if k.name == "USD" && (e["fx_currency"] != "USD" || fmt.Sprint(e["fx_amount"]) != "1250") {
				t.Fatalf("USD entry %v", e)
			}
		}
		got := p.must(200, "GET", "/v1/sales-invoices/"+id, reader, nil)
		if got.str("number") != wantNumber || fmt.Sprint(got.Body["total_gross"]) != k.gross || got.str("status") != "open" || fmt.Sprint(got.Body["remaining"]) != k.gross {
			t.Fatalf("%s: read back %s", k.name, got.Raw)
		}
		if k.name == "mixed" {
			group := func(cat string, rate, basis, tax float64) any {
				return map[string]any{"tax_category": cat, "tax_rate": rate, "basis": basis, "tax": tax}
			}
			want := []any{group("S", 19, 1000, 190), group("S", 7, 95, 6.65), group("E", 0, 50, 0)}
			if diff := cmp.Diff(want, got.Body["tax_breakdown"]); diff != "" {
				t.Fatalf("mixed: tax breakdown (-want +got):\n%s", diff)
			}
			var nets []any
			for _, l := range got.list("lines") {
				nets = append(nets, []any{l["description"], l["tax_code"], l["net_amount"]})
			}
			if diff := cmp.Diff([]any{[]any{"Software", "USt19", 1000.0}, []any{"Fachbuch", "USt7", 95.0}, []any{"Vermittlung", "STF0", 50.0}}, nets); diff != "" {
				t.Fatalf("mixed: lines (-want +got):\n%s", diff)
			}
			if got.str("debtor", "name") != "Muster Handel GmbH" || got.str("service_period", "start") != "2026-02-01" || got.Body["delivery_date"] != nil ||
				got.str("notes") != "Vielen Dank für Ihren Auftrag." || fmt.Sprint(got.Body["total_tax"]) != "196.65" {
				t.Fatalf("mixed: read back %s", got.Raw)
			}
		}
		if wantProfile := map[bool]string{true: "XRECHNUNG", false: "EN16931"}[k.xr]; got.str("profile") != wantProfile {
			t.Fatalf("%s: profile %q", k.name, got.str("profile"))
		}
		pdf := p.must(200, "GET", "/v1/sales-invoices/"+id+"/pdf", reader, nil)
		xml := p.must(200, "GET", "/v1/sales-invoices/"+id+"/zugferd", reader, nil)
		if pdf.Header.Get("Content-Type") != "application/pdf" || !strings.Contains(pdf.Header.Get("Content-Disposition"), `filename="`+wantNumber+`.pdf"`) ||
			!strings.HasPrefix(xml.Header.Get("Content-Type"), "application/xml") || !bytes.HasPrefix(pdf.Raw, []byte("%PDF-")) {
			t.Fatalf("%s: files %v %v", k.name, pdf.Header, xml.Header)
		}
		if !bytes.Equal(embeddedXML(t, pdf.Raw), xml.Raw) {
			t.Fatalf("%s: the PDF's XML differs from GET zugferd", k.name)
		}
		// The ledger's document is the PDF, byte for byte.
		if stored := p.must(200, "GET", "/v1/documents/"+doc+"/file", journal, nil); !bytes.Equal(stored.Raw, pdf.Raw) {
			t.Fatalf("%s: the ledger's document is not the PDF", k.name)
		}
		f := filepath.Join(dir, k.name+".xml")
		if err := os.WriteFile(f, xml.Raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if k.xr {
			xrFiles = append(xrFiles, f)
		} else {
			files = append(files, f)
		}
	}
	for _, run := range []struct {
		xr    bool
		files []string
	}{{false, files}, {true, xrFiles}} {
		for f, findings := range einvoicetest.RunValidator(t, run.xr, run.files...) {
			if findings != nil {
				t.Errorf("validator on %s:\n%s", filepath.Base(f), strings.Join(findings, "\n"))
			}
		}
	}
	// The receivables are on the debtors' account: 1428 + 1341.65 + 5000 + 760 + 1151.75 + 238 EUR.
	bal := p.must(200, "GET", "/v1/accounts/1200/entries", journal, nil)
	if fmt.Sprint(bal.Body["balance"]) != "9919.4" || fmt.Sprint(bal.Body["entry_count"]) != "12" {
		t.Fatalf("1200 entries %s", bal.Raw)
	}

	// A draft: no number, nothing posted; finalised, it takes the next number.
	draft := p.must(201, "POST", "/v1/sales-invoices", w, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-05", "draft": true,
		"line_items": []any{item("Wartung", "1", "80", "tax_code", "USt19")}})
	if string(draft.Raw) != `{"invoice_id":"`+draft.str("invoice_id")+`","number":null,"status":"draft","booking_intent_id":null,"document_id":null}` {
		t.Fatalf("draft %s", draft.Raw)
	}
	did := draft.str("invoice_id")
	// Its due date: the invoice date plus the debtor's 30 days.
	if got := p.must(200, "GET", "/v1/sales-invoices/"+did, reader, nil); got.str("status") != "draft" || fmt.Sprint(got.Body["total_gross"]) != "95.2" || got.Body["number"] != nil || got.str("due_date") != "2026-04-04" {
		t.Fatalf("draft read back %s", got.Raw)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/sales-invoices/"+did+"/pdf", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/sales-invoices/"+did+"/zugferd", reader, nil)
	fin := p.must(201, "POST", "/v1/sales-invoices/"+did+"/finalize", w, nil)
	if fin.str("number") != "RE-2026-00007" || fin.str("status") != "overdue" || fin.str("invoice_id") != did {
		t.Fatalf("finalised %s", fin.Raw)
	}
	// Finalising again answers the issued invoice; nothing is posted twice.
	if again := p.must(201, "POST", "/v1/sales-invoices/"+did+"/finalize", w, nil); string(again.Raw) != string(fin.Raw) {
		t.Fatalf("second finalize %s, first %s", again.Raw, fin.Raw)
	}

	// The same Idempotency-Key replays the first answer; with another body it is refused.
	key := []string{"Idempotency-Key", uuid.NewString()}
	body := map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-06", "due_date": far, "line_items": []any{item("Schulung", "1", "500", "tax_code", "USt19")}}
	first := p.must(201, "POST", "/v1/sales-invoices", w, body, key...)
	if again := p.must(201, "POST", "/v1/sales-invoices", w, body, key...); string(again.Raw) != string(first.Raw) || first.str("number") != "RE-2026-00008" {
		t.Fatalf("replay %s, first %s", again.Raw, first.Raw)
	}
	body["notes"] = "anders"
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/sales-invoices", w, body, key...)

	// Every refusal, with its field; none takes a number.
	for _, c := range []struct {
		name   string
		status int
		body   map[string]any
		want   []string
	}{
		{"empty", 400, map[string]any{}, []string{"INVALID_INPUT", "debtor_id: required", "invoice_date: required", "line_items: required"}},
		{"lines", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": []any{
			item("ok", "1", "10", "tax_code", "USt19"),
			item("a", "1", "10", "tax_code", "VSt19"),
			item("x", "1.00001", "1.12345", "tax_rate", 19),
			item("y", "1", "10", "tax_rate", 0),
			item("z", "1", "10", "discount", 11, "tax_code", "NOPE"),
			item("w", "1", "10"),
			item("v", "1", "10", "tax_code", "USt19", "tax_rate", 19),
		}}, []string{"INVALID_INPUT",
			"line_items[1].tax_code: tax code VSt19 is not one for sales (an output code such as USt19 or USt7, or IGL0, AUS0, STF0)",
			"line_items[2].quantity: must be positive with at most 4 decimals", "line_items[2].unit_price: must be 0 or more with at most 4 decimals",
			"line_items[3].tax_category: a 0 % line needs its category: Z, E, AE, K or G",
			"line_items[4].discount: more than the line's amount (quantity × unit_price)",
			"line_items[4].tax_code: tax code NOPE does not exist",
			"line_items[5].tax_code: required: a tax code such as USt19, or tax_rate with tax_category",
			"line_items[6].tax_code: give tax_code or tax_rate with tax_category, not both"}},
		// The gateway's schema check answers the malformed ones first.
		{"lines' form", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": []any{
			item("", "0", "-1", "tax_code", "USt19"), item("x", "1", "1", "tax_rate", 16), item("z", "1", "1", "unit", "piece", "tax_code", "USt19"),
		}}, []string{"INVALID_INPUT", "line_items[0].description: at least 1 characters", "line_items[0].quantity: must be more than 0",
			"line_items[0].unit_price: must be at least 0", "line_items[1].tax_rate: must be one of 19, 7, 0", "line_items[2].unit: must match ^[A-Z0-9]{2,3}$"}},
		{"dates' form", 400, map[string]any{"debtor_id": "x", "invoice_date": "2026-02-30", "due_date": "2026", "currency": "usd",
			"line_items": []any{item("a", "1", "1", "tax_code", "USt19")}},
			[]string{"INVALID_INPUT", "currency: must match ^[A-Z]{3}$", "debtor_id: must be a valid uuid", "due_date: must be a date YYYY-MM-DD",
				"invoice_date: must be a date YYYY-MM-DD"}},
		{"dates", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "due_date": "2026-03-06", "delivery_date": "2026-03-01",
			"service_period": map[string]any{"start": "2026-03-01", "end": "2026-02-01"}, "line_items": []any{item("a", "1", "1", "tax_code", "USt19")}},
			[]string{"INVALID_INPUT", "due_date: before the invoice date", "service_period: give a delivery date or a service period, not both"}},
		{"period", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "service_period": map[string]any{"start": "2026-03-01", "end": "2026-02-01"},
			"line_items": []any{item("a", "1", "1", "tax_code", "USt19")}},
			[]string{"INVALID_INPUT", "service_period.end: before the start"}},
		{"EUR with a rate", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "exchange_rate": 1.1, "line_items": []any{item("a", "1", "1", "tax_code", "USt19")}},
			[]string{"INVALID_INPUT", "exchange_rate: only for an invoice in another currency than EUR"}},
		{"no rate", 400, map[string]any{"debtor_id": d.us, "invoice_date": "2026-03-07", "currency": "USD", "line_items": []any{item("a", "1", "1", "tax_code", "AUS0")}},
			[]string{"INVALID_INPUT", "exchange_rate: required for a USD invoice: EUR per 1 USD"}},
		{"exempt without reason", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "1", "tax_code", "STF0")}},
			[]string{"INVALID_INPUT", "exemption_reason: required with tax category E: the legal ground of the exemption"}},
		{"zero total", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "0", "tax_code", "USt19")}},
			[]string{"INVALID_INPUT", "line_items: the invoice total must be positive"}},
		{"AE without the buyer's VAT ID", 400, map[string]any{"debtor_id": d.us, "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "1", "tax_rate", 0, "tax_category", "AE")}},
			[]string{"INVALID_INPUT", "debtor.vatId: required for reverse charge (AE) and intra-community supply (K) (§14a UStG)"}},
		{"K in the same country", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "1", "tax_code", "IGL0")}},
			[]string{"INVALID_INPUT", "debtor.country: an intra-community supply (K) goes to another member state than the seller's"}},
		{"unknown debtor", 404, map[string]any{"debtor_id": uuid.NewString(), "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "1", "tax_code", "USt19")}},
			[]string{"NOT_FOUND", "debtor_id: no debtor of the tenant"}},
		{"inactive debtor", 409, map[string]any{"debtor_id": d.inactive, "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "1", "tax_code", "USt19")}},
			[]string{"CONFLICT", "debtor_id: deactivated: activate it to invoice it"}},
		{"unknown field", 400, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "1", "tax_code", "USt19", "vat", 1)}}, nil},
	} {
		r := p.must(c.status, "POST", "/v1/sales-invoices", w, c.body)
		if c.want == nil {
			continue
		}
		got := detailsOf(r)
		if strings.HasPrefix(c.name, "lines") || strings.HasPrefix(c.name, "dates") {
			slices.Sort(got[1:])
			slices.Sort(c.want[1:])
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s\n%s", c.name, diff, r.Raw)
		}
	}
	tooMany := make([]any, 501)
	for i := range tooMany {
		tooMany[i] = item("a", "1", "1", "tax_code", "USt19")
	}
	if r := p.must(400, "POST", "/v1/sales-invoices", w, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": tooMany}); !slices.Contains(detailsOf(r), "line_items: at most 500 items") {
		t.Fatalf("501 lines %s", r.Raw)
	}
	p.wantCount(1, "SELECT last_number - 7 FROM receivables.invoice_number_counters WHERE tenant_id = $1 AND year = 2026", tenant)

	// Lists and their filters.
	list := func(q string) []string {
		var out []string
		for _, inv := range p.must(200, "GET", "/v1/sales-invoices"+q, reader, nil).list("invoices") {
			n, _ := inv["number"].(string)
			out = append(out, n+" "+inv["status"].(string))
		}
		return out
	}
	if diff := cmp.Diff([]string{"RE-2026-00008 open", "RE-2026-00007 overdue", "RE-2026-00002 open", "RE-2026-00001 open"}, list("?debtor_id="+d.de)); diff != "" {
		t.Fatalf("debtor's invoices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"RE-2026-00004 open", "RE-2026-00003 open", "RE-2026-00006 open"}, list("?from=2026-03-02&to=2026-03-04&limit=3&offset=1")); diff != "" {
		t.Fatalf("by date (-want +got):\n%s", diff)
	}
	if got := list("?status=draft"); got != nil {
		t.Fatalf("drafts %v", got)
	}
	// An invoice whose due date passed is overdue; one paid in full is paid.
	if _, err := p.owner.Exec(t.Context(), `UPDATE receivables.sales_invoices SET due_date = '2026-03-10', invoice_date = '2026-03-01' WHERE number = 'RE-2026-00001' AND tenant_id = $1`, tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := p.owner.Exec(t.Context(), `UPDATE receivables.sales_invoices SET paid_amount = 100 WHERE number = 'RE-2026-00002' AND tenant_id = $1`, tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := p.owner.Exec(t.Context(), `UPDATE receivables.sales_invoices SET paid_amount = total_gross WHERE number = 'RE-2026-00003' AND tenant_id = $1`, tenant); err != nil {
		t.Fatal(err)
	}
	if got := list("?status=overdue&debtor_id=" + d.de); !slices.Equal(got, []string{"RE-2026-00007 overdue", "RE-2026-00001 overdue"}) {
		t.Fatalf("overdue %v", got)
	}
	if got := list("?status=partially_paid"); !slices.Equal(got, []string{"RE-2026-00002 partially_paid"}) {
		t.Fatalf("partially paid %v", got)
	}
	if got := list("?status=paid"); !slices.Equal(got, []string{"RE-2026-00003 paid"}) {
		t.Fatalf("paid %v", got)
	}
	for _, q := range []string{"?limit=0", "?limit=501", "?offset=-1", "?status=late", "?from=2026-13-01", "?debtor_id=x", "?from=2026-03-02&to=2026-03-01"} {
		p.expectError(400, "INVALID_INPUT", "GET", "/v1/sales-invoices"+q, reader, nil)
	}

	// The ledger refuses the posting for good (its period is locked): the
	// invoice is void, its number accounted for and not given again.
	p.must(200, "POST", "/v1/periods/2026-01/soft-lock", admin, nil)
	refused := p.call("POST", "/v1/sales-invoices", w, map[string]any{"debtor_id": d.de, "invoice_date": "2026-01-15", "due_date": far,
		"line_items": []any{item("Januar", "1", "10", "tax_code", "USt19")}})
	if refused.Status < 400 || refused.Status >= 500 {
		t.Fatalf("posting into a locked period: %d %s", refused.Status, refused.Raw)
	}
	if got := list("?status=void"); !slices.Equal(got, []string{"RE-2026-00009 void"}) {
		t.Fatalf("void %v", got)
	}
	if next := p.must(201, "POST", "/v1/sales-invoices", w, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-08", "due_date": far,
		"line_items": []any{item("Danach", "1", "10", "tax_code", "USt19")}}); next.str("number") != "RE-2026-00010" {
		t.Fatalf("after the void %s", next.Raw)
	}

	// Unknown ids, other tenants and missing scopes.
	for _, path := range []string{"/v1/sales-invoices/" + did, "/v1/sales-invoices/" + did + "/pdf", "/v1/sales-invoices/nope"} {
		p.expectError(404, "NOT_FOUND", "GET", path, other, nil)
	}
	p.expectError(404, "NOT_FOUND", "POST", "/v1/sales-invoices/"+did+"/finalize", other, nil)
	p.expectError(404, "NOT_FOUND", "POST", "/v1/sales-invoices", other, map[string]any{"debtor_id": d.de, "invoice_date": "2026-03-07", "line_items": []any{item("a", "1", "1", "tax_code", "USt19")}})
	p.expectError(403, "FORBIDDEN", "POST", "/v1/sales-invoices", reader, body)
	p.expectError(403, "FORBIDDEN", "GET", "/v1/sales-invoices", journal, nil)
	p.expectError(403, "FORBIDDEN", "POST", "/v1/sales-invoices/"+did+"/finalize", reader, nil)

	// The issued events went out through the outbox.
	eventually(t, 10*time.Second, func() error {
		evMu.Lock()
		defer evMu.Unlock()
		if len(issued) != 9 {
			return fmt.Errorf("%d invoice_issued events: %v", len(issued), issued)
		}
		return nil
	})
	slices.Sort(issued)
	if issued[0] != "RE-2026-00001 1428 EUR" || issued[4] != "RE-2026-00005 1250 USD" {
		t.Fatalf("events %v", issued)
	}
}

// TestSalesInvoiceNumbersConcurrent: 50 invoices issued at once through the
// gateway get the numbers 00001 to 00050, each once.
func TestSalesInvoiceNumbersConcurrent(t *testing.T) {
	p, admin, tenant := setup(t, env{"RATE_LIMIT_PER_MINUTE": "100000"}, "Parallelrechnung")
	w := p.apiKey(admin, "debitoren:read", "debitoren:write")
	invoiceSeller(p, admin)
	invoiceSettings(p, w)
	debtor := p.must(201, "POST", "/v1/debtors", w, map[string]any{"name": "Viel Kunde GmbH", "address": berlin()}).str("id")
	var mu sync.Mutex
	var numbers []string
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := p.call("POST", "/v1/sales-invoices", w, map[string]any{"debtor_id": debtor, "invoice_date": "2026-04-01",
				"line_items": []any{item(fmt.Sprintf("Posten %d", i), "1", "10", "tax_code", "USt19")}})
			mu.Lock()
			defer mu.Unlock()
			if r.Status != 201 {
				t.Errorf("invoice %d: %d %s", i, r.Status, r.Raw)
				return
			}
			numbers = append(numbers, r.str("number"))
		}()
	}
	wg.Wait()
	slices.Sort(numbers)
	want := make([]string, 50)
	for i := range want {
		want[i] = fmt.Sprintf("RE-2026-%05d", i+1)
	}
	if diff := cmp.Diff(want, numbers); diff != "" {
		t.Fatalf("numbers (-want +got):\n%s", diff)
	}
	p.wantCount(50, "SELECT count(*) FROM receivables.sales_invoices WHERE tenant_id = $1 AND state = 'posted'", tenant)
}

// TestSalesInvoiceTextBeyondWinAnsi issues invoices whose texts need the
// PDF's Unicode fonts (a Polish name), and one with an emoji in a line,
// which once made the renderer panic: each is issued, and the PDF's text
// layer, read by pdftotext, shows the name.
func TestSalesInvoiceTextBeyondWinAnsi(t *testing.T) {
	p := startPlatform(t, env{})
	admin, _ := p.newTenant("Unicode Rechnungen")
	w := p.apiKey(admin, "debitoren:read", "debitoren:write")
	invoiceSeller(p, admin)
	invoiceSettings(p, w)
	for _, c := range []struct{ debtor, line string }{
		{"Łukasz Wąsik Handel Sp. z o.o.", "Beratung"},
		{"Kunden AG", "Workshop 🚀 Teamtag"},
	} {
		debtor := p.must(201, "POST", "/v1/debtors", w, map[string]any{"name": c.debtor, "address": berlin()}).str("id")
		id := p.must(201, "POST", "/v1/sales-invoices", w, map[string]any{"debtor_id": debtor, "invoice_date": "2026-05-01",
			"line_items": []any{item(c.line, "1", "100", "tax_code", "USt19")}}).str("invoice_id")
		pdf := p.must(200, "GET", "/v1/sales-invoices/"+id+"/pdf", w, nil).Raw
		cmd := exec.Command("pdftotext", "-raw", "-enc", "UTF-8", "-", "-")
		cmd.Stdin = bytes.NewReader(pdf)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pdftotext: %v", err)
		}
		want := strings.ReplaceAll(c.line, "🚀", "\uFFFD")
		if !strings.Contains(string(out), c.debtor) || !strings.Contains(string(out), want) || !strings.Contains(string(out), "119,00 €") {
			t.Errorf("text layer lacks %q, %q or the total:\n%s", c.debtor, want, out)
		}
		xml := p.must(200, "GET", "/v1/sales-invoices/"+id+"/zugferd", w, nil).Raw
		if !bytes.Contains(xml, []byte(c.line)) {
			t.Errorf("XML lacks %q", c.line)
		}
	}
}

// BenchmarkSalesInvoiceCreate issues invoices through the gateway from 8
// clients at once (number, XML, PDF, ledger document, posting each) and
// reports invoices/s, for one tenant: its invoices of a year share one
// number counter. The debtor of "winansi" has a German name, whose PDF is
// set in the WinAnsi fonts; the debtor of "unicode" has a Polish one,
// which needs the Unicode fonts, fpdf's slower path.
func BenchmarkSalesInvoiceCreate(b *testing.B) {
	p := startPlatform(b, env{"RATE_LIMIT_PER_MINUTE": "10000000"})
	admin, _ := p.newTenant("Bench Rechnungen")
	w := p.apiKey(admin, "debitoren:read", "debitoren:write")
	invoiceSeller(p, admin)
	invoiceSettings(p, w)
	for _, c := range []struct{ name, debtor string }{
		{"winansi", "Bench Kunde GmbH"},
		{"unicode", "Łukasz Wąsik Handel Sp. z o.o."},
	} {
		debtor := p.must(201, "POST", "/v1/debtors", w, map[string]any{"name": c.debtor, "address": berlin()}).str("id")
		b.Run(c.name, func(b *testing.B) {
			const clients = 8
			var next atomic.Int64
			start := time.Now()
			var wg sync.WaitGroup
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						r := p.call("POST", "/v1/sales-invoices", w, map[string]any{"debtor_id": debtor, "invoice_date": "2026-05-01",
							"line_items": []any{item(fmt.Sprintf("Posten %d", i), "3", "19.99", "tax_code", "USt19"), item("Buch", "1", "25", "tax_code", "USt7")}})
						if r.Status != 201 {
							b.Errorf("invoice %d: %d %.300s", i, r.Status, r.Raw)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "invoices/s")
		})
	}
}
