package einvoice_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice/einvoicetest"
)

// The structural test needs nothing outside the repository (the schematron
// validator in validator_test.go does): it checks the produced XML against
// the D16B schema's sequences for every element this package writes, the
// required elements, the number formats and that the amounts add up
// (BR-CO-10, BR-CO-13..17).

// childOrder transcribes, for each parent element, the xsd:sequence of
// CrossIndustryInvoice_100pD16B.xsd restricted to the children this package
// uses; a child missing here is reported as unexpected.
var childOrder = map[string][]string{
	"CrossIndustryInvoice":                             {"ExchangedDocumentContext", "ExchangedDocument", "SupplyChainTradeTransaction"},
	"ExchangedDocumentContext":                         {"BusinessProcessSpecifiedDocumentContextParameter", "GuidelineSpecifiedDocumentContextParameter"},
	"BusinessProcessSpecifiedDocumentContextParameter": {"ID"},
	"GuidelineSpecifiedDocumentContextParameter":       {"ID"},
	"ExchangedDocument":                                {"ID", "TypeCode", "IssueDateTime", "IncludedNote"},
	"IncludedNote":                                     {"Content"},
	"IssueDateTime":                                    {"DateTimeString"},
	"OccurrenceDateTime":                               {"DateTimeString"},
	"DueDateDateTime":                                  {"DateTimeString"},
	"StartDateTime":                                    {"DateTimeString"},
	"EndDateTime":                                      {"DateTimeString"},
	"FormattedIssueDateTime":                           {"DateTimeString"},
	"SupplyChainTradeTransaction":                      {"IncludedSupplyChainTradeLineItem", "ApplicableHeaderTradeAgreement", "ApplicableHeaderTradeDelivery", "ApplicableHeaderTradeSettlement"},
	"IncludedSupplyChainTradeLineItem":                 {"AssociatedDocumentLineDocument", "SpecifiedTradeProduct", "SpecifiedLineTradeAgreement", "SpecifiedLineTradeDelivery", "SpecifiedLineTradeSettlement"},
	"AssociatedDocumentLineDocument":                   {"LineID"},
	"SpecifiedTradeProduct":                            {"Name"},
	"SpecifiedLineTradeAgreement":                      {"GrossPriceProductTradePrice", "NetPriceProductTradePrice"},
	"NetPriceProductTradePrice":                        {"ChargeAmount"},
	"SpecifiedLineTradeDelivery":                       {"BilledQuantity"},
	"SpecifiedLineTradeSettlement":                     {"ApplicableTradeTax", "BillingSpecifiedPeriod", "SpecifiedTradeAllowanceCharge", "SpecifiedTradeSettlementLineMonetarySummation"},
	"ApplicableTradeTax":                               {"CalculatedAmount", "TypeCode", "ExemptionReason", "BasisAmount", "CategoryCode", "ExemptionReasonCode", "RateApplicablePercent"},
	"SpecifiedTradeAllowanceCharge":                    {"ChargeIndicator", "ActualAmount", "ReasonCode", "Reason"},
	"ChargeIndicator":                                  {"Indicator"},
	"SpecifiedTradeSettlementLineMonetarySummation":    {"LineTotalAmount"},
	"ApplicableHeaderTradeAgreement":                   {"BuyerReference", "SellerTradeParty", "BuyerTradeParty", "BuyerOrderReferencedDocument"},
	"SellerTradeParty":                                 {"Name", "DefinedTradeContact", "PostalTradeAddress", "URIUniversalCommunication", "SpecifiedTaxRegistration"},
	"BuyerTradeParty":                                  {"Name", "PostalTradeAddress", "URIUniversalCommunication", "SpecifiedTaxRegistration"},
	"ShipToTradeParty":                                 {"Name", "PostalTradeAddress"},
	"DefinedTradeContact":                              {"PersonName", "TelephoneUniversalCommunication", "EmailURIUniversalCommunication"},
	"TelephoneUniversalCommunication":                  {"CompleteNumber"},
	"EmailURIUniversalCommunication":                   {"URIID"},
	"URIUniversalCommunication":                        {"URIID"},
	"PostalTradeAddress":                               {"PostcodeCode", "LineOne", "CityName", "CountryID"},
	"SpecifiedTaxRegistration":                         {"ID"},
	"BuyerOrderReferencedDocument":                     {"IssuerAssignedID"},
	"InvoiceReferencedDocument":                        {"IssuerAssignedID", "FormattedIssueDateTime"},
	"ApplicableHeaderTradeDelivery":                    {"ShipToTradeParty", "ActualDeliverySupplyChainEvent"},
	"ActualDeliverySupplyChainEvent":                   {"OccurrenceDateTime"},
	"ApplicableHeaderTradeSettlement":                  {"PaymentReference", "TaxCurrencyCode", "InvoiceCurrencyCode", "SpecifiedTradeSettlementPaymentMeans", "ApplicableTradeTax", "BillingSpecifiedPeriod", "SpecifiedTradePaymentTerms", "SpecifiedTradeSettlementHeaderMonetarySummation", "InvoiceReferencedDocument"},
	"SpecifiedTradeSettlementPaymentMeans":             {"TypeCode", "Information", "PayeePartyCreditorFinancialAccount", "PayeeSpecifiedCreditorFinancialInstitution"},
	"PayeePartyCreditorFinancialAccount":               {"IBANID", "AccountName"},
	"PayeeSpecifiedCreditorFinancialInstitution":       {"BICID"},
	"BillingSpecifiedPeriod":                           {"StartDateTime", "EndDateTime"},
	"SpecifiedTradePaymentTerms":                       {"Description", "DueDateDateTime"},
	"SpecifiedTradeSettlementHeaderMonetarySummation": {"LineTotalAmount", "ChargeTotalAmount", "AllowanceTotalAmount",
		"TaxBasisTotalAmount", "TaxTotalAmount", "RoundingAmount", "GrandTotalAmount", "TotalPrepaidAmount", "DuePayableAmount"},
}

// required lists the children the schema (minOccurs=1) or EN 16931 demands.
var required = map[string][]string{
	"CrossIndustryInvoice":                            {"ExchangedDocumentContext", "ExchangedDocument", "SupplyChainTradeTransaction"},
	"ExchangedDocumentContext":                        {"GuidelineSpecifiedDocumentContextParameter"},
	"ExchangedDocument":                               {"ID", "TypeCode", "IssueDateTime"},
	"SupplyChainTradeTransaction":                     {"IncludedSupplyChainTradeLineItem", "ApplicableHeaderTradeAgreement", "ApplicableHeaderTradeDelivery", "ApplicableHeaderTradeSettlement"},
	"IncludedSupplyChainTradeLineItem":                {"AssociatedDocumentLineDocument", "SpecifiedTradeProduct", "SpecifiedLineTradeAgreement", "SpecifiedLineTradeDelivery", "SpecifiedLineTradeSettlement"},
	"SpecifiedLineTradeAgreement":                     {"NetPriceProductTradePrice"},
	"SpecifiedLineTradeSettlement":                    {"ApplicableTradeTax", "SpecifiedTradeSettlementLineMonetarySummation"},
	"ApplicableTradeTax":                              {"TypeCode", "CategoryCode"},
	"ApplicableHeaderTradeAgreement":                  {"SellerTradeParty", "BuyerTradeParty"},
	"SellerTradeParty":                                {"Name", "PostalTradeAddress"},
	"BuyerTradeParty":                                 {"Name", "PostalTradeAddress"},
	"PostalTradeAddress":                              {"CountryID"},
	"ApplicableHeaderTradeSettlement":                 {"InvoiceCurrencyCode", "ApplicableTradeTax", "SpecifiedTradeSettlementHeaderMonetarySummation"},
	"SpecifiedTradeSettlementHeaderMonetarySummation": {"LineTotalAmount", "TaxBasisTotalAmount", "GrandTotalAmount", "DuePayableAmount"},
}

// repeatable are the children that may occur more than once under a parent.
var repeatable = map[string]bool{
	"IncludedNote": true, "IncludedSupplyChainTradeLineItem": true, "SpecifiedTaxRegistration": true,
	"TaxTotalAmount": true, "SpecifiedTradeAllowanceCharge": true,
	"ApplicableHeaderTradeSettlement/ApplicableTradeTax": true,
}

var namespaces = map[string]string{
	"urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100":                       "rsm",
	"urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100": "ram",
	"urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100":                        "udt",
	"urn:un:unece:uncefact:data:standard:QualifiedDataType:100":                          "qdt",
}

// reporter is the part of testing.T the checks use, so a test can hand them
// a recorder and prove they fail on bad input.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// recorder is a reporter that remembers whether anything was reported.
type recorder struct{ failed bool }

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(string, ...any)     { r.failed = true }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = true; runtime.Goexit() }

type node struct {
	ns, name string
	attrs    map[string]string
	text     string
	kids     []*node
}

func (n *node) all(name string) []*node {
	var out []*node
	for _, k := range n.kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

func (n *node) one(t reporter, path string) *node {
	t.Helper()
	cur := n
	for _, p := range strings.Split(path, "/") {
		ks := cur.all(p)
		if len(ks) != 1 {
			t.Fatalf("%s: %d <%s> under <%s>, want 1", path, len(ks), p, cur.name)
		}
		cur = ks[0]
	}
	return cur
}

func parse(t *testing.T, b []byte) *node {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{ns: tok.Name.Space, name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				if a.Name.Space == "" {
					n.attrs[a.Name.Local] = a.Value
				}
			}
			if len(stack) == 0 {
				root = n
			} else {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tok)
			}
		}
	}
	return root
}

var (
	reAmount = regexp.MustCompile(`^-?[0-9]+\.[0-9]{2}$`)
	rePrice  = regexp.MustCompile(`^-?[0-9]+\.[0-9]{4}$`)
	reDate   = regexp.MustCompile(`^[0-9]{8}$`)
)

var amountElements = map[string]bool{"CalculatedAmount": true, "BasisAmount": true, "RateApplicablePercent": true,
	"LineTotalAmount": true, "TaxBasisTotalAmount": true, "TaxTotalAmount": true, "GrandTotalAmount": true,
	"DuePayableAmount": true, "ActualAmount": true}

// checkStructure walks the tree and reports every schema-order, required,
// namespace and number-format violation.
func checkStructure(n *node, path string, problems *[]string) {
	add := func(format string, args ...any) {
		*problems = append(*problems, path+": "+fmt.Sprintf(format, args...))
	}
	if _, ok := namespaces[n.ns]; !ok {
		add("namespace %q", n.ns)
	}
	if len(n.kids) > 0 && strings.TrimSpace(n.text) != "" {
		add("mixed content %q", n.text)
	}
	if len(n.kids) == 0 {
		// Every child of ApplicableHeaderTradeDelivery is optional, so it
		// may be empty (a service period instead of a delivery date).
		_, isParent := childOrder[n.name]
		if isParent && n.name != "ApplicableHeaderTradeDelivery" {
			add("empty aggregate")
		}
		if !isParent && strings.TrimSpace(n.text) == "" {
			add("empty element")
		}
	}
	switch {
	case amountElements[n.name] && !reAmount.MatchString(n.text):
		add("amount %q is not formatted with 2 decimals", n.text)
	case (n.name == "ChargeAmount" || n.name == "BilledQuantity") && !rePrice.MatchString(n.text):
		add("%q is not formatted with 4 decimals", n.text)
	case n.name == "DateTimeString" && (!reDate.MatchString(n.text) || n.attrs["format"] != "102"):
		add("date %q format %q", n.text, n.attrs["format"])
	case n.name == "TaxTotalAmount" && n.attrs["currencyID"] == "":
		add("no currencyID")
	case n.name == "BilledQuantity" && n.attrs["unitCode"] == "":
		add("no unitCode")
	}
	order, known := childOrder[n.name]
	if len(n.kids) > 0 && !known {
		add("no schema order known for <%s>", n.name)
	}
	pos := map[string]int{}
	for i, c := range order {
		pos[c] = i
	}
	last, count := -1, map[string]int{}
	for _, k := range n.kids {
		p, ok := pos[k.name]
		if !ok {
			add("unexpected <%s>", k.name)
			continue
		}
		if p < last {
			add("<%s> out of schema order", k.name)
		}
		last = p
		count[k.name]++
		if count[k.name] == 2 && !repeatable[k.name] && !repeatable[n.name+"/"+k.name] {
			add("<%s> repeated", k.name)
		}
	}
	for _, r := range required[n.name] {
		if count[r] == 0 {
			add("required <%s> missing", r)
		}
	}
	for _, k := range n.kids {
		checkStructure(k, path+"/"+k.name, problems)
	}
}

func amt(t reporter, n *node) decimal.Decimal {
	t.Helper()
	v, err := decimal.NewFromString(n.text)
	if err != nil {
		t.Fatalf("<%s> %q: %v", n.name, n.text, err)
	}
	return v
}

// checkArithmetic recomputes the totals from the XML alone.
func checkArithmetic(t reporter, root *node, currency string) {
	t.Helper()
	tx := root.one(t, "SupplyChainTradeTransaction")
	type key struct{ cat, rate string }
	basis := map[key]decimal.Decimal{}
	lineSum := decimal.Zero
	for _, li := range tx.all("IncludedSupplyChainTradeLineItem") {
		net := amt(t, li.one(t, "SpecifiedLineTradeSettlement/SpecifiedTradeSettlementLineMonetarySummation/LineTotalAmount"))
		qty := amt(t, li.one(t, "SpecifiedLineTradeDelivery/BilledQuantity"))
		price := amt(t, li.one(t, "SpecifiedLineTradeAgreement/NetPriceProductTradePrice/ChargeAmount"))
		allow := decimal.Zero
		for _, ac := range li.one(t, "SpecifiedLineTradeSettlement").all("SpecifiedTradeAllowanceCharge") {
			allow = allow.Add(amt(t, ac.one(t, "ActualAmount")))
		}
		if want := qty.Mul(price).Sub(allow).Round(2); !want.Equal(net) {
			t.Errorf("line net %s, want %s * %s - %s = %s", net, qty, price, allow, want)
		}
		lineSum = lineSum.Add(net)
		tax := li.one(t, "SpecifiedLineTradeSettlement/ApplicableTradeTax")
		k := key{tax.one(t, "CategoryCode").text, tax.one(t, "RateApplicablePercent").text}
		basis[k] = basis[k].Add(net)
	}
	st := tx.one(t, "ApplicableHeaderTradeSettlement")
	taxSum := decimal.Zero
	groups := st.all("ApplicableTradeTax")
	if len(groups) != len(basis) {
		t.Errorf("%d VAT breakdown groups, lines have %d (category, rate) pairs", len(groups), len(basis))
	}
	for _, g := range groups {
		k := key{g.one(t, "CategoryCode").text, g.one(t, "RateApplicablePercent").text}
		b, tax := amt(t, g.one(t, "BasisAmount")), amt(t, g.one(t, "CalculatedAmount"))
		if !b.Equal(basis[k]) {
			t.Errorf("group %v basis %s, lines sum to %s (BR-CO-18)", k, b, basis[k])
		}
		rate := decimal.RequireFromString(k.rate)
		if want := b.Mul(rate).Div(decimal.NewFromInt(100)).Round(2); !want.Equal(tax) {
			t.Errorf("group %v tax %s, want %s (BR-CO-17)", k, tax, want)
		}
		taxSum = taxSum.Add(tax)
	}
	sum := st.one(t, "SpecifiedTradeSettlementHeaderMonetarySummation")
	lineTotal, basisTotal := amt(t, sum.one(t, "LineTotalAmount")), amt(t, sum.one(t, "TaxBasisTotalAmount"))
	grand, due := amt(t, sum.one(t, "GrandTotalAmount")), amt(t, sum.one(t, "DuePayableAmount"))
	var taxTotal *decimal.Decimal
	for _, tt := range sum.all("TaxTotalAmount") {
		if tt.attrs["currencyID"] == currency {
			v := amt(t, tt)
			taxTotal = &v
		}
	}
	if taxTotal == nil {
		t.Fatalf("no TaxTotalAmount in %s", currency)
	}
	for _, c := range []struct {
		rule      string
		got, want decimal.Decimal
	}{
		{"BR-CO-10 line total", lineTotal, lineSum},
		{"BR-CO-13 tax basis", basisTotal, lineTotal},
		{"BR-CO-14 tax total", *taxTotal, taxSum},
		{"BR-CO-15 grand total", grand, basisTotal.Add(*taxTotal)},
		{"BR-CO-16 due payable", due, grand},
	} {
		if !c.got.Equal(c.want) {
			t.Errorf("%s: %s, want %s", c.rule, c.got, c.want)
		}
	}
}

func TestCIIStructure(t *testing.T) {
	for _, s := range einvoicetest.Samples() {
		t.Run(s.Name, func(t *testing.T) {
			b, err := einvoice.CII(s.Doc)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte(xml.Header)) {
				t.Errorf("no XML declaration")
			}
			root := parse(t, b)
			if root.name != "CrossIndustryInvoice" || namespaces[root.ns] != "rsm" {
				t.Fatalf("root is {%s}%s", root.ns, root.name)
			}
			var problems []string
			checkStructure(root, "CrossIndustryInvoice", &problems)
			if len(problems) > 0 {
				t.Errorf("structure:\n  %s", strings.Join(problems, "\n  "))
			}
			checkArithmetic(t, root, s.Doc.Currency)

			d := s.Doc
			if err := d.Compute(); err != nil {
				t.Fatal(err)
			}
			// The values a reader takes from the XML are the document's.
			tx := root.one(t, "SupplyChainTradeTransaction")
			agr := tx.one(t, "ApplicableHeaderTradeAgreement")
			got := map[string]string{
				"guideline": root.one(t, "ExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID").text,
				"number":    root.one(t, "ExchangedDocument/ID").text,
				"type":      root.one(t, "ExchangedDocument/TypeCode").text,
				"issued":    root.one(t, "ExchangedDocument/IssueDateTime/DateTimeString").text,
				"seller":    agr.one(t, "SellerTradeParty/Name").text,
				"buyer":     agr.one(t, "BuyerTradeParty/Name").text,
				"street":    agr.one(t, "SellerTradeParty/PostalTradeAddress/LineOne").text,
				"currency":  tx.one(t, "ApplicableHeaderTradeSettlement/InvoiceCurrencyCode").text,
				"due":       tx.one(t, "ApplicableHeaderTradeSettlement/SpecifiedTradeSettlementHeaderMonetarySummation/DuePayableAmount").text,
			}
			want := map[string]string{
				"guideline": d.Guideline(), "number": d.Number, "type": d.TypeCode,
				"issued": strings.ReplaceAll(d.IssueDate, "-", ""), "seller": d.Seller.Name, "buyer": d.Buyer.Name,
				"street": d.Seller.Street, "currency": d.Currency, "due": einvoice.Amount(d.Totals.DuePayable),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			var notes []string
			for _, n := range root.one(t, "ExchangedDocument").all("IncludedNote") {
				notes = append(notes, n.one(t, "Content").text)
			}
			if diff := cmp.Diff(d.AllNotes(), notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if d.Profile == einvoice.ProfileXRechnung {
				if got := agr.one(t, "BuyerReference").text; got != d.BuyerReference {
					t.Errorf("BT-10 %q, want %q", got, d.BuyerReference)
				}
				for _, p := range []string{"SellerTradeParty/URIUniversalCommunication/URIID", "BuyerTradeParty/URIUniversalCommunication/URIID"} {
					if n := agr.one(t, p); n.attrs["schemeID"] != "EM" {
						t.Errorf("%s schemeID %q, want EM", p, n.attrs["schemeID"])
					}
				}
				agr.one(t, "SellerTradeParty/DefinedTradeContact/TelephoneUniversalCommunication/CompleteNumber")
				tx.one(t, "ApplicableHeaderTradeSettlement/SpecifiedTradeSettlementPaymentMeans/PayeePartyCreditorFinancialAccount/IBANID")
			}
			if d.TypeCode == einvoice.TypeCreditNote {
				ref := tx.one(t, "ApplicableHeaderTradeSettlement/InvoiceReferencedDocument")
				if ref.one(t, "IssuerAssignedID").text != d.PrecedingInvoice.Number {
					t.Errorf("BT-25 %q", ref.one(t, "IssuerAssignedID").text)
				}
			}
		})
	}
}

// TestCIIStructureCheckerCatches keeps the checker honest: a swapped pair of
// elements and a wrong total must be found.
func TestCIIStructureCheckerCatches(t *testing.T) {
	b, err := einvoice.CII(einvoicetest.Invoice19())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "      <ram:SellerTradeParty>")
	j := strings.Index(s, "      <ram:BuyerTradeParty>")
	k := strings.Index(s, "      </ram:BuyerTradeParty>\n") + len("      </ram:BuyerTradeParty>\n")
	swapped := s[:i] + s[j:k] + s[i:j] + s[k:]
	var problems []string
	checkStructure(parse(t, []byte(swapped)), "CrossIndustryInvoice", &problems)
	if !strings.Contains(strings.Join(problems, "\n"), "<SellerTradeParty> out of schema order") {
		t.Errorf("swap not found: %q", problems)
	}

	ft := &recorder{}
	wrong := strings.Replace(s, "<ram:GrandTotalAmount>2975.00", "<ram:GrandTotalAmount>2975.01", 1)
	done := make(chan struct{})
	go func() { // checkArithmetic may call Fatalf, which ends its goroutine
		defer close(done)
		checkArithmetic(ft, parse(t, []byte(wrong)), "EUR")
	}()
	<-done
	if !ft.failed {
		t.Errorf("a wrong grand total passed the arithmetic check")
	}
}
