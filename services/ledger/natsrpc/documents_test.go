package natsrpc_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
	"github.com/ledgerplatform/ledger/services/ledger/ledgerd"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
)

func drSeed() ([]ledger.Account, []ledger.TaxCode) {
	return []ledger.Account{
			ledgertest.Acc("1200", "Forderungen", ledger.Asset), ledgertest.Acc("1401", "Vorsteuer 7 %", ledger.Asset), ledgertest.Acc("1406", "Vorsteuer 19 %", ledger.Asset),
			ledgertest.Acc("1800", "Bank", ledger.Asset), ledgertest.Acc("3300", "Verbindlichkeiten LuL", ledger.Liability), ledgertest.Acc("3806", "Umsatzsteuer 19 %", ledger.Liability),
			ledgertest.Acc("4400", "Erlöse 19 %", ledger.Revenue), ledgertest.Acc("6805", "Telefon", ledger.Expense), ledgertest.Acc("6815", "Bürobedarf", ledger.Expense),
		}, []ledger.TaxCode{
			{Code: "VSt19", Label: "Vorsteuer 19 %", Kind: ledger.TaxInput, Rate: money.MustParse("19"), VATAccount: "1406"},
			{Code: "VSt7", Label: "Vorsteuer 7 %", Kind: ledger.TaxInput, Rate: money.MustParse("7"), VATAccount: "1401"},
			{Code: "USt19", Label: "Umsatzsteuer 19 %", Kind: ledger.TaxOutput, Rate: money.MustParse("19"), VATAccount: "3806"},
		}
}

// drHarness runs one test's ledger daemon (a small chart) on testkit.RPC.
type drHarness struct {
	rpc    *testkit.RPC
	tenant string
	claims *auth.Claims
}

func newDRHarness(t *testing.T) *drHarness {
	t.Helper()
	h := &drHarness{rpc: testkit.NewRPC(t, postgres.Migrations)}
	h.rpc.Start(ledgerd.WithSeed(drSeed), nil)
	h.tenant, h.claims = drClaims()
	return h
}

func drClaims() (string, *auth.Claims) {
	tenant := uuid.NewString()
	return tenant, &auth.Claims{TenantID: tenant, KeyID: uuid.NewString(), KeyPrefix: "lgr_testtest", Label: "test", Scopes: []string{"admin"}, Surface: "api"}
}

// drRq is one request; body is sent as is when []byte, else as JSON.
type drRq struct {
	as          *auth.Claims
	id          string // the path parameter id
	query       url.Values
	contentType string
	body        any
	idemKey     string
}

type drReply struct {
	status      int
	code        string
	body        []byte
	contentType string
	disposition string
}

func (h *drHarness) call(t *testing.T, subject string, r drRq) drReply {
	t.Helper()
	rq := testkit.Rq{As: r.as, Query: r.query, Body: r.body, IdempotencyKey: r.idemKey, ContentType: r.contentType}
	if r.id != "" {
		rq.Params = map[string]string{"id": r.id}
	}
	resp := h.rpc.Call(subject, rq)
	return drReply{status: resp.Status, code: resp.Code, body: resp.Body, contentType: resp.Raw.ContentType, disposition: resp.Raw.Disposition}
}

// ok calls subject as the harness tenant, wants status and decodes into out.
func (h *drHarness) ok(t *testing.T, subject string, r drRq, status int, out any) drReply {
	t.Helper()
	if r.as == nil {
		r.as = h.claims
	}
	got := h.call(t, subject, r)
	if got.status != status || got.code != "" {
		t.Fatalf("%s: status %d %s %s, want %d", subject, got.status, got.code, got.body, status)
	}
	if out != nil {
		if err := json.Unmarshal(got.body, out); err != nil {
			t.Fatalf("%s: decode %s: %v", subject, got.body, err)
		}
	}
	return got
}

// fails calls subject as the harness tenant and wants the error.
func (h *drHarness) fails(t *testing.T, subject string, r drRq, status int, code string) errs.Body {
	t.Helper()
	if r.as == nil {
		r.as = h.claims
	}
	got := h.call(t, subject, r)
	if got.status != status || got.code != code {
		t.Fatalf("%s: status %d %s %s, want %d %s", subject, got.status, got.code, got.body, status, code)
	}
	var b errs.Body
	_ = json.Unmarshal(got.body, &b)
	return b
}

func drUpload(t *testing.T, parts ...ledgertest.Part) drRq {
	ct, body := ledgertest.Form(t, parts...)
	return drRq{contentType: ct, body: body}
}

var (
	drPDF = []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj << >> endobj\n%%EOF\n")
	drPNG = []byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 'I', 'H', 'D', 'R', 1, 2, 3}
)

type drDocumentBody struct {
	ID           string `json:"id"`
	MimeType     string `json:"mime_type"`
	OriginalName string `json:"original_name"`
	SizeBytes    int64  `json:"size_bytes"`
	SHA256       string `json:"sha256"`
}

func TestDocumentRoutes(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	var doc drDocumentBody
	h.ok(t, ledgerv1.SubjectDocumentsUpload, drUpload(t, ledgertest.File("Rechnung 7.pdf", "application/pdf", drPDF)), 201, &doc)
	sum := sha256.Sum256(drPDF)
	want := drDocumentBody{ID: doc.ID, MimeType: "application/pdf", OriginalName: "Rechnung 7.pdf", SizeBytes: int64(len(drPDF)), SHA256: hex.EncodeToString(sum[:])}
	if diff := cmp.Diff(want, doc); diff != "" || !ledger.ValidID(doc.ID) {
		t.Fatalf("upload (-want +got):\n%s", diff)
	}
	// Same bytes again: the first document, 200.
	var again drDocumentBody
	h.ok(t, ledgerv1.SubjectDocumentsUpload, drUpload(t, ledgertest.File("other.pdf", "", drPDF)), 200, &again)
	if again != doc {
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

type drPostedBody struct {
	IntentID   string `json:"intent_id"`
	EventCount int    `json:"event_count"`
	DocumentID string `json:"document_id"`
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
