package payables_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/services/payables"
)

func day(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }

func TestCheckRunInput(t *testing.T) {
	const bank, inv1, inv2 = "5d1f8a2c-3b4e-4f6a-9c8d-7e6f5a4b3c2d", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "1a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
	today := day("2026-03-10")
	many := make([]string, payables.MaxRunInvoices+1)
	for i := range many {
		many[i] = inv1
	}
	for _, tc := range []struct {
		name string
		in   payablesv1.PaymentRunInput
		want []string
	}{
		{"valid, today", payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-10", InvoiceIDs: []string{inv1, inv2}, Label: ptr(" KW 11 ")}, nil},
		{"empty label is none", payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-11", InvoiceIDs: []string{inv1}, Label: ptr("  ")}, nil},
		{"nothing", payablesv1.PaymentRunInput{}, []string{"INVALID_INPUT", "bank_account_id: required", "execution_date: required", "invoice_ids: required: at least one invoice id"}},
		{"malformed", payablesv1.PaymentRunInput{BankAccountID: "1800", ExecutionDate: "10.03.2026", InvoiceIDs: []string{"RE-1"}},
			[]string{"INVALID_INPUT", "bank_account_id: a UUID", "execution_date: a date YYYY-MM-DD", "invoice_ids[0]: a UUID"}},
		{"yesterday", payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-09", InvoiceIDs: []string{inv1}},
			[]string{"INVALID_INPUT", "execution_date: not in the past (today is 2026-03-10)"}},
		{"twice, in another case", payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-10", InvoiceIDs: []string{inv1, strings.ToUpper(inv1)}},
			[]string{"INVALID_INPUT", "invoice_ids[1]: given twice"}},
		{"too many", payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-10", InvoiceIDs: many},
			[]string{"INVALID_INPUT", "invoice_ids: at most 1000 invoices per run"}},
		{"label too long", payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-10", InvoiceIDs: []string{inv1}, Label: ptr(strings.Repeat("ä", 141))},
			[]string{"INVALID_INPUT", "label: at most 140 characters"}},
		{"label with a line break", payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-10", InvoiceIDs: []string{inv1}, Label: ptr("a\nb")},
			[]string{"INVALID_INPUT", "label: no control characters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := payables.CheckRunInput(tc.in, today)
			if diff := cmp.Diff(tc.want, fieldsOf(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if err == nil && (r.ExecutionDate.Format(time.DateOnly) != tc.in.ExecutionDate || len(r.InvoiceIDs) != len(tc.in.InvoiceIDs)) {
				t.Fatalf("checked run %+v", r)
			}
		})
	}
	r, _ := payables.CheckRunInput(payablesv1.PaymentRunInput{BankAccountID: bank, ExecutionDate: "2026-03-10", InvoiceIDs: []string{inv1}, Label: ptr(" KW 11 ")}, today)
	if r.Label == nil || *r.Label != "KW 11" {
		t.Fatalf("label %v", r.Label)
	}
}

func TestDiscount(t *testing.T) {
	rate := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	until := day("2026-03-20")
	for _, tc := range []struct {
		name, open string
		rate       *decimal.Decimal
		until      *time.Time
		exec       string
		want       string
	}{
		{"before the discount date", "119.00", rate("2"), &until, "2026-03-19", "2.38"},
		{"on the discount date", "119.00", rate("2"), &until, "2026-03-20", "2.38"},
		{"after the discount date", "119.00", rate("2"), &until, "2026-03-21", "0"},
		{"no discount", "119.00", nil, nil, "2026-03-19", "0"},
		{"half a cent rounds up", "33.33", rate("1.5"), &until, "2026-03-19", "0.5"},
		{"exact cents", "1234.56", rate("3"), &until, "2026-03-19", "37.04"},
		{"of what is open", "400.00", rate("3"), &until, "2026-03-19", "12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := payables.Discount(money.MustParse(tc.open), tc.rate, tc.until, day(tc.exec))
			if !got.Equal(decimal.RequireFromString(tc.want)) {
				t.Fatalf("Discount = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPlanItems(t *testing.T) {
	rate := decimal.RequireFromString("2")
	until := day("2026-03-20")
	iban, bad := "DE89370400440532013000", "DE89370400440532013001"
	open := func(id, vendor, name string, iban *string, gross, paid string) payables.OpenInvoice {
		return payables.OpenInvoice{ID: id, VendorID: vendor, VendorName: name, VendorIBAN: iban, InvoiceNumber: "RE-" + id[:1],
			State: "posted", Currency: "EUR", Gross: money.MustParse(gross), Paid: money.MustParse(paid)}
	}
	const a, b, c, d, e = "a0000000-0000-4000-8000-000000000000", "b0000000-0000-4000-8000-000000000000", "c0000000-0000-4000-8000-000000000000",
		"d0000000-0000-4000-8000-000000000000", "e0000000-0000-4000-8000-000000000000"
	skonto := open(a, "v1", "Nord", &iban, "119.00", "0")
	skonto.DiscountRate, skonto.DiscountUntil = &rate, &until
	invs := []payables.OpenInvoice{skonto, open(b, "v1", "Nord", &iban, "500.00", "100.00")}

	items, err := payables.PlanItems(day("2026-03-20"), []string{b, a}, invs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.InvoiceNumber+" "+it.Amount.StringFixed(2)+" "+it.Discount.StringFixed(2)+" "+it.Remittance+" "+it.EndToEndID)
	}
	if diff := cmp.Diff([]string{"RE-b 400.00 0.00 RE-b b0000000000040008000000000000000", "RE-a 116.62 2.38 RE-a a0000000000040008000000000000000"}, got); diff != "" {
		t.Fatalf("items in the order requested (-want +got):\n%s", diff)
	}

	draft := open(c, "v1", "Nord", &iban, "10.00", "0")
	draft.State = "draft"
	usd := open(e, "v1", "Nord", &iban, "10.00", "0")
	usd.Currency = "USD"
	for _, tc := range []struct {
		name string
		ids  []string
		invs []payables.OpenInvoice
		want []string
	}{
		{"unknown, draft and paid", []string{a, c, d, b}, []payables.OpenInvoice{skonto, draft, open(b, "v1", "Nord", &iban, "5.00", "5.00")},
			[]string{"INVOICE_NOT_FOUND", "invoice_ids[1]: no open posted invoice " + c, "invoice_ids[2]: no open posted invoice " + d, "invoice_ids[3]: no open posted invoice " + b}},
		{"vendors without IBAN, each once", []string{a, b, c, d}, []payables.OpenInvoice{skonto, open(b, "v2", "Ohne", nil, "1.00", "0"),
			open(c, "v2", "Ohne", nil, "2.00", "0"), open(d, "v3", "Falsch", &bad, "3.00", "0")},
			[]string{"VENDOR_IBAN_MISSING", "invoice_ids[1]: vendor Ohne (v2) has no IBAN", "invoice_ids[3]: vendor Falsch (v3) has no valid SEPA IBAN: check digits do not match"}},
		{"not in EUR", []string{e}, []payables.OpenInvoice{usd}, []string{"INVALID_INPUT", "invoice_ids[0]: invoice RE-e is in USD; SEPA credit transfers are in EUR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := payables.PlanItems(day("2026-03-20"), tc.ids, tc.invs)
			if diff := cmp.Diff(tc.want, fieldsOf(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPainFile: a run's file is valid against the ISO schema; the debtor
// without an address and a creditor without a town are written without
// one, a creditor without a country takes its IBAN's.
func TestPainFile(t *testing.T) {
	bic := "COBADEFFXXX"
	f := payables.RunFile{
		Run:    payables.PaymentRun{ID: "3b0e6f2a-9c1d-4e8b-a7f5-2d4c6b8a0e1f", ExecutionDate: "2026-03-20"},
		Debtor: payables.Debtor{Name: "Zahllauf GmbH", IBAN: "DE02120300000000202051"},
		Items: []payables.RunItem{
			{PaymentRunItem: payablesv1.PaymentRunItem{VendorName: "Bürobedarf Nord GmbH", InvoiceNumber: "RE-1", IBAN: "DE89370400440532013000", BIC: &bic,
				Amount: money.MustParse("116.62"), EndToEndID: "a0000000000040008000000000000000"},
				Address: payablesv1.Address{Street: "Hafenstr. 5", Zip: "20457", City: "Hamburg"}},
			{PaymentRunItem: payablesv1.PaymentRunItem{VendorName: "Alpen Holz KG", InvoiceNumber: "AH/7", IBAN: "AT611904300234573201",
				Amount: money.MustParse("1000"), EndToEndID: "b0000000000040008000000000000000"}, Address: payablesv1.Address{Street: "Ohne Ort 1"}},
		},
	}
	doc, err := payables.PainFile(f, time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "pain.xml")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("xmllint", "--noout", "--schema", "sepa/testdata/pain.001.001.09.xsd", file).CombinedOutput(); err != nil {
		t.Fatalf("xmllint: %v\n%s\n%s", err, out, doc)
	}
	for _, want := range []string{"<MsgId>3b0e6f2a9c1d4e8ba7f52d4c6b8a0e1f</MsgId>", "<CtrlSum>1116.62</CtrlSum>", "<Dt>2026-03-20</Dt>",
		"<TwnNm>Hamburg</TwnNm>", "<Ctry>DE</Ctry>", "<Nm>Buerobedarf Nord GmbH</Nm>", "<Ustrd>AH/7</Ustrd>", "<InstdAmt Ccy=\"EUR\">1000.00</InstdAmt>"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("file lacks %s:\n%s", want, doc)
		}
	}
	if n := strings.Count(string(doc), "<PstlAdr>"); n != 1 {
		t.Errorf("%d addresses, want the one creditor's with a town:\n%s", n, doc)
	}
}
