package allinone_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// runInvoice is a posted incoming invoice written straight into the
// payables schema (the review flow that posts them is another part).
type runInvoice struct {
	vendor, number, gross, paid string
	state                       string // "" for posted
	rate                        string // Skonto percent, "" for none
	until                       time.Time
}

func (p *platform) postedInvoice(tenant string, inv runInvoice) string {
	p.t.Helper()
	id := uuid.NewString()
	state, intent := inv.state, any(uuid.NewString())
	if state == "" {
		state = "posted"
	}
	if state != "posted" {
		intent = nil
	}
	paid := inv.paid
	if paid == "" {
		paid = "0"
	}
	var rate, until any
	if inv.rate != "" {
		rate, until = inv.rate, inv.until.Format(time.DateOnly)
	}
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO payables.incoming_invoices (id, tenant_id, vendor_id, invoice_number,
			invoice_date, due_date, total_net, total_tax, total_gross, paid_amount, booking_intent_id, state, discount_rate, discount_until)
		VALUES ($1, $2, $3, $4, '2026-01-05', '2026-02-04', $5, 0, $5, $6, $7, $8, $9, $10)`,
		id, tenant, inv.vendor, inv.number, inv.gross, paid, intent, state, rate, until); err != nil {
		p.t.Fatal(err)
	}
	return id
}

// xmllint validates a pain.001.001.09 file against the ISO schema.
func xmllint(t *testing.T, doc []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "pain.xml")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("xmllint", "--noout", "--schema", "testdata/pain.001.001.09.xsd", f).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint: %v\n%s\n%s", err, out, doc)
	}
}

// pain is what the tests read back from an exported file.
type pain struct {
	MsgID   string `xml:"CstmrCdtTrfInitn>GrpHdr>MsgId"`
	NbOfTxs string `xml:"CstmrCdtTrfInitn>GrpHdr>NbOfTxs"`
	CtrlSum string `xml:"CstmrCdtTrfInitn>GrpHdr>CtrlSum"`
	PmtInf  []struct {
		Date      string `xml:"ReqdExctnDt>Dt"`
		Debtor    string `xml:"Dbtr>Nm"`
		DebtorTwn string `xml:"Dbtr>PstlAdr>TwnNm"`
		IBAN      string `xml:"DbtrAcct>Id>IBAN"`
		BIC       string `xml:"DbtrAgt>FinInstnId>BICFI"`
		Tx        []struct {
			E2E      string `xml:"PmtId>EndToEndId"`
			Amount   string `xml:"Amt>InstdAmt"`
			Creditor string `xml:"Cdtr>Nm"`
			Town     string `xml:"Cdtr>PstlAdr>TwnNm"`
			Street   string `xml:"Cdtr>PstlAdr>StrtNm"`
			Country  string `xml:"Cdtr>PstlAdr>Ctry"`
			IBAN     string `xml:"CdtrAcct>Id>IBAN"`
			BIC      string `xml:"CdtrAgt>FinInstnId>BICFI"`
			Ustrd    string `xml:"RmtInf>Ustrd"`
		} `xml:"CdtTrfTxInf"`
	} `xml:"CstmrCdtTrfInitn>PmtInf"`
}

// itemsOf is each item of a run as "number amount discount".
func itemsOf(r resp) []string {
	out := []string{}
	items, _ := r.Body["items"].([]any)
	for _, it := range items {
		m := it.(map[string]any)
		out = append(out, m["invoice_number"].(string)+" "+jsonNum(m["amount"])+" "+jsonNum(m["discount"]))
	}
	return out
}

func jsonNum(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// TestPaymentRunRoutes: payment runs through the gateway: every field
// rule and error code of the creation, Skonto on and after the discount
// date, the life cycle draft -> approved -> exported -> completed with
// each wrong step refused, the exported file valid against the ISO
// schema and the same on a second export, an invoice in one active run
// only and free again once the run is cancelled, scopes and tenants.
func TestPaymentRunRoutes(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Zahllauf GmbH")
	other, _ := p.newTenant("Fremder Zahllauf GmbH")
	writer := p.apiKey(admin, "kreditoren:read", "kreditoren:write")
	reviewer := p.apiKey(admin, "kreditoren:read", "kreditoren:review")
	reader := p.apiKey(admin, "kreditoren:read")
	outsider := p.apiKey(admin, "bank:read")

	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"address": map[string]any{"street": "Hauptstr. 1", "zip": "10115", "city": "Berlin", "country": "DE"}})
	bank := p.must(201, "POST", "/v1/bank-accounts", admin, map[string]any{"name": "Girokonto", "iban": "DE02120300000000202051",
		"bic": "BYLADEM1001", "account_number": "1800"}).str("id")
	vendor := func(body map[string]any) string { return p.must(201, "POST", "/v1/vendors", admin, body).str("id") }
	nord := vendor(map[string]any{"name": "Bürobedarf Nord GmbH", "iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX",
		"address": map[string]any{"street": "Hafenstr. 5", "zip": "20457", "city": "Hamburg"}})
	wien := vendor(map[string]any{"name": "Alpen Holz KG", "iban": "AT611904300234573201"})
	noIBAN := vendor(map[string]any{"name": "Ohne Konto OHG"})
	noIBAN2 := vendor(map[string]any{"name": "Auch Ohne Konto OHG"})
	// A name with no letter of the SEPA character set: no file could name it.
	kanji := vendor(map[string]any{"name": "日本商事", "iban": "DE44500105175407324931"})

	payday := time.Now().UTC().AddDate(0, 0, 10).Truncate(24 * time.Hour)
	execDate := payday.Format(time.DateOnly)
	// Skonto open until the execution date (taken), until the day before
	// (not taken), none.
	inv1 := p.postedInvoice(tenant, runInvoice{vendor: nord, number: "RE-1001", gross: "119.00", rate: "2", until: payday})
	inv2 := p.postedInvoice(tenant, runInvoice{vendor: nord, number: "RE-1002", gross: "500.00", paid: "100.00", rate: "3", until: payday.AddDate(0, 0, -1)})
	inv3 := p.postedInvoice(tenant, runInvoice{vendor: wien, number: "AH/2026/7", gross: "1000.00"})
	inv4 := p.postedInvoice(tenant, runInvoice{vendor: wien, number: "AH/2026/8", gross: "33.33", rate: "1.5", until: payday.AddDate(0, 0, 5)})
	invNoIBAN := p.postedInvoice(tenant, runInvoice{vendor: noIBAN, number: "OK-1", gross: "50.00"})
	invNoIBAN2 := p.postedInvoice(tenant, runInvoice{vendor: noIBAN2, number: "OK-2", gross: "60.00"})
	invKanji := p.postedInvoice(tenant, runInvoice{vendor: kanji, number: "JP-1", gross: "70.00"})
	invDraft := p.postedInvoice(tenant, runInvoice{vendor: nord, number: "RE-ENTWURF", gross: "10.00", state: "draft"})
	invPaid := p.postedInvoice(tenant, runInvoice{vendor: nord, number: "RE-BEZAHLT", gross: "10.00", paid: "10.00"})

	create := func(ids ...string) map[string]any {
		return map[string]any{"bank_account_id": bank, "execution_date": execDate, "invoice_ids": ids}
	}

	// The run: one transfer per invoice, Skonto taken on the discount date only.
	body := create(inv1, inv2, inv3)
	body["label"] = "  Zahllauf KW 11 "
	run := p.must(201, "POST", "/v1/payment-runs", writer, body)
	id := run.str("id")
	if diff := cmp.Diff([]string{"RE-1001 116.62 2.38", "RE-1002 400 0", "AH/2026/7 1000 0"}, itemsOf(run)); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	for _, want := range []string{`"total_amount":1516.62`, `"total_discount":2.38`, `"invoice_count":3`, `"status":"draft"`,
		`"label":"Zahllauf KW 11"`, `"debtor_name":"Zahllauf GmbH"`, `"debtor_iban":"DE02120300000000202051"`, `"execution_date":"` + execDate + `"`,
		`"amount":116.62`, `"discount":0.00`, `"iban":"DE89370400440532013000"`, `"bic":"COBADEFFXXX"`, `"vendor_name":"Alpen Holz KG"`,
		`"remittance":"AH/2026/7"`, `"end_to_end_id":"` + strings.ReplaceAll(inv3, "-", "") + `"`} {
		if !strings.Contains(string(run.Raw), want) {
			t.Errorf("created run lacks %s: %s", want, run.Raw)
		}
	}
	if got := p.must(200, "GET", "/v1/payment-runs/"+id, reader, nil); !cmp.Equal(run.Body, got.Body) {
		t.Fatalf("read back %s, created %s", got.Raw, run.Raw)
	}

	// Every refusal of the creation, nothing created.
	past := time.Now().UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	for _, tc := range []struct {
		name   string
		status int
		code   string
		body   any
		want   []string // fields, or issues containing
	}{
		{"nothing", 400, "INVALID_INPUT", map[string]any{}, []string{"bank_account_id", "execution_date", "invoice_ids"}},
		{"bank account no UUID", 400, "INVALID_INPUT", map[string]any{"bank_account_id": "1800", "execution_date": execDate, "invoice_ids": []string{inv4}}, []string{"bank_account_id"}},
		{"date malformed", 400, "INVALID_INPUT", map[string]any{"bank_account_id": bank, "execution_date": "14.03.2030", "invoice_ids": []string{inv4}}, []string{"execution_date"}},
		{"date in the past", 400, "INVALID_INPUT", map[string]any{"bank_account_id": bank, "execution_date": past, "invoice_ids": []string{inv4}}, []string{"execution_date"}},
		{"no invoices", 400, "INVALID_INPUT", create(), []string{"invoice_ids"}},
		{"invoice id no UUID", 400, "INVALID_INPUT", create(inv4, "RE-1"), []string{"invoice_ids[1]"}},
		{"invoice twice", 400, "INVALID_INPUT", create(inv4, strings.ToUpper(inv4)), []string{"invoice_ids[1]"}},
		{"too many invoices", 400, "INVALID_INPUT", create(manyIDs(1001)...), []string{"invoice_ids"}},
		{"label too long", 400, "INVALID_INPUT", map[string]any{"bank_account_id": bank, "execution_date": execDate, "invoice_ids": []string{inv4}, "label": strings.Repeat("x", 141)}, []string{"label"}},
		{"unknown field", 400, "INVALID_INPUT", map[string]any{"bank_account_id": bank, "execution_date": execDate, "invoice_ids": []string{inv4}, "amount": 5}, nil},
		{"vendors without IBAN", 400, "VENDOR_IBAN_MISSING", create(inv4, invNoIBAN, invNoIBAN2), []string{"Ohne Konto OHG", "Auch Ohne Konto OHG"}},
		{"creditor name outside the SEPA set", 400, "INVALID_INPUT", create(inv4, invKanji), []string{"invoice_ids[1]", "creditor.name is required"}},
		{"unknown invoice", 404, "INVOICE_NOT_FOUND", create(inv4, uuid.NewString()), []string{"invoice_ids[1]"}},
		{"draft invoice", 404, "INVOICE_NOT_FOUND", create(invDraft), []string{"invoice_ids[0]"}},
		{"paid invoice", 404, "INVOICE_NOT_FOUND", create(invPaid, inv4), []string{"invoice_ids[0]"}},
		{"unknown bank account", 404, "BANK_ACCOUNT_NOT_FOUND", map[string]any{"bank_account_id": uuid.NewString(), "execution_date": execDate, "invoice_ids": []string{inv4}}, []string{"bank_account_id"}},
		{"invoice in an active run", 409, "INVOICE_ALREADY_IN_ACTIVE_RUN", create(inv4, inv2), []string{"invoice_ids[1]", id}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := p.expectError(tc.status, tc.code, "POST", "/v1/payment-runs", writer, tc.body)
			for _, w := range tc.want {
				if !strings.Contains(string(r.Raw), w) {
					t.Errorf("answer does not name %s: %s", w, r.Raw)
				}
			}
		})
	}
	p.wantCount(1, `SELECT count(*) FROM payables.payment_runs WHERE tenant_id = $1`, tenant)
	// Another tenant knows neither the bank account nor the invoices.
	p.expectError(404, "BANK_ACCOUNT_NOT_FOUND", "POST", "/v1/payment-runs", other, create(inv4))

	// The list and its filters.
	if got := p.must(200, "GET", "/v1/payment-runs", reader, nil).list("payment_runs"); len(got) != 1 || got[0]["id"] != id || got[0]["items"] != nil {
		t.Fatalf("list: %v", got)
	}
	if got := p.must(200, "GET", "/v1/payment-runs?status=approved", reader, nil).list("payment_runs"); len(got) != 0 {
		t.Fatalf("approved runs: %v", got)
	}
	for _, q := range []string{"status=open", "limit=0", "limit=501", "offset=-1", "limit=x"} {
		p.expectError(400, "INVALID_INPUT", "GET", "/v1/payment-runs?"+q, reader, nil)
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/payment-runs/"+uuid.NewString(), reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/payment-runs/not-a-uuid", reader, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/payment-runs/"+id, other, nil)

	// The life cycle, each wrong step refused.
	p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+id+"/export", reviewer, nil)
	p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+id+"/complete", reviewer, nil)
	p.expectError(403, "FORBIDDEN", "POST", "/v1/payment-runs/"+id+"/approve", writer, nil)
	approved := p.must(200, "POST", "/v1/payment-runs/"+id+"/approve", reviewer, nil, "Idempotency-Key", "release-1")
	if approved.str("status") != "approved" || approved.str("approved_at") == "" || len(itemsOf(approved)) != 3 {
		t.Fatalf("approved: %s", approved.Raw)
	}
	// A retry under the key gets the approval again; without a key, or
	// with another, the state refuses it.
	if again := p.must(200, "POST", "/v1/payment-runs/"+id+"/approve", reviewer, nil, "Idempotency-Key", "release-1"); !bytes.Equal(again.Raw, approved.Raw) {
		t.Fatalf("retried approval: %s, first %s", again.Raw, approved.Raw)
	}
	p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+id+"/approve", reviewer, nil)
	p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+id+"/approve", reviewer, nil, "Idempotency-Key", "release-2")
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/payment-runs/"+id+"/complete", reviewer, nil, "Idempotency-Key", "release-1")
	p.expectError(403, "FORBIDDEN", "POST", "/v1/payment-runs/"+id+"/export", writer, nil)
	file := p.must(200, "POST", "/v1/payment-runs/"+id+"/export", reviewer, nil)
	if ct := file.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Fatalf("export answered %s: %s", ct, file.Raw)
	}
	xmllint(t, file.Raw)
	var doc pain
	if err := xml.Unmarshal(file.Raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.MsgID != strings.ReplaceAll(id, "-", "") || doc.NbOfTxs != "3" || doc.CtrlSum != "1516.62" || len(doc.PmtInf) != 1 {
		t.Fatalf("group header %+v", doc)
	}
	b := doc.PmtInf[0]
	if b.Date != execDate || b.Debtor != "Zahllauf GmbH" || b.DebtorTwn != "Berlin" || b.IBAN != "DE02120300000000202051" || b.BIC != "BYLADEM1001" {
		t.Fatalf("payment information %+v", b)
	}
	var txs []string
	for _, tx := range b.Tx {
		txs = append(txs, strings.Join([]string{tx.E2E, tx.Amount, tx.Creditor, tx.Street, tx.Town, tx.Country, tx.IBAN, tx.BIC, tx.Ustrd}, "|"))
	}
	e2e := func(s string) string { return strings.ReplaceAll(s, "-", "") }
	if diff := cmp.Diff([]string{
		e2e(inv1) + "|116.62|Buerobedarf Nord GmbH|Hafenstr. 5|Hamburg|DE|DE89370400440532013000|COBADEFFXXX|RE-1001",
		e2e(inv2) + "|400.00|Buerobedarf Nord GmbH|Hafenstr. 5|Hamburg|DE|DE89370400440532013000|COBADEFFXXX|RE-1002",
		e2e(inv3) + "|1000.00|Alpen Holz KG||||AT611904300234573201||AH/2026/7",
	}, txs); diff != "" {
		t.Fatalf("transfers (-want +got):\n%s", diff)
	}
	// A second export answers the same bytes, still exported.
	if again := p.must(200, "POST", "/v1/payment-runs/"+id+"/export", reviewer, nil); string(again.Raw) != string(file.Raw) {
		t.Fatalf("second export differs:\n%s\n%s", file.Raw, again.Raw)
	}
	p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+id+"/approve", reviewer, nil)
	exported := p.must(200, "GET", "/v1/payment-runs/"+id, reader, nil)
	if exported.str("status") != "exported" || exported.str("exported_at") == "" {
		t.Fatalf("exported: %s", exported.Raw)
	}
	// Exported, its invoices are still in an active run.
	p.expectError(409, "INVOICE_ALREADY_IN_ACTIVE_RUN", "POST", "/v1/payment-runs", writer, create(inv1))
	p.expectError(403, "FORBIDDEN", "POST", "/v1/payment-runs/"+id+"/complete", writer, nil)
	done := p.must(200, "POST", "/v1/payment-runs/"+id+"/complete", reviewer, nil)
	if done.str("status") != "completed" || done.str("completed_at") == "" {
		t.Fatalf("completed: %s", done.Raw)
	}
	for _, step := range []string{"approve", "export", "complete", "cancel"} {
		p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+id+"/"+step, admin, nil)
	}
	if got := p.must(200, "GET", "/v1/payment-runs?status=completed", reader, nil).list("payment_runs"); len(got) != 1 || got[0]["id"] != id {
		t.Fatalf("completed runs: %v", got)
	}
	// Completed, the invoices stay with the run: no other run pays them,
	// and they are paid when the bank statement's reconciliation says so.
	for inv, paid := range map[string]string{inv1: "0.00", inv2: "100.00", inv3: "0.00"} {
		p.wantCount(1, `SELECT count(*) FROM payables.incoming_invoices WHERE id = $1 AND paid_amount = $2::numeric`, inv, paid)
	}
	p.expectError(409, "INVOICE_ALREADY_IN_ACTIVE_RUN", "POST", "/v1/payment-runs", writer, create(inv1))

	// The bank sends a transfer back: the completed run keeps the item,
	// marked returned, and the invoice may go into another run.
	returns := "/v1/payment-runs/" + id + "/returns"
	p.expectInvalid([]string{"invoice_id"}, "POST", returns, writer, map[string]any{})
	p.expectInvalid([]string{"invoice_id"}, "POST", returns, writer, map[string]any{"invoice_id": "x"})
	p.expectInvalid([]string{"reason"}, "POST", returns, writer, map[string]any{"invoice_id": inv1, "reason": " "})
	p.expectError(404, "NOT_FOUND", "POST", returns, writer, map[string]any{"invoice_id": inv4})
	p.expectError(404, "NOT_FOUND", "POST", "/v1/payment-runs/"+uuid.NewString()+"/returns", writer, map[string]any{"invoice_id": inv1})
	p.expectError(403, "FORBIDDEN", "POST", returns, reader, map[string]any{"invoice_id": inv1})
	p.expectError(404, "NOT_FOUND", "POST", returns, p.apiKey(other, "kreditoren:write"), map[string]any{"invoice_id": inv1})
	returned := p.must(200, "POST", returns, writer, map[string]any{"invoice_id": inv1, "reason": "AC04 Konto erloschen"}, "Idempotency-Key", "return-1")
	var marks []string
	for _, it := range returned.list("items") {
		marks = append(marks, fmt.Sprintf("%s %v %v", it["invoice_number"], it["return_reason"], it["returned_at"] != nil))
	}
	if diff := cmp.Diff([]string{"RE-1001 AC04 Konto erloschen true", "RE-1002 <nil> false", "AH/2026/7 <nil> false"}, marks); diff != "" ||
		returned.str("status") != "completed" || fmt.Sprint(returned.Body["total_amount"]) != "1516.62" {
		t.Fatalf("returned (-want +got):\n%s\n%s", diff, returned.Raw)
	}
	if again := p.must(200, "POST", returns, writer, map[string]any{"invoice_id": inv1, "reason": "AC04 Konto erloschen"}, "Idempotency-Key", "return-1"); !bytes.Equal(again.Raw, returned.Raw) {
		t.Fatalf("the return's retry under its key: %s", again.Raw)
	}
	p.expectError(409, "CONFLICT", "POST", returns, writer, map[string]any{"invoice_id": inv1})
	p.expectError(409, "INVOICE_ALREADY_IN_ACTIVE_RUN", "POST", "/v1/payment-runs", writer, create(inv2))
	rerun := p.must(201, "POST", "/v1/payment-runs", writer, create(inv1))
	if diff := cmp.Diff([]string{"RE-1001 116.62 2.38"}, itemsOf(rerun)); diff != "" {
		t.Fatalf("the returned invoice in a new run (-want +got):\n%s", diff)
	}
	p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+rerun.str("id")+"/returns", writer, map[string]any{"invoice_id": inv1})
	p.must(200, "POST", "/v1/payment-runs/"+rerun.str("id")+"/cancel", writer, nil)

	// Cancelling frees the invoices: 409 while the run is active, a new run after.
	second := p.must(201, "POST", "/v1/payment-runs", writer, create(inv4))
	if diff := cmp.Diff([]string{"AH/2026/8 32.83 0.5"}, itemsOf(second)); diff != "" {
		t.Fatalf("Skonto of 1.5 %% (-want +got):\n%s", diff)
	}
	p.expectError(409, "INVOICE_ALREADY_IN_ACTIVE_RUN", "POST", "/v1/payment-runs", writer, create(inv4))
	p.expectError(403, "FORBIDDEN", "POST", "/v1/payment-runs/"+second.str("id")+"/cancel", reviewer, nil)
	p.must(200, "POST", "/v1/payment-runs/"+second.str("id")+"/approve", reviewer, nil)
	cancelled := p.must(200, "POST", "/v1/payment-runs/"+second.str("id")+"/cancel", writer, nil)
	if cancelled.str("status") != "cancelled" || cancelled.str("cancelled_at") == "" {
		t.Fatalf("cancelled: %s", cancelled.Raw)
	}
	p.expectError(409, "INVALID_STATE_TRANSITION", "POST", "/v1/payment-runs/"+second.str("id")+"/cancel", writer, nil)
	third := p.must(201, "POST", "/v1/payment-runs", writer, create(inv4)).str("id")
	// An exported run can be cancelled too.
	p.must(200, "POST", "/v1/payment-runs/"+third+"/approve", reviewer, nil)
	p.must(200, "POST", "/v1/payment-runs/"+third+"/export", reviewer, nil)
	p.must(200, "POST", "/v1/payment-runs/"+third+"/cancel", writer, nil)

	// Four eyes: a key holding both scopes cannot release the run it
	// prepared; someone else can, and the tenant's admin its own.
	both := p.apiKey(admin, "kreditoren:read", "kreditoren:write", "kreditoren:review")
	own := p.must(201, "POST", "/v1/payment-runs", both, create(inv4))
	p.expectError(403, "FORBIDDEN", "POST", "/v1/payment-runs/"+own.str("id")+"/approve", both, nil)
	released := p.must(200, "POST", "/v1/payment-runs/"+own.str("id")+"/approve", reviewer, nil)
	if by := released.str("created_by"); !strings.HasPrefix(by, "key:") || by != own.str("created_by") ||
		!strings.HasPrefix(released.str("approved_by"), "key:") || released.str("approved_by") == by {
		t.Fatalf("prepared and released by: %s", released.Raw)
	}
	p.must(200, "POST", "/v1/payment-runs/"+own.str("id")+"/cancel", both, nil)
	owners := p.must(201, "POST", "/v1/payment-runs", admin, create(inv4)).str("id")
	if r := p.must(200, "POST", "/v1/payment-runs/"+owners+"/approve", admin, nil); r.str("approved_by") != r.str("created_by") {
		t.Fatalf("the admin's own run: %s", r.Raw)
	}
	p.must(200, "POST", "/v1/payment-runs/"+owners+"/cancel", admin, nil)

	// Idempotency-Key: a repeat answers the first run.
	key := uuid.NewString()
	first := p.must(201, "POST", "/v1/payment-runs", writer, create(inv4), "Idempotency-Key", key)
	if again := p.must(201, "POST", "/v1/payment-runs", writer, create(inv4), "Idempotency-Key", key); again.str("id") != first.str("id") {
		t.Fatalf("repeat created another run: %s vs %s", again.Raw, first.Raw)
	}
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/payment-runs", writer, create(inv3), "Idempotency-Key", key)
	if got := p.must(200, "GET", "/v1/payment-runs?limit=2&offset=0", reader, nil).list("payment_runs"); len(got) != 2 || got[0]["id"] != first.str("id") {
		t.Fatalf("newest first: %v", got)
	}

	// Scopes.
	p.expectError(403, "FORBIDDEN", "POST", "/v1/payment-runs", reader, create(inv3))
	p.expectError(403, "FORBIDDEN", "GET", "/v1/payment-runs", outsider, nil)
	p.expectError(403, "FORBIDDEN", "GET", "/v1/payment-runs/"+id, outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/payment-runs", "", nil)
}

func manyIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = uuid.NewString()
	}
	return out
}

// TestPaymentRunConcurrent: runs over the same invoice created at once:
// exactly one wins, the others are INVOICE_ALREADY_IN_ACTIVE_RUN, and
// the invoice is in one run.
func TestPaymentRunConcurrent(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Gleichzeitig GmbH")
	bank := p.must(201, "POST", "/v1/bank-accounts", admin, map[string]any{"name": "Giro", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")
	v := p.must(201, "POST", "/v1/vendors", admin, map[string]any{"name": "Parallel AG", "iban": "AT611904300234573201"}).str("id")
	shared := p.postedInvoice(tenant, runInvoice{vendor: v, number: "P-1", gross: "10.00"})
	date := time.Now().UTC().AddDate(0, 0, 3).Format(time.DateOnly)
	const n = 8
	rs := make([]resp, n)
	var wg sync.WaitGroup
	for i := range rs {
		own := p.postedInvoice(tenant, runInvoice{vendor: v, number: "P-own-" + uuid.NewString()[:6], gross: "1.00"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i] = p.call("POST", "/v1/payment-runs", admin, map[string]any{"bank_account_id": bank, "execution_date": date, "invoice_ids": []string{own, shared}})
		}()
	}
	wg.Wait()
	won, refused := outcomes(t, "runs", rs, 201, "INVOICE_ALREADY_IN_ACTIVE_RUN")
	if won != 1 || refused != n-1 {
		t.Fatalf("%d runs created, %d refused; want 1 and %d", won, refused, n-1)
	}
	p.wantCount(1, `SELECT count(*) FROM payables.payment_runs WHERE tenant_id = $1`, tenant)
	p.wantCount(1, `SELECT count(*) FROM payables.payment_run_items WHERE tenant_id = $1 AND invoice_id = $2`, tenant, shared)
}
