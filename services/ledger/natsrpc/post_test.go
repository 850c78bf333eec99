package natsrpc_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// TestPostRoute: another service posts with a deterministic intent id;
// a retry answers the posting already made, bad bookings name the field
// under booking, and the route is internal (no caller claims).
func TestPostRoute(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	cmd := ledgerv1.PostRequest{TenantID: h.tenant, IntentID: uuid.NewString(), Source: "bank",
		Booking: ledgerv1.Booking{BookingDate: "2025-03-01", Description: "Bürobedarf per Karte", Lines: []ledgerv1.Line{
			{AccountDebit: "6815", AccountCredit: "1800", Amount: money.MustParse("119.00"), TaxCode: "VSt19"}}}}

	var first, again ledgerv1.Posted
	h.rpc.OK(ledgerv1.SubjectPost, testkit.Rq{Body: cmd}, 200, &first)
	if diff := cmp.Diff(ledgerv1.Posted{IntentID: cmd.IntentID, EventCount: 2}, first); diff != "" {
		t.Fatalf("posted (-want +got):\n%s", diff)
	}
	h.rpc.OK(ledgerv1.SubjectPost, testkit.Rq{Body: cmd}, 200, &again)
	if again != first {
		t.Fatalf("retry answered %+v, want %+v", again, first)
	}
	var entries struct {
		Entries []struct {
			IntentID          string `json:"intent_id"`
			Source            string `json:"source"`
			ProvenanceSummary struct {
				Channel string `json:"channel"`
			} `json:"provenance_summary"`
		} `json:"entries"`
	}
	h.ok(t, ledgerv1.SubjectJournalList, drRq{}, 200, &entries)
	if len(entries.Entries) != 2 {
		t.Fatalf("journal holds %d events, want 2 (posted once)", len(entries.Entries))
	}
	for _, e := range entries.Entries {
		if e.IntentID != cmd.IntentID || e.Source != "bank" || e.ProvenanceSummary.Channel != "bank" {
			t.Fatalf("entry %+v", e)
		}
	}

	bad := cmd
	bad.IntentID = uuid.NewString()
	bad.Booking.Lines = []ledgerv1.Line{{AccountDebit: "6815", AccountCredit: "1800", Amount: money.MustParse("1.001")}}
	got := h.rpc.Fails(ledgerv1.SubjectPost, testkit.Rq{Body: bad}, 400, errs.InvalidInput)
	var fields []string
	for _, d := range got.Err.Details {
		fields = append(fields, d.Field)
	}
	if diff := cmp.Diff([]string{"booking.lines[0].amount"}, fields); diff != "" {
		t.Fatalf("detail fields (-want +got):\n%s", diff)
	}
	got = h.rpc.Fails(ledgerv1.SubjectPost, testkit.Rq{Body: ledgerv1.PostRequest{TenantID: h.tenant, Booking: cmd.Booking}}, 400, errs.InvalidInput)
	if len(got.Err.Details) != 2 || got.Err.Details[0].Field != "intent_id" || got.Err.Details[1].Field != "source" {
		t.Fatalf("details %+v", got.Err.Details)
	}
	h.rpc.Fails(ledgerv1.SubjectPost, testkit.Rq{Body: `{"tenant_id":"x","extra":1}`}, 400, errs.InvalidInput)
	h.rpc.Fails(ledgerv1.SubjectJournalGet, testkit.Rq{As: h.claims, Params: map[string]string{"intent_id": bad.IntentID}}, 404, errs.NotFound)
}
