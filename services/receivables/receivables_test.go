package receivables_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// TestLeitwegID checks real Leitweg-IDs: the specification's example, the
// XRechnung test ID and the Bund's central invoice portal.
func TestLeitwegID(t *testing.T) {
	for _, tc := range []struct{ id, issue string }{
		{"04011000-1234512345-06", ""},
		{"991-33333TEST-33", ""},
		{"991-33333test-33", ""},
		{"992-90009-96", ""},
		{"04011000-1234512345-07", "check digits do not match (ISO 7064 MOD 97-10)"},
		{"991-33333TEST-34", "check digits do not match (ISO 7064 MOD 97-10)"},
		{"04011000-1234512345", "a Leitweg-ID: 2 to 12 digits, optionally a hyphen and up to 30 letters or digits, a hyphen and 2 check digits, e.g. 04011000-1234512345-06"},
		{"1-06", "a Leitweg-ID: 2 to 12 digits, optionally a hyphen and up to 30 letters or digits, a hyphen and 2 check digits, e.g. 04011000-1234512345-06"},
		{"1234567890123-06", "a Leitweg-ID: 2 to 12 digits, optionally a hyphen and up to 30 letters or digits, a hyphen and 2 check digits, e.g. 04011000-1234512345-06"},
		{"04011000-12345_12345-06", "a Leitweg-ID: 2 to 12 digits, optionally a hyphen and up to 30 letters or digits, a hyphen and 2 check digits, e.g. 04011000-1234512345-06"},
	} {
		if diff := cmp.Diff(tc.issue, receivables.CheckLeitwegID(tc.id)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.id, diff)
		}
	}
	if got := receivables.LeitwegCheckDigits("04011000-1234512345"); got != "06" {
		t.Errorf("check digits %s, want 06", got)
	}
}

func ptr[T any](v T) *T { return &v }

func address() *receivablesv1.AddressInput {
	return &receivablesv1.AddressInput{Street: ptr("Hauptstr. 1"), Zip: ptr("10115"), City: ptr("Berlin")}
}

// fieldsOf is the code and the fields an error names.
func fieldsOf(err error) []string {
	if err == nil {
		return nil
	}
	e := errs.As(err)
	out := []string{e.Code}
	for _, d := range e.Details {
		out = append(out, d.Field+": "+d.Issue)
	}
	return out
}

func TestCheckDebtorInput(t *testing.T) {
	defaults := receivablesv1.PaymentTerms{Days: 14, CashDiscountRate: money.Zero}
	for _, tc := range []struct {
		name string
		in   receivablesv1.DebtorInput
		want receivables.Debtor
		errs []string
	}{
		{name: "minimal", in: receivablesv1.DebtorInput{Name: " Muster GmbH ", Address: address()},
			want: receivables.Debtor{Name: "Muster GmbH", Address: receivablesv1.Address{Street: "Hauptstr. 1", Zip: "10115", City: "Berlin", Country: "DE"},
				PaymentTerms: defaults, ReceivableAccount: "1200", IsActive: true}},
		{name: "everything", in: receivablesv1.DebtorInput{CustomerNumber: ptr("K/2025.01_a-1"), Name: "Stadt Bremen",
			Address: &receivablesv1.AddressInput{Street: ptr("Am Markt 21"), Zip: ptr("28195"), City: ptr("Bremen"), Country: ptr("DE")},
			VATID:   ptr("de 123456789"), Email: ptr(" rechnung@bremen.de "), LeitwegID: ptr("04011000-1234512345-06"), ReceivableAccount: ptr("1205"),
			PaymentTerms: &receivablesv1.PaymentTermsInput{Days: ptr(30), CashDiscountRate: ptr(money.MustParse("2.5")), CashDiscountDays: ptr(10)}},
			want: receivables.Debtor{CustomerNumber: "K/2025.01_a-1", Name: "Stadt Bremen",
				Address: receivablesv1.Address{Street: "Am Markt 21", Zip: "28195", City: "Bremen", Country: "DE"},
				VATID:   ptr("DE123456789"), Email: ptr("rechnung@bremen.de"), LeitwegID: ptr("04011000-1234512345-06"), ReceivableAccount: "1205",
				PaymentTerms: receivablesv1.PaymentTerms{Days: 30, CashDiscountRate: money.MustParse("2.5"), CashDiscountDays: 10}, IsActive: true}},
		{name: "empty optional texts are none", in: receivablesv1.DebtorInput{Name: "A", Address: address(), VATID: ptr(""), Email: ptr(" "), LeitwegID: ptr("")},
			want: receivables.Debtor{Name: "A", Address: receivablesv1.Address{Street: "Hauptstr. 1", Zip: "10115", City: "Berlin", Country: "DE"},
				PaymentTerms: defaults, ReceivableAccount: "1200", IsActive: true}},
		{name: "no address", in: receivablesv1.DebtorInput{Name: "A"},
			errs: []string{"INVALID_INPUT", "address: required: street, zip and city of the debtor's invoice address"}},
		{name: "address incomplete", in: receivablesv1.DebtorInput{Name: "A", Address: &receivablesv1.AddressInput{Street: ptr(" "), Country: ptr("XX")}},
			errs: []string{"INVALID_INPUT", "address.zip: required", "address.city: required", "address.street: required",
				"address.country: an ISO 3166-1 alpha-2 country code in upper case, e.g. DE"}},
		{name: "every field wrong", in: receivablesv1.DebtorInput{CustomerNumber: ptr("K 1"), Name: " ", Address: address(),
			VATID: ptr("DE1"), Email: ptr("not-an-address"), LeitwegID: ptr("04011000-1234512345-07"), ReceivableAccount: ptr("12a"),
			PaymentTerms: &receivablesv1.PaymentTermsInput{Days: ptr(366), CashDiscountRate: ptr(money.MustParse("2.555")), CashDiscountDays: ptr(-1)}},
			errs: []string{"INVALID_INPUT", "customer_number: 1 to 20 letters, digits or the characters - _ / .", "name: required",
				"vat_id: expected format DE + 9 digits", "email: an e-mail address such as buchhaltung@example.de",
				"leitweg_id: check digits do not match (ISO 7064 MOD 97-10)",
				"payment_terms.days: an integer from 0 to 365", "payment_terms.cash_discount_days: an integer from 0 to 365",
				"payment_terms.cash_discount_rate: a percentage from 0 to 100 with at most 2 decimals",
				"receivable_account: an SKR04 account number of 1 to 8 digits, e.g. 1200"}},
		{name: "too long", in: receivablesv1.DebtorInput{CustomerNumber: ptr("K-123456789012345678901"), Name: string(make([]byte, 256)), Address: address()},
			errs: []string{"INVALID_INPUT", "customer_number: 1 to 20 letters, digits or the characters - _ / .", "name: at most 255 characters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := receivables.CheckDebtorInput(tc.in)
			if diff := cmp.Diff(tc.errs, fieldsOf(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Fatalf("debtor (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestPaymentTerms(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   receivablesv1.PaymentTermsInput
		want receivablesv1.PaymentTerms
		errs []string
	}{
		{name: "defaults", want: receivablesv1.PaymentTerms{Days: 14, CashDiscountRate: money.Zero}},
		{name: "due at once", in: receivablesv1.PaymentTermsInput{Days: ptr(0)}, want: receivablesv1.PaymentTerms{Days: 0, CashDiscountRate: money.Zero}},
		{name: "limits", in: receivablesv1.PaymentTermsInput{Days: ptr(365), CashDiscountRate: ptr(money.MustParse("100")), CashDiscountDays: ptr(364)},
			want: receivablesv1.PaymentTerms{Days: 365, CashDiscountRate: money.MustParse("100"), CashDiscountDays: 364}},
		{name: "skonto days without a rate are kept", in: receivablesv1.PaymentTermsInput{Days: ptr(10), CashDiscountDays: ptr(20)},
			want: receivablesv1.PaymentTerms{Days: 10, CashDiscountRate: money.Zero, CashDiscountDays: 20}},
		{name: "skonto days not below the payment days", in: receivablesv1.PaymentTermsInput{CashDiscountRate: ptr(money.MustParse("2")), CashDiscountDays: ptr(14)},
			errs: []string{"INVALID_INPUT", "payment_terms.cash_discount_days: with a cash discount rate, fewer than the payment days (14)"}},
		{name: "rate over 100", in: receivablesv1.PaymentTermsInput{CashDiscountRate: ptr(money.MustParse("100.01"))},
			errs: []string{"INVALID_INPUT", "payment_terms.cash_discount_rate: a percentage from 0 to 100 with at most 2 decimals"}},
		{name: "negative rate", in: receivablesv1.PaymentTermsInput{CashDiscountRate: ptr(money.MustParse("-1"))},
			errs: []string{"INVALID_INPUT", "payment_terms.cash_discount_rate: a percentage from 0 to 100 with at most 2 decimals"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			d, err := receivables.CheckDebtorInput(receivablesv1.DebtorInput{Name: "A", Address: address(), PaymentTerms: &in})
			if diff := cmp.Diff(tc.errs, fieldsOf(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, d.PaymentTerms); diff != "" {
					t.Fatalf("terms (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestDebtorPatch(t *testing.T) {
	cur, err := receivables.CheckDebtorInput(receivablesv1.DebtorInput{CustomerNumber: ptr("K-10001"), Name: "Muster GmbH", Address: address(),
		VATID: ptr("DE123456789"), PaymentTerms: &receivablesv1.PaymentTermsInput{Days: ptr(30), CashDiscountRate: ptr(money.MustParse("2")), CashDiscountDays: ptr(10)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		in     receivablesv1.DebtorUpdate
		change func(d *receivables.Debtor)
		errs   []string
	}{
		{name: "empty", errs: []string{"NO_CHANGES"}},
		{name: "same values", in: receivablesv1.DebtorUpdate{Name: ptr(" Muster GmbH "), VATID: ptr("de123456789"), IsActive: ptr(true),
			Address:      &receivablesv1.AddressInput{City: ptr("Berlin")},
			PaymentTerms: &receivablesv1.PaymentTermsInput{CashDiscountRate: ptr(money.MustParse("2.00"))}}, errs: []string{"NO_CHANGES"}},
		{name: "deactivate", in: receivablesv1.DebtorUpdate{IsActive: ptr(false)}, change: func(d *receivables.Debtor) { d.IsActive = false }},
		{name: "remove the VAT ID, set an e-mail", in: receivablesv1.DebtorUpdate{VATID: ptr(""), Email: ptr("a@b.de")},
			change: func(d *receivables.Debtor) { d.VATID, d.Email = nil, ptr("a@b.de") }},
		{name: "one address field", in: receivablesv1.DebtorUpdate{Address: &receivablesv1.AddressInput{Country: ptr("AT"), Zip: ptr("1010")}},
			change: func(d *receivables.Debtor) { d.Address.Country, d.Address.Zip = "AT", "1010" }},
		{name: "terms checked against the current ones", in: receivablesv1.DebtorUpdate{PaymentTerms: &receivablesv1.PaymentTermsInput{Days: ptr(10)}},
			errs: []string{"INVALID_INPUT", "payment_terms.cash_discount_days: with a cash discount rate, fewer than the payment days (10)"}},
		{name: "no rate, no skonto rule", in: receivablesv1.DebtorUpdate{PaymentTerms: &receivablesv1.PaymentTermsInput{Days: ptr(10), CashDiscountRate: ptr(money.Zero)}},
			change: func(d *receivables.Debtor) { d.PaymentTerms.Days, d.PaymentTerms.CashDiscountRate = 10, money.Zero }},
		{name: "blank name", in: receivablesv1.DebtorUpdate{Name: ptr(" "), Address: &receivablesv1.AddressInput{Street: ptr("")}},
			errs: []string{"INVALID_INPUT", "name: required", "address.street: required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := receivables.CheckDebtorUpdate(tc.in)
			var got receivables.Debtor
			if err == nil {
				got, err = p.Apply(cur)
			}
			if diff := cmp.Diff(tc.errs, fieldsOf(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if err == nil {
				want := cur
				tc.change(&want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("debtor (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestInvoiceNumberFormat(t *testing.T) {
	got := []string{receivables.FormatInvoiceNumber("RE-", 2025, 1), receivables.FormatInvoiceNumber("", 2025, 123456),
		receivables.CheckInvoicePrefix("AR/2025."), receivables.CheckInvoicePrefix(""), receivables.CheckInvoicePrefix("RE 1"),
		receivables.CheckInvoicePrefix("ELFZEICHEN-")}
	want := []string{"RE-2025-00001", "2025-123456", "", "", "at most 10 letters, digits or the characters - _ / .",
		"at most 10 letters, digits or the characters - _ / ."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}
