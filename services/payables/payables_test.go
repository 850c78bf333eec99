package payables_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/payables"
)

func ptr[T any](v T) *T { return &v }

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

func TestNameKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Müller GmbH", "mueller"},
		{"MUELLER GMBH", "mueller"},
		{"Müller", "mueller"},
		{"müller gmbh & co. kg", "mueller"},
		{"Müller GmbH & Co. KG", "mueller"},
		{"Weiß e.K.", "weiss"},
		{"WEISS E.K.", "weiss"},
		{"Weiß e. K.", "weiss"},
		{"Sportverein Nord e. V.", "sportverein nord"},
		{"A. B. C. Bau GmbH", "abc bau"},
		{"ABC Bau", "abc bau"},
		{"Haus 5 B", "haus 5b"},
		{"Bäckerei Öztürk UG (haftungsbeschränkt)", "baeckerei oeztuerk"},
		{"  Schulze   &   Söhne  OHG ", "schulze soehne"},
		{"Société Générale S.A.", "societe generale"},
		{"Acme Ltd.", "acme"},
		{"ACME Inc", "acme"},
		{"Meier-Schmidt GbR", "meier schmidt"},
		{"Meier Schmidt", "meier schmidt"},
		{"Stadtwerke AG", "stadtwerke"},
		{"Deutsche Bahn AG", "deutsche bahn"},
		{"Siemens Energy SE", "siemens energy"},
		{"Merck KGaA", "merck"},
		{"ABN AMRO Bank N.V.", "abn amro bank"},
		{"Philips B.V.", "philips"},
		{"Kanzlei Dr. Roth mbH", "kanzlei dr roth"},
		{"3M Deutschland GmbH", "3m deutschland"},
		{"GmbH & Co. KG", "gmbh co kg"}, // legal forms only: kept, so the key is not empty
		{"AG", "ag"},
	} {
		if diff := cmp.Diff(tc.want, payables.NameKey(tc.in)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestCheckVendorInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   payablesv1.VendorInput
		want payables.Vendor
		errs []string
	}{
		{name: "minimal", in: payablesv1.VendorInput{Name: " Müller GmbH "},
			want: payables.Vendor{Name: "Müller GmbH", IsActive: true}},
		{name: "everything", in: payablesv1.VendorInput{Name: "Bürobedarf Nord GmbH", TaxID: ptr(" 143/123/45678 "), VATID: ptr("de 123 456 789"),
			IBAN: ptr("de89 3704 0044 0532 0130 00"), BIC: ptr(" cobadeffxxx "),
			Address:        &payablesv1.AddressInput{Street: ptr(" Hafenstr. 5 "), Zip: ptr("20457"), City: ptr("Hamburg"), Country: ptr("DE")},
			DefaultAccount: ptr("6815"), Notes: ptr(" Lieferung nur werktags\nBestellungen per Mail ")},
			want: payables.Vendor{Name: "Bürobedarf Nord GmbH", TaxID: ptr("143/123/45678"), VATID: ptr("DE123456789"),
				IBAN: ptr("DE89370400440532013000"), BIC: ptr("COBADEFFXXX"),
				Address:        &payablesv1.Address{Street: "Hafenstr. 5", Zip: "20457", City: "Hamburg", Country: "DE"},
				DefaultAccount: ptr("6815"), Notes: ptr("Lieferung nur werktags\nBestellungen per Mail"), IsActive: true}},
		{name: "13-digit tax number", in: payablesv1.VendorInput{Name: "A", TaxID: ptr("2181508150005")},
			want: payables.Vendor{Name: "A", TaxID: ptr("2181508150005"), IsActive: true}},
		{name: "tax number with spaces", in: payablesv1.VendorInput{Name: "A", TaxID: ptr("143 / 123 / 45678")},
			want: payables.Vendor{Name: "A", TaxID: ptr("143/123/45678"), IsActive: true}},
		{name: "part of an address", in: payablesv1.VendorInput{Name: "A", Address: &payablesv1.AddressInput{City: ptr("Köln")}},
			want: payables.Vendor{Name: "A", Address: &payablesv1.Address{City: "Köln"}, IsActive: true}},
		{name: "empty address is none", in: payablesv1.VendorInput{Name: "A", Address: &payablesv1.AddressInput{Street: ptr(" ")}},
			want: payables.Vendor{Name: "A", IsActive: true}},
		{name: "empty optional texts are none", in: payablesv1.VendorInput{Name: "A", TaxID: ptr(""), VATID: ptr(" "), IBAN: ptr(""), BIC: ptr(""),
			DefaultAccount: ptr(""), Notes: ptr("  ")},
			want: payables.Vendor{Name: "A", IsActive: true}},
		{name: "no name", in: payablesv1.VendorInput{Name: " "}, errs: []string{"INVALID_INPUT", "name: required"}},
		{name: "name too long", in: payablesv1.VendorInput{Name: strings.Repeat("ä", 256)}, errs: []string{"INVALID_INPUT", "name: at most 255 characters"}},
		{name: "name 255 characters", in: payablesv1.VendorInput{Name: strings.Repeat("ä", 255)}, want: payables.Vendor{Name: strings.Repeat("ä", 255), IsActive: true}},
		{name: "control character", in: payablesv1.VendorInput{Name: "A\x00B"}, errs: []string{"INVALID_INPUT", "name: no control characters"}},
		{name: "every field wrong", in: payablesv1.VendorInput{Name: "A", TaxID: ptr("143-123-45678"), VATID: ptr("DE12345678"),
			IBAN: ptr("DE89370400440532013001"), BIC: ptr("COBADEF"),
			Address:        &payablesv1.AddressInput{Street: ptr(strings.Repeat("s", 256)), Zip: ptr(strings.Repeat("1", 17)), City: ptr("a\tb"), Country: ptr("de")},
			DefaultAccount: ptr("68a"), Notes: ptr(strings.Repeat("n", 2001))},
			errs: []string{"INVALID_INPUT",
				"tax_id: a tax number (Steuernummer) of digits and slashes, e.g. 143/123/45678 or 2181508150005",
				"vat_id: expected format DE + 9 digits",
				"iban: check digits do not match (ISO 13616 mod 97)",
				"bic: 8 or 11 characters: 4 letters (bank), 2 letters (country), 2 letters or digits (location), optionally 3 letters or digits (branch)",
				"address.street: at most 255 characters", "address.zip: at most 16 characters", "address.city: no control characters",
				"address.country: an ISO 3166-1 alpha-2 country code in upper case, e.g. DE",
				"default_account: an SKR04 account number of 1 to 8 digits, e.g. 5400",
				"notes: at most 2000 characters"}},
		{name: "too long", in: payablesv1.VendorInput{Name: "A", TaxID: ptr("123456789012345678901"), VATID: ptr("DE1234567890123456789"),
			IBAN: ptr("DE893704004405320130000000000000000")},
			errs: []string{"INVALID_INPUT", "tax_id: at most 20 characters", "vat_id: at most 20 characters", "iban: at most 34 characters"}},
		{name: "tax number shapes", in: payablesv1.VendorInput{Name: "A", TaxID: ptr("/143/123")},
			errs: []string{"INVALID_INPUT", "tax_id: a tax number (Steuernummer) of digits and slashes, e.g. 143/123/45678 or 2181508150005"}},
		{name: "VAT ID outside the EU", in: payablesv1.VendorInput{Name: "A", VATID: ptr("GB123456789")},
			errs: []string{"INVALID_INPUT", "vat_id: an EU VAT ID beginning with the country prefix of an EU member state (EL for Greece) or XI, e.g. DE123456789"}},
		{name: "IBAN of the wrong length", in: payablesv1.VendorInput{Name: "A", IBAN: ptr("AT61190430023457320")},
			errs: []string{"INVALID_INPUT", "iban: an IBAN of AT has 20 characters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := payables.CheckVendorInput(tc.in)
			if diff := cmp.Diff(tc.errs, fieldsOf(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Fatalf("vendor (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestVendorPatch(t *testing.T) {
	cur, err := payables.CheckVendorInput(payablesv1.VendorInput{Name: "Müller GmbH", VATID: ptr("DE123456789"), IBAN: ptr("DE89370400440532013000"),
		Address: &payablesv1.AddressInput{Street: ptr("Hauptstr. 1"), Zip: ptr("10115"), City: ptr("Berlin"), Country: ptr("DE")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		in     payablesv1.VendorUpdate
		change func(v *payables.Vendor)
		errs   []string
	}{
		{name: "empty", errs: []string{"NO_CHANGES"}},
		{name: "same values", in: payablesv1.VendorUpdate{Name: ptr(" Müller GmbH "), VATID: ptr("de 123456789"), IBAN: ptr("DE89 3704 0044 0532 0130 00"),
			IsActive: ptr(true), Address: &payablesv1.AddressInput{City: ptr("Berlin")}, TaxID: ptr(""), Notes: ptr("")}, errs: []string{"NO_CHANGES"}},
		{name: "deactivate", in: payablesv1.VendorUpdate{IsActive: ptr(false)}, change: func(v *payables.Vendor) { v.IsActive = false }},
		{name: "remove the VAT ID and IBAN, set a tax number and notes", in: payablesv1.VendorUpdate{VATID: ptr(""), IBAN: ptr(" "),
			TaxID: ptr("143/123/45678"), Notes: ptr("neu"), BIC: ptr("COBADEFF"), DefaultAccount: ptr("5400")},
			change: func(v *payables.Vendor) {
				v.VATID, v.IBAN, v.TaxID, v.Notes, v.BIC, v.DefaultAccount = nil, nil, ptr("143/123/45678"), ptr("neu"), ptr("COBADEFF"), ptr("5400")
			}},
		{name: "one address field", in: payablesv1.VendorUpdate{Address: &payablesv1.AddressInput{Country: ptr("AT"), Zip: ptr(" 1010 ")}},
			change: func(v *payables.Vendor) { v.Address.Country, v.Address.Zip = "AT", "1010" }},
		{name: "every address field emptied", in: payablesv1.VendorUpdate{Address: &payablesv1.AddressInput{Street: ptr(""), Zip: ptr(""), City: ptr(""), Country: ptr("")}},
			change: func(v *payables.Vendor) { v.Address = nil }},
		{name: "rename", in: payablesv1.VendorUpdate{Name: ptr("Müller & Söhne GmbH")}, change: func(v *payables.Vendor) { v.Name = "Müller & Söhne GmbH" }},
		{name: "blank name and bad fields", in: payablesv1.VendorUpdate{Name: ptr(" "), IBAN: ptr("DE00"), Address: &payablesv1.AddressInput{Country: ptr("XX")}},
			errs: []string{"INVALID_INPUT", "name: required", "iban: 15 to 34 letters and digits",
				"address.country: an ISO 3166-1 alpha-2 country code in upper case, e.g. DE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := payables.CheckVendorUpdate(tc.in)
			var got payables.Vendor
			if err == nil {
				got, err = p.Apply(cur)
			}
			if diff := cmp.Diff(tc.errs, fieldsOf(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if err == nil {
				want := cur
				if cur.Address != nil {
					a := *cur.Address
					want.Address = &a
				}
				tc.change(&want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("vendor (-want +got):\n%s", diff)
				}
			}
		})
	}
}
