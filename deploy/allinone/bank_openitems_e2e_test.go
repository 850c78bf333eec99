package allinone_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/services/bank"
	bankpg "github.com/ledgerplatform/ledger/services/bank/postgres"
)

// TestBankOpenItems: bookings posted through the gateway reach the bank's
// open-items projection through the ledger's events: an outgoing invoice
// with output tax is a receivable of its gross amount, an incoming one
// with input tax a payable, bookings on the bank's linked account are
// bank-booking candidates signed as the bank sees them, and a reversal
// cancels what its original opened.
func TestBankOpenItems(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Offene Posten GmbH")
	other, _ := p.newTenant("Andere Posten GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read", "bank:read", "bank:write")
	giro := p.must(201, "POST", "/v1/bank-accounts", w, map[string]any{"name": "Girokonto", "iban": "DE89370400440532013000", "account_number": "1800"}).str("id")

	out := p.book(w, bookingBody("2026-03-02", "Ausgangsrechnung RE-2026-001 Müller KG",
		bline("1200", "4400", "119.00", "tax_code", "USt19", "external_reference", "RE-2026-001")))
	in := p.book(w, bookingBody("2026-03-03", "Eingangsrechnung Werbeagentur",
		bline("6815", "3300", "238.00", "tax_code", "VSt19", "external_reference", "ER-5501")))
	paid := p.book(w, bookingBody("2026-03-09", "Zahlungseingang Müller KG Abschlag",
		bline("1800", "1200", "50.00", "external_reference", "RE-2026-001")))
	fee := p.book(w, bookingBody("2026-03-31", "Kontoführungsgebühr März", bline("6855", "1800", "9.90")))
	wrong := p.book(w, bookingBody("2026-03-04", "Ausgangsrechnung RE-2026-002 (falsch)",
		bline("1200", "4400", "59.50", "tax_code", "USt19", "external_reference", "RE-2026-002")))
	rev := p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": wrong.IntentID, "reason": "falscher Kunde"}).str("reversal_intent_id")
	// Another tenant's booking stays in its tenant.
	p.book(p.apiKey(other, "journal:write"), bookingBody("2026-03-02", "Fremde Rechnung", bline("1200", "4400", "1.00")))

	items := bank.NewOpenItems(bankpg.New(p.owner))
	ctx := context.Background()
	wantItems := []string{
		out.IntentID + " 1200 debtor receivable 2026-03-02 RE-2026-001 119.00/119.00",
		in.IntentID + " 3300 creditor payable 2026-03-03 ER-5501 238.00/238.00",
	}
	wantBookings := []string{paid.IntentID + " 2026-03-09 50.00", fee.IntentID + " 2026-03-31 -9.90"}
	eventually(t, 20*time.Second, func() error {
		its, err := items.List(ctx, tenant, "")
		if err != nil {
			return err
		}
		var got []string
		for _, it := range its {
			got = append(got, fmt.Sprintf("%s %s %s %s %s %s %s/%s", it.IntentID, it.AccountNumber, it.Party, it.Direction, it.BookingDate,
				deref(it.ExternalReference), it.OpenAmount.StringFixed(2), it.OriginalAmount.StringFixed(2)))
		}
		if !slices.Equal(got, wantItems) {
			return fmt.Errorf("open items %q, want %q", got, wantItems)
		}
		bs, err := items.BankBookings(ctx, tenant, giro)
		if err != nil {
			return err
		}
		got = nil
		for _, b := range bs {
			got = append(got, fmt.Sprintf("%s %s %s", b.IntentID, b.BookingDate, b.Amount.StringFixed(2)))
		}
		if !slices.Equal(got, wantBookings) {
			return fmt.Errorf("bank bookings %q, want %q", got, wantBookings)
		}
		// The reversal is the last event; once it is projected the
		// original's item is cancelled, not deleted.
		if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2 AND reversed_by = $3 AND original_amount = 59.50`, tenant, wrong.IntentID, rev); n != 1 {
			return fmt.Errorf("the reversed invoice's item: %d rows", n)
		}
		return nil
	})
	if its, err := items.List(ctx, tenant, bank.Payable); err != nil || len(its) != 1 || its[0].IntentID != in.IntentID || its[0].Description != "Eingangsrechnung Werbeagentur" {
		t.Fatalf("payables: %+v %v", its, err)
	}
	eventually(t, 20*time.Second, func() error {
		if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id <> $1`, tenant); n != 1 {
			return fmt.Errorf("%d items of the other tenant", n)
		}
		return nil
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
