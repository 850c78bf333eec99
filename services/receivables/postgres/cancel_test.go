package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

// TestIssueCreditNote: credit notes of one invoice queue on its lock: the
// same credit note asked for twice at once is created once, credit notes
// together never exceed what is open, each takes the next number, and a
// voided one gives its amount back.
func TestIssueCreditNote(t *testing.T) {
	s, owner := store(t)
	ctx := context.Background()
	tenant := uuid.NewString()
	deb := createDebtor(t, s, tenant, "Kunde")
	inv := insertInvoice(t, owner, tenant, salesInvoice{debtor: deb, number: "ALT-1", date: "2026-03-01", due: "2026-03-31", gross: "100.00", paid: "30.00"})
	credited := func() string {
		t.Helper()
		var c string
		if err := owner.QueryRow(ctx, `SELECT credited_amount::text FROM receivables.sales_invoices WHERE id = $1`, inv.id).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	issue := func(id, gross string) (receivables.InvoiceRecord, error) {
		g := dec(gross)
		return s.IssueCreditNote(ctx, tenant, receivables.CreditNoteDraft{ID: id, CorrectsID: inv.id, Date: "2026-04-02"}, receivables.CheckCredit(g),
			func(orig receivables.InvoiceRecord, number string) (receivables.Issued, error) {
				doc := einvoice.Document{TypeCode: einvoice.TypeCreditNote, Number: number, Currency: "EUR",
					PrecedingInvoice: &einvoice.DocumentRef{Number: orig.Number},
					Lines:            []einvoice.Line{{ID: "1", Description: "Gutschrift", Quantity: dec("1"), UnitCode: "C62", UnitPrice: g, TaxCategory: "Z", TaxRate: dec("0")}},
					Totals:           einvoice.Totals{TaxBasis: g, Grand: g, DuePayable: g}}
				return receivables.Issued{Document: doc, XML: []byte("<x/>"), PDF: []byte("%PDF")}, nil
			})
	}

	// Twice at once: one credit note.
	a := uuid.NewString()
	var wg sync.WaitGroup
	got := make([]receivables.InvoiceRecord, 4)
	errsSeen := make([]error, 4)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], errsSeen[i] = issue(a, "40.00") }()
	}
	wg.Wait()
	for i := range got {
		if errsSeen[i] != nil || got[i].ID != a || got[i].Number != got[0].Number {
			t.Fatalf("attempt %d: %+v, %v", i, got[i], errsSeen[i])
		}
	}
	if got[0].State != "pending" || got[0].Number != "RE-2026-00001" || credited() != "40.00" {
		t.Fatalf("the credit note: %s %s, credited %s", got[0].State, got[0].Number, credited())
	}
	if n := testkit.Count(t, owner, `SELECT count(*) FROM receivables.sales_invoices WHERE type = 'credit_note' AND corrects_id = $1`, inv.id); n != 1 {
		t.Fatalf("%d credit notes", n)
	}
	// 100 - 30 paid - 40 credited = 30 open: 30.01 is refused, 30.00 not.
	if _, err := issue(uuid.NewString(), "30.01"); errs.As(err) == nil || errs.As(err).Code != errs.Conflict {
		t.Fatalf("beyond what is open: %v", err)
	}
	b, err := issue(uuid.NewString(), "30.00")
	if err != nil || b.Number != "RE-2026-00002" || credited() != "70.00" {
		t.Fatalf("the rest: %+v, %v, credited %s", b, err, credited())
	}
	// Voided: its 40.00 is open again; posted: void does nothing.
	if err := s.VoidCreditNote(ctx, tenant, a, "refused"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConfirmCreditNote(ctx, tenant, b.ID, uuid.NewString(), uuid.NewString(), receivablesv1.CreditNoteIssued{TenantID: tenant}); err != nil {
		t.Fatal(err)
	}
	if err := s.VoidCreditNote(ctx, tenant, b.ID, "too late"); err != nil {
		t.Fatal(err)
	}
	if credited() != "30.00" {
		t.Fatalf("credited after the void: %s, want 30.00", credited())
	}
	if n := testkit.Count(t, owner, `SELECT count(*) FROM receivables.outbox WHERE subject = $1`, receivablesv1.EventCreditNoteIssued); n != 1 {
		t.Fatalf("%d credit note events, want 1", n)
	}
}
