package ledger_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
)

// drEnv is one test's ledger with the small chart.
type drEnv struct{ *ledgertest.Env }

func newDREnv(t *testing.T) *drEnv { return &drEnv{ledgertest.NewEnv(t, 4, ledgertest.Seed)} }

func (e *drEnv) req(key string) ledger.Request {
	return ledger.Request{Claims: e.Claims, IdempotencyKey: key, Channel: "rest"}
}

// Sample contents with the right magic bytes.
var (
	drPDF = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	drJPG = append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, bytes.Repeat([]byte{1}, 32)...)
	drPNG = append([]byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 'I', 'H', 'D', 'R'}, bytes.Repeat([]byte{2}, 32)...)
)

// TestParseUpload covers every way an upload is accepted or refused.
func TestParseUpload(t *testing.T) {
	t.Parallel()
	big := append([]byte("%PDF-"), bytes.Repeat([]byte{'x'}, ledger.MaxDocumentBytes-5)...)
	tooBig := append(big[:len(big):len(big)], 'x')
	tests := []struct {
		name     string
		parts    []ledgertest.Part
		ct       string // overrides the multipart Content-Type
		wantCode string
		wantName string
		wantType string
	}{
		{name: "pdf", parts: []ledgertest.Part{ledgertest.File("Rechnung.pdf", "application/pdf", drPDF)}, wantName: "Rechnung.pdf", wantType: ledger.MimePDF},
		{name: "jpg", parts: []ledgertest.Part{ledgertest.File("beleg.JPG", "image/jpeg", drJPG)}, wantName: "beleg.JPG", wantType: ledger.MimeJPEG},
		{name: "jpeg alias type", parts: []ledgertest.Part{ledgertest.File("beleg.jpeg", "image/jpg", drJPG)}, wantName: "beleg.jpeg", wantType: ledger.MimeJPEG},
		{name: "png", parts: []ledgertest.Part{ledgertest.File("scan.png", "image/png", drPNG)}, wantName: "scan.png", wantType: ledger.MimePNG},
		{name: "octet-stream trusts the name", parts: []ledgertest.Part{ledgertest.File("a.pdf", "application/octet-stream", drPDF)}, wantName: "a.pdf", wantType: ledger.MimePDF},
		{name: "no declared type", parts: []ledgertest.Part{ledgertest.File("a.png", "", drPNG)}, wantName: "a.png", wantType: ledger.MimePNG},
		{name: "no extension, declared type", parts: []ledgertest.Part{ledgertest.File("Rechnung", "application/pdf", drPDF)}, wantName: "Rechnung", wantType: ledger.MimePDF},
		{name: "no file name", parts: []ledgertest.Part{{Field: "file", ContentType: "image/png", Content: drPNG, File: true}}, wantName: "document.png", wantType: ledger.MimePNG},
		{name: "path stripped", parts: []ledgertest.Part{ledgertest.File(`C:\fakepath\beleg.pdf`, "application/pdf", drPDF)}, wantName: "beleg.pdf", wantType: ledger.MimePDF},
		{name: "exactly 10 MB", parts: []ledgertest.Part{ledgertest.File("big.pdf", "application/pdf", big)}, wantName: "big.pdf", wantType: ledger.MimePDF},

		{name: "empty", parts: []ledgertest.Part{ledgertest.File("a.pdf", "application/pdf", nil)}, wantCode: errs.EmptyFile},
		{name: "10 MB + 1 byte", parts: []ledgertest.Part{ledgertest.File("big.pdf", "application/pdf", tooBig)}, wantCode: errs.FileTooLarge},
		{name: "request over 11 MB", parts: []ledgertest.Part{ledgertest.File("big.pdf", "application/pdf", big), ledgertest.Field("description", strings.Repeat("x", 1<<20+1))}, wantCode: errs.FileTooLarge},
		{name: "gif by name", parts: []ledgertest.Part{ledgertest.File("a.gif", "image/gif", []byte("GIF89a...."))}, wantCode: errs.InvalidFileType},
		{name: "exe named", parts: []ledgertest.Part{ledgertest.File("a.exe", "application/pdf", drPDF)}, wantCode: errs.InvalidFileType},
		{name: "text declared", parts: []ledgertest.Part{ledgertest.File("a.pdf", "text/plain", drPDF)}, wantCode: errs.InvalidFileType},
		{name: "no name, no type", parts: []ledgertest.Part{{Field: "file", Content: drPDF, File: true}}, wantCode: errs.InvalidFileType},
		{name: "png bytes named pdf", parts: []ledgertest.Part{ledgertest.File("a.pdf", "application/pdf", drPNG)}, wantCode: errs.MimeMismatch},
		{name: "html named pdf", parts: []ledgertest.Part{ledgertest.File("a.pdf", "application/pdf", []byte("<html><script>alert(1)</script>"))}, wantCode: errs.MimeMismatch},
		{name: "declared png, named pdf", parts: []ledgertest.Part{ledgertest.File("a.pdf", "image/png", drPDF)}, wantCode: errs.MimeMismatch},
		{name: "jpg bytes declared png without name", parts: []ledgertest.Part{{Field: "file", ContentType: "image/png", Content: drJPG, File: true}}, wantCode: errs.MimeMismatch},
		{name: "missing file", parts: []ledgertest.Part{ledgertest.Field("note", "x")}, wantCode: errs.InvalidInput},
		{name: "no parts", parts: nil, wantCode: errs.InvalidInput},
		{name: "two files", parts: []ledgertest.Part{ledgertest.File("a.pdf", "application/pdf", drPDF), ledgertest.File("b.pdf", "application/pdf", drPDF)}, wantCode: errs.InvalidInput},
		{name: "json body", ct: "application/json", wantCode: errs.UnsupportedMedia},
		{name: "multipart without boundary", ct: "multipart/form-data", wantCode: errs.UnsupportedMedia},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ct, body := ledgertest.Form(t, tc.parts...)
			if tc.ct != "" {
				ct = tc.ct
			}
			up, err := ledger.ParseUpload(ct, body, "file")
			ledgertest.WantCode(t, err, tc.wantCode)
			if tc.wantCode != "" {
				return
			}
			if up.File.Name != tc.wantName || up.File.MimeType != tc.wantType {
				t.Fatalf("file %q %s, want %q %s", up.File.Name, up.File.MimeType, tc.wantName, tc.wantType)
			}
		})
	}
}

// TestParseUploadFields: allowed text fields come back; unknown or
// repeated fields are refused; a truncated body is malformed.
func TestParseUploadFields(t *testing.T) {
	t.Parallel()
	ct, body := ledgertest.Form(t, ledgertest.Field("description", "Büromaterial"), ledgertest.File("a.pdf", "application/pdf", drPDF), ledgertest.Field("lines", "[]"))
	up, err := ledger.ParseUpload(ct, body, "file", "description", "lines")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"description": "Büromaterial", "lines": "[]"}, up.Fields); diff != "" {
		t.Fatalf("fields (-want +got):\n%s", diff)
	}
	_, err = ledger.ParseUpload(ct, body, "file", "description")
	ledgertest.WantCode(t, err, errs.InvalidInput)
	ct, body = ledgertest.Form(t, ledgertest.Field("lines", "[]"), ledgertest.Field("lines", "[]"), ledgertest.File("a.pdf", "application/pdf", drPDF))
	_, err = ledger.ParseUpload(ct, body, "file", "lines")
	ledgertest.WantCode(t, err, errs.InvalidInput)
	ct, body = ledgertest.Form(t, ledgertest.File("a.pdf", "application/pdf", drPDF))
	_, err = ledger.ParseUpload(ct, body[:len(body)/2], "file")
	ledgertest.WantCode(t, err, errs.InvalidInput)
}

// TestDocumentDedupe: the same bytes are stored once per tenant, under the
// first upload's name; other tenants neither see nor share them.
func TestDocumentDedupe(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	upload := func(claims *auth.Claims, name string, content []byte) (ledger.Document, bool) {
		t.Helper()
		ct, body := ledgertest.Form(t, ledgertest.File(name, "", content))
		d, created, err := e.Svc.UploadDocument(ctx, ledger.Request{Claims: claims}, ct, body)
		if err != nil {
			t.Fatal(err)
		}
		return d, created
	}
	first, created := upload(e.Claims, "Rechnung März.pdf", drPDF)
	if !created {
		t.Fatal("first upload not created")
	}
	want := ledger.Document{ID: first.ID, MimeType: ledger.MimePDF, OriginalName: "Rechnung März.pdf", SizeBytes: int64(len(drPDF)), SHA256: ledgertest.SHA(drPDF), CreatedAt: first.CreatedAt}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Fatalf("document (-want +got):\n%s", diff)
	}
	again, created := upload(e.Claims, "copy.pdf", drPDF)
	if created || again != first {
		t.Fatalf("repeat upload = %+v created %v, want the first document", again, created)
	}
	png, created := upload(e.Claims, "scan.png", drPNG)
	if !created || png.ID == first.ID {
		t.Fatalf("other content = %+v created %v, want a new document", png, created)
	}

	got, content, err := e.Svc.DocumentFile(ctx, e.Tenant, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(content, drPDF) || got != first {
		t.Fatalf("file = %+v %q, want the original bytes", got, content)
	}
	if got.Disposition() != `attachment; filename*=utf-8''Rechnung%20M%C3%A4rz.pdf` {
		t.Fatalf("disposition %q", got.Disposition())
	}

	otherTenant, otherClaims := ledgertest.NewTenant()
	theirs, created := upload(otherClaims, "x.pdf", drPDF)
	if !created || theirs.ID == first.ID {
		t.Fatalf("other tenant's upload = %+v created %v, want its own document", theirs, created)
	}
	for _, id := range []string{theirs.ID, uuid.NewString(), "not-a-uuid", ""} {
		_, _, err := e.Svc.DocumentFile(ctx, e.Tenant, id)
		ledgertest.WantCode(t, err, errs.NotFound)
		_, err = e.Svc.Document(ctx, e.Tenant, id)
		ledgertest.WantCode(t, err, errs.NotFound)
	}
	if _, _, err := e.Svc.DocumentFile(ctx, otherTenant, theirs.ID); err != nil {
		t.Fatal(err)
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.documents"); n != 3 {
		t.Fatalf("%d documents stored, want 3", n)
	}
}

// TestUploadRefusalStoresNothing: a refused upload leaves no row.
func TestUploadRefusalStoresNothing(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	for _, p := range []ledgertest.Part{ledgertest.File("a.pdf", "application/pdf", drPNG), ledgertest.File("a.pdf", "application/pdf", nil), ledgertest.File("a.txt", "text/plain", []byte("hi"))} {
		ct, body := ledgertest.Form(t, p)
		if _, _, err := e.Svc.UploadDocument(context.Background(), e.req(""), ct, body); err == nil {
			t.Fatalf("upload of %s accepted", p.Filename)
		}
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.documents"); n != 0 {
		t.Fatalf("%d documents stored, want 0", n)
	}
}

func drDocForm(t *testing.T, file []byte, fields ...ledgertest.Part) (string, []byte) {
	return ledgertest.Form(t, append([]ledgertest.Part{ledgertest.File("beleg.pdf", "application/pdf", file)}, fields...)...)
}

// TestBookWithDocument: the booking is posted with the stored document;
// bad input stores nothing; the Idempotency-Key survives a new boundary.
func TestBookWithDocument(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	lines := `[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]`
	fields := []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "Büromaterial"), ledgertest.Field("lines", lines), ledgertest.Field("intent_category", "office")}
	ct, body := drDocForm(t, drPDF, fields...)
	posted, replay, err := e.Svc.BookWithDocument(ctx, e.req("key-1"), ct, body)
	if err != nil || replay != nil {
		t.Fatalf("BookWithDocument: %v %v", err, replay)
	}
	if posted.EventCount != 2 || posted.DocumentID == "" {
		t.Fatalf("posted %+v, want 2 events and a document", posted)
	}
	d, err := e.Svc.Intent(ctx, e.Tenant, posted.IntentID)
	if err != nil {
		t.Fatal(err)
	}
	if d.DocumentID == nil || *d.DocumentID != posted.DocumentID || d.Category != "office" || d.Entries[0].ProvenanceSummary.Channel != "document" {
		t.Fatalf("intent %+v, want document %s, category office, channel document", d, posted.DocumentID)
	}
	doc, err := e.Svc.Document(ctx, e.Tenant, posted.DocumentID)
	if err != nil || doc.SHA256 != ledgertest.SHA(drPDF) {
		t.Fatalf("document %+v %v", doc, err)
	}

	// The same request re-encoded (another boundary) with the same key replays.
	ct, body = drDocForm(t, drPDF, fields...)
	again, replay, err := e.Svc.BookWithDocument(ctx, e.req("key-1"), ct, body)
	if err != nil || replay == nil {
		t.Fatalf("retry: %+v %v %v, want a replay", again, replay, err)
	}
	// Another body under the same key is refused.
	ct, body = drDocForm(t, drPDF, ledgertest.Field("booking_date", "2025-03-11"), ledgertest.Field("description", "Büromaterial"), ledgertest.Field("lines", lines))
	_, _, err = e.Svc.BookWithDocument(ctx, e.req("key-1"), ct, body)
	ledgertest.WantCode(t, err, errs.IdempotencyKeyReused)
	// Without a key the duplicate check applies, and can be skipped.
	ct, body = drDocForm(t, drPDF, fields...)
	_, _, err = e.Svc.BookWithDocument(ctx, e.req(""), ct, body)
	ledgertest.WantCode(t, err, errs.DuplicateBooking)
	ct, body = drDocForm(t, drPDF, append(fields, ledgertest.Field("skip_duplicate_check", "true"))...)
	second, _, err := e.Svc.BookWithDocument(ctx, e.req(""), ct, body)
	if err != nil || second.DocumentID != posted.DocumentID || second.IntentID == posted.IntentID {
		t.Fatalf("second booking %+v %v, want a new intent with the same document", second, err)
	}

	before := e.Count(t, "SELECT count(*) FROM ledger.intents")
	other := append([]byte("%PDF-1.4 other"), 1)
	for _, tc := range []struct {
		name   string
		fields []ledgertest.Part
		file   []byte
		code   string
	}{
		{"lines not JSON", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", "[{")}, other, errs.InvalidInput},
		{"lines unknown field", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", `[{"konto":"1"}]`)}, other, errs.InvalidInput},
		{"lines missing", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x")}, other, errs.InvalidInput},
		{"unknown account", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", `[{"account_debit":"9999","account_credit":"1800","amount":1}]`)}, other, errs.InvalidInput},
		{"bad date", []ledgertest.Part{ledgertest.Field("booking_date", "2025-02-30"), ledgertest.Field("description", "x"), ledgertest.Field("lines", lines)}, other, errs.InvalidInput},
		{"bad skip flag", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", lines), ledgertest.Field("skip_duplicate_check", "maybe")}, other, errs.InvalidInput},
		{"category too long", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", lines), ledgertest.Field("intent_category", strings.Repeat("c", 101))}, other, errs.InvalidInput},
		{"unknown field", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", lines), ledgertest.Field("amount", "1")}, other, errs.InvalidInput},
		{"mime mismatch", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", lines)}, drPNG, errs.MimeMismatch},
		{"empty file", []ledgertest.Part{ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", "x"), ledgertest.Field("lines", lines)}, nil, errs.EmptyFile},
	} {
		ct, body := drDocForm(t, tc.file, tc.fields...)
		_, _, err := e.Svc.BookWithDocument(ctx, e.req(""), ct, body)
		if !errs.Is(err, tc.code) {
			t.Errorf("%s: error %v, want %s", tc.name, err, tc.code)
		}
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.documents"); n != 1 {
		t.Fatalf("%d documents after refused bookings, want 1", n)
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents"); n != before {
		t.Fatalf("%d intents after refused bookings, want %d", n, before)
	}
}

// TestValidateBooking posts nothing.
func TestValidateBooking(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	ok := ledger.Booking{BookingDate: "2025-01-02", Description: "Porto", Lines: []ledger.Line{ledgertest.Line("6815", "1800", "10", "")}}
	if err := e.Svc.ValidateBooking(ctx, e.Tenant, ok); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Lines = []ledger.Line{ledgertest.Line("6815", "6815", "10", "VSt99")}
	err := e.Svc.ValidateBooking(ctx, e.Tenant, bad)
	ledgertest.WantCode(t, err, errs.InvalidInput)
	if len(errs.As(err).Details) != 2 {
		t.Fatalf("details %+v, want 2", errs.As(err).Details)
	}
	// A foreign-currency amount is bounded like a EUR one (numeric has no bound of its own).
	for _, fx := range []string{"1e400", "1000000000000000"} {
		huge := ok
		huge.Lines = []ledger.Line{ledgertest.Line("6815", "1800", "10", "")}
		a := money.MustParse(fx)
		huge.Lines[0].FXCurrency, huge.Lines[0].FXAmount = "USD", &a
		err = e.Svc.ValidateBooking(ctx, e.Tenant, huge)
		ledgertest.WantCode(t, err, errs.InvalidInput)
		if d := errs.As(err).Details; len(d) != 1 || d[0].Field != "lines[0].fx_amount" {
			t.Fatalf("fx_amount %s: details %+v", fx, d)
		}
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents"); n != 0 {
		t.Fatalf("%d intents, want 0", n)
	}
}

// TestBookWithDocumentRefusedStoresNothing: the document and the posting
// commit together, so a booking the journal refuses leaves no document,
// and the same file is new to the next upload.
func TestBookWithDocumentRefusedStoresNothing(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	lines := `[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]`
	booking := func(date, desc, lines string) []ledgertest.Part {
		return []ledgertest.Part{ledgertest.Field("booking_date", date), ledgertest.Field("description", desc), ledgertest.Field("lines", lines)}
	}
	// The duplicate: the same booking posted before without a document.
	if _, _, err := e.Svc.Book(ctx, e.req(""), ledger.Booking{BookingDate: "2025-03-10", Description: "Büromaterial",
		Lines: []ledger.Line{ledgertest.Line("6815", "1800", "119.00", "VSt19")}}, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := e.Svc.SetPeriodLock(ctx, e.Tenant, "2025-04", "soft-locked", "test"); err != nil {
		t.Fatal(err)
	}
	intents := e.Count(t, "SELECT count(*) FROM ledger.intents")
	for i, tc := range []struct {
		name   string
		fields []ledgertest.Part
		code   string
	}{
		{"invalid booking", booking("2025-03-12", "Porto", `[{"account_debit":"6815","account_credit":"6815","amount":1}]`), errs.InvalidInput},
		{"locked period", booking("2025-04-02", "Porto", lines), errs.PeriodLocked},
		{"duplicate booking", booking("2025-03-10", "Büromaterial", lines), errs.DuplicateBooking},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := append([]byte("%PDF-1.7 refused "), byte(i))
			ct, body := drDocForm(t, file, tc.fields...)
			_, _, err := e.Svc.BookWithDocument(ctx, e.req(""), ct, body)
			ledgertest.WantCode(t, err, tc.code)
			if n := e.Count(t, "SELECT count(*) FROM ledger.documents WHERE tenant_id = $1", e.Tenant); n != i {
				t.Fatalf("%d documents after the refusal, want %d", n, i)
			}
			ct, body = drDocForm(t, file)
			doc, created, err := e.Svc.UploadDocument(ctx, e.req(""), ct, body)
			if err != nil || !created || doc.SHA256 != ledgertest.SHA(file) {
				t.Fatalf("upload of the refused file: %+v created %v %v, want a new document", doc, created, err)
			}
		})
	}
	if n := e.Count(t, "SELECT count(*) FROM ledger.intents"); n != intents {
		t.Fatalf("%d intents after refused bookings, want %d", n, intents)
	}
}

// TestBookWithDocumentsInOneBatch: postings of one group commit carrying
// the same new bytes store them once and link both to that document; a
// file the tenant holds already is linked, not stored again.
func TestBookWithDocumentsInOneBatch(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	lines := `[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]`
	ct, body := ledgertest.Form(t, ledgertest.File("held.pdf", "application/pdf", drPDF))
	held, _, err := e.Svc.UploadDocument(ctx, e.req(""), ct, body)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	shared := []byte("%PDF-1.7 shared by a batch")
	ids := make([]string, n)
	errc := make(chan error, n)
	for i := range n {
		file := shared
		if i%4 == 3 {
			file = drPDF
		}
		ct, body := drDocForm(t, file, ledgertest.Field("booking_date", "2025-03-10"), ledgertest.Field("description", fmt.Sprintf("Beleg %d", i)), ledgertest.Field("lines", lines))
		go func() {
			p, _, err := e.Svc.BookWithDocument(ctx, e.req(""), ct, body)
			ids[i] = p.DocumentID
			errc <- err
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	sharedDoc := ""
	for i, id := range ids {
		switch {
		case i%4 == 3 && id != held.ID:
			t.Fatalf("booking %d linked %s, want the held document %s", i, id, held.ID)
		case i%4 != 3 && sharedDoc == "":
			sharedDoc = id
		case i%4 != 3 && id != sharedDoc:
			t.Fatalf("booking %d linked %s, want %s like the others", i, id, sharedDoc)
		}
	}
	if got := e.Count(t, "SELECT count(*) FROM ledger.documents WHERE tenant_id = $1", e.Tenant); got != 2 {
		t.Fatalf("%d documents, want 2", got)
	}
	if got := e.Count(t, "SELECT count(*) FROM ledger.intents i JOIN ledger.documents d ON d.tenant_id = i.tenant_id AND d.id = i.document_id WHERE i.tenant_id = $1", e.Tenant); got != n {
		t.Fatalf("%d intents link a stored document, want %d", got, n)
	}
}

// TestXMLEInvoiceDocument: a service may store an XML e-invoice (root
// Invoice, CreditNote or CrossIndustryInvoice); a caller through the
// gateway may not, and other XML is refused to both.
func TestXMLEInvoiceDocument(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	service := &auth.Claims{Service: "payables", TenantID: e.Claims.TenantID}
	cii := []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"/>`)
	ubl := []byte("\xEF\xBB\xBF<Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\"/>")
	tests := []struct {
		name     string
		claims   *auth.Claims
		file     string
		declared string
		content  []byte
		wantCode string
	}{
		{"service, CII", service, "x.xml", "application/xml", cii, ""},
		{"service, UBL as text/xml without name", service, "", "text/xml", ubl, ""},
		{"service, credit note by name", service, "gs.xml", "", []byte(`<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/>`), ""},
		{"service, other XML", service, "x.xml", "application/xml", []byte(`<?xml version="1.0"?><html/>`), errs.MimeMismatch},
		{"service, PDF named xml", service, "x.xml", "", drPDF, errs.MimeMismatch},
		{"service, broken XML", service, "x.xml", "", []byte(`<?xml version="1.0"?><<`), errs.MimeMismatch},
		{"caller, CII", e.Claims, "x.xml", "application/xml", cii, errs.InvalidFileType},
		{"caller, CII declared only", e.Claims, "", "text/xml", cii, errs.InvalidFileType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := ledgertest.Form(t, ledgertest.File(tc.file, tc.declared, tc.content))
			if tc.file == "" {
				ct, body = ledgertest.Form(t, ledgertest.Part{Field: "file", ContentType: tc.declared, Content: tc.content, File: true})
			}
			d, _, err := e.Svc.UploadDocument(ctx, ledger.Request{Claims: tc.claims}, ct, body)
			ledgertest.WantCode(t, err, tc.wantCode)
			if tc.wantCode != "" {
				return
			}
			if d.MimeType != ledger.MimeXML || !strings.HasSuffix(d.OriginalName, ".xml") {
				t.Fatalf("document %+v, want an application/xml named .xml", d)
			}
			_, got, err := e.Svc.DocumentFile(ctx, e.Claims.TenantID, d.ID)
			if err != nil || !bytes.Equal(got, tc.content) {
				t.Fatalf("stored %q, %v; want the bytes sent", got, err)
			}
		})
	}
}
