package natsrpc_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
)

func TestDocumentRoutes(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	doc := h.uploadPDF(t, "Rechnung 7.pdf", "application/pdf", 201)
	want := drDocumentBody{ID: doc.ID, MimeType: "application/pdf", OriginalName: "Rechnung 7.pdf", SizeBytes: int64(len(drPDF)), SHA256: ledgertest.SHA(drPDF)}
	if diff := cmp.Diff(want, doc); diff != "" || !ledger.ValidID(doc.ID) {
		t.Fatalf("upload (-want +got):\n%s", diff)
	}
	// Same bytes again: the first document, 200.
	if again := h.uploadPDF(t, "other.pdf", "", 200); again != doc {
		t.Fatalf("repeat upload %+v, want %+v", again, doc)
	}

	file := h.ok(t, ledgerv1.SubjectDocumentsFile, drRq{id: doc.ID}, 200, nil)
	if !bytes.Equal(file.body, drPDF) || file.contentType != "application/pdf" || file.disposition != `attachment; filename="Rechnung 7.pdf"` {
		t.Fatalf("file: %q %q %q", file.body, file.contentType, file.disposition)
	}
	_, otherClaims := drClaims()
	for _, r := range []drRq{{id: uuid.NewString()}, {id: "nope"}, {id: doc.ID, as: otherClaims}} {
		h.fails(t, ledgerv1.SubjectDocumentsFile, r, 404, errs.NotFound)
	}

	big := append([]byte("%PDF-"), make([]byte, ledger.MaxDocumentBytes-4)...)
	for _, tc := range []struct {
		name   string
		r      drRq
		status int
		code   string
	}{
		{"gif", drUpload(t, ledgertest.File("a.gif", "image/gif", []byte("GIF89a"))), 400, errs.InvalidFileType},
		{"empty", drUpload(t, ledgertest.File("a.pdf", "application/pdf", nil)), 400, errs.EmptyFile},
		{"too large", drUpload(t, ledgertest.File("a.pdf", "application/pdf", big)), 400, errs.FileTooLarge},
		{"mismatch", drUpload(t, ledgertest.File("a.pdf", "application/pdf", drPNG)), 400, errs.MimeMismatch},
		{"no file", drUpload(t, ledgertest.Field("note", "x")), 400, errs.InvalidInput},
		{"json", drRq{body: map[string]string{"file": "x"}}, 415, errs.UnsupportedMedia},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.fails(t, ledgerv1.SubjectDocumentsUpload, tc.r, tc.status, tc.code)
		})
	}
	got := h.call(t, ledgerv1.SubjectDocumentsUpload, drUpload(t, ledgertest.File("a.pdf", "application/pdf", drPDF)))
	if got.status != 401 || got.code != errs.Unauthenticated {
		t.Fatalf("anonymous upload: %d %s", got.status, got.code)
	}
}

func TestBookingWithDocumentRoute(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	lines := `[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]`
	form := func(lines string, extra ...ledgertest.Part) drRq {
		return drUpload(t, append([]ledgertest.Part{ledgertest.File("beleg.png", "image/png", drPNG), ledgertest.Field("booking_date", "2025-03-10"),
			ledgertest.Field("description", "Büromaterial"), ledgertest.Field("lines", lines)}, extra...)...)
	}
	r := form(lines, ledgertest.Field("intent_category", "office"))
	r.idemKey = "abc"
	var posted drPostedBody
	h.ok(t, ledgerv1.SubjectBookingsWithDocument, r, 201, &posted)
	if posted.EventCount != 2 || !ledger.ValidID(posted.IntentID) || !ledger.ValidID(posted.DocumentID) {
		t.Fatalf("posted %+v", posted)
	}
	// A retry (new boundary, same key) replays the first answer.
	r = form(lines, ledgertest.Field("intent_category", "office"))
	r.idemKey = "abc"
	var replay drPostedBody
	h.ok(t, ledgerv1.SubjectBookingsWithDocument, r, 201, &replay)
	if replay != posted {
		t.Fatalf("replay %+v, want %+v", replay, posted)
	}
	file := h.ok(t, ledgerv1.SubjectDocumentsFile, drRq{id: posted.DocumentID}, 200, nil)
	if !bytes.Equal(file.body, drPNG) || file.contentType != "image/png" {
		t.Fatalf("document of the booking: %q %s", file.body, file.contentType)
	}
	h.fails(t, ledgerv1.SubjectBookingsWithDocument, form(lines), 409, errs.DuplicateBooking)
	h.ok(t, ledgerv1.SubjectBookingsWithDocument, form(lines, ledgertest.Field("skip_duplicate_check", "true")), 201, nil)
	h.fails(t, ledgerv1.SubjectBookingsWithDocument, form("[{"), 400, errs.InvalidInput)
	b := h.fails(t, ledgerv1.SubjectBookingsWithDocument, form(`[{"account_debit":"9999","account_credit":"1800","amount":1}]`), 400, errs.InvalidInput)
	if len(b.Details) == 0 || b.Details[0].Field != "lines[0].account_debit" {
		t.Fatalf("details %+v", b.Details)
	}
	h.fails(t, ledgerv1.SubjectBookingsWithDocument, drUpload(t, ledgertest.File("beleg.pdf", "application/pdf", drPNG)), 400, errs.MimeMismatch)
}

// TestPostRoute: another service posts with a deterministic intent id;
// a retry answers the posting already made, bad bookings name the field
// under booking, and the route is internal: the bank's own signed
// principal names the tenant.
func TestPostRoute(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	cmd := ledgerv1.PostRequest{IntentID: uuid.NewString(), Source: "bank",
		Booking: ledgerv1.Booking{BookingDate: "2025-03-01", Description: "Bürobedarf per Karte", Lines: []ledgerv1.Line{
			{AccountDebit: "6815", AccountCredit: "1800", Amount: money.MustParse("119.00"), TaxCode: "VSt19"}}}}

	var first, again ledgerv1.Posted
	h.rpc.OK(ledgerv1.SubjectPost, testkit.Rq{Service: "bank", As: h.claims, Body: cmd}, 200, &first)
	if diff := cmp.Diff(ledgerv1.Posted{IntentID: cmd.IntentID, EventCount: 2}, first); diff != "" {
		t.Fatalf("posted (-want +got):\n%s", diff)
	}
	h.rpc.OK(ledgerv1.SubjectPost, testkit.Rq{Service: "bank", As: h.claims, Body: cmd}, 200, &again)
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
	got := h.rpc.Fails(ledgerv1.SubjectPost, testkit.Rq{Service: "bank", As: h.claims, Body: bad}, 400, errs.InvalidInput)
	var fields []string
	for _, d := range got.Err.Details {
		fields = append(fields, d.Field)
	}
	if diff := cmp.Diff([]string{"booking.lines[0].amount"}, fields); diff != "" {
		t.Fatalf("detail fields (-want +got):\n%s", diff)
	}
	got = h.rpc.Fails(ledgerv1.SubjectPost, testkit.Rq{Service: "bank", As: h.claims, Body: ledgerv1.PostRequest{Booking: cmd.Booking}}, 400, errs.InvalidInput)
	if len(got.Err.Details) != 2 || got.Err.Details[0].Field != "intent_id" || got.Err.Details[1].Field != "source" {
		t.Fatalf("details %+v", got.Err.Details)
	}
	h.rpc.Fails(ledgerv1.SubjectPost, testkit.Rq{Service: "bank", As: h.claims, Body: `{"tenant_id":"x","extra":1}`}, 400, errs.InvalidInput)
	h.rpc.Fails(ledgerv1.SubjectJournalGet, testkit.Rq{As: h.claims, Params: map[string]string{"intent_id": bad.IntentID}}, 404, errs.NotFound)
}
