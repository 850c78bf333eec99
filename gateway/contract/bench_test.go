package contract_test

import (
	"testing"

	"github.com/ledgerplatform/ledger/contracts"
	"github.com/ledgerplatform/ledger/gateway/contract"
)

// BenchmarkCheckBooking is the boundary's cost on the hottest route: one
// booking of five lines.
func BenchmarkCheckBooking(b *testing.B) {
	doc, err := contract.Load(contracts.OpenAPI)
	if err != nil {
		b.Fatal(err)
	}
	op := doc.Operation("POST", "/v1/bookings")
	line := `{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19","description":"Papier","external_reference":"RE-2025-0314"}`
	body := []byte(`{"booking_date":"2025-03-14","description":"Büromaterial März","lines":[` + line + "," + line + "," + line + "," + line + "," + line + `]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := op.CheckRequest(nil, nil, "application/json", body); err != nil {
			b.Fatal(err)
		}
	}
}
