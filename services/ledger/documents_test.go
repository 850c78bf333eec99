package ledger_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
)

// drSeed is the small chart of the document and review tests.
func drSeed() ([]ledger.Account, []ledger.TaxCode) {
	acc := func(n, name, typ string) ledger.Account { return ledger.Account{Number: n, Name: name, Type: typ} }
	return []ledger.Account{
			acc("1200", "Forderungen", ledger.Asset), acc("1401", "Vorsteuer 7 %", ledger.Asset), acc("1406", "Vorsteuer 19 %", ledger.Asset),
			acc("1800", "Bank", ledger.Asset), acc("3300", "Verbindlichkeiten LuL", ledger.Liability), acc("3801", "Umsatzsteuer 7 %", ledger.Liability),
			acc("3806", "Umsatzsteuer 19 %", ledger.Liability), acc("4400", "Erlöse 19 %", ledger.Revenue),
			acc("6805", "Telefon", ledger.Expense), acc("6815", "Bürobedarf", ledger.Expense),
		}, []ledger.TaxCode{
			{Code: "VSt19", Label: "Vorsteuer 19 %", Kind: ledger.TaxInput, Rate: money.MustParse("19"), VATAccount: "1406", DATEVKey: "9"},
			{Code: "VSt7", Label: "Vorsteuer 7 %", Kind: ledger.TaxInput, Rate: money.MustParse("7"), VATAccount: "1401", DATEVKey: "8"},
			{Code: "USt19", Label: "Umsatzsteuer 19 %", Kind: ledger.TaxOutput, Rate: money.MustParse("19"), VATAccount: "3806", DATEVKey: "3"},
			{Code: "USt7", Label: "Umsatzsteuer 7 %", Kind: ledger.TaxOutput, Rate: money.MustParse("7"), VATAccount: "3801", DATEVKey: "2"},
		}
}

// drEnv is one test's ledger on its own database, run as ledger_svc.
type drEnv struct {
	svc    *ledger.Service
	store  *postgres.Store
	owner  *pgxpool.Pool
	tenant string
	claims *auth.Claims
}

func newDREnv(t *testing.T) *drEnv {
	t.Helper()
	url := testkit.Postgres(t, postgres.Migrations)
	ctx := context.Background()
	pool, err := db.Open(ctx, url, "ledger_svc", 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	owner, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	store := postgres.New(pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	e := &drEnv{svc: ledger.New(store, drSeed), store: store, owner: owner}
	e.tenant, e.claims = e.newTenant()
	return e
}

func (e *drEnv) newTenant() (string, *auth.Claims) {
	tenant := uuid.NewString()
	return tenant, &auth.Claims{TenantID: tenant, KeyID: uuid.NewString(), KeyPrefix: "lgr_abcdefgh", Label: "test key", Scopes: []string{"admin"}, Surface: "api"}
}

func (e *drEnv) req(key string) ledger.Request {
	return ledger.Request{Claims: e.claims, IdempotencyKey: key, Channel: "rest"}
}

// count runs a count query as the owner, across tenants.
func (e *drEnv) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := e.owner.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func drLine(debit, credit, amount, tax string) ledger.Line {
	return ledger.Line{AccountDebit: debit, AccountCredit: credit, Amount: money.MustParse(amount), TaxCode: tax}
}

// Sample contents with the right magic bytes.
var (
	drPDF = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	drJPG = append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, bytes.Repeat([]byte{1}, 32)...)
	drPNG = append([]byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 'I', 'H', 'D', 'R'}, bytes.Repeat([]byte{2}, 32)...)
)

// drPart is one part of a multipart body; a part with a filename (or
// file true) is sent as a file.
type drPart struct {
	field, filename, contentType string
	content                      []byte
	file                         bool
}

// drForm builds a multipart/form-data body and its Content-Type.
func drForm(t testing.TB, parts ...drPart) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.field + `"`
		if p.filename != "" || p.file {
			cd += `; filename="` + p.filename + `"`
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.content)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

func drFile(name, ct string, content []byte) drPart {
	return drPart{field: "file", filename: name, contentType: ct, content: content, file: true}
}

func drField(name, value string) drPart { return drPart{field: name, content: []byte(value)} }

func wantCodeDR(t *testing.T, err error, code string) {
	t.Helper()
	switch {
	case code == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case code != "" && !errs.Is(err, code):
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

func drSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestParseUpload covers every way an upload is accepted or refused.
func TestParseUpload(t *testing.T) {
	t.Parallel()
	big := append([]byte("%PDF-"), bytes.Repeat([]byte{'x'}, ledger.MaxDocumentBytes-5)...)
	tooBig := append(big[:len(big):len(big)], 'x')
	tests := []struct {
		name     string
		parts    []drPart
		ct       string // overrides the multipart Content-Type
		wantCode string
		wantName string
		wantType string
	}{
		{name: "pdf", parts: []drPart{drFile("Rechnung.pdf", "application/pdf", drPDF)}, wantName: "Rechnung.pdf", wantType: ledger.MimePDF},
		{name: "jpg", parts: []drPart{drFile("beleg.JPG", "image/jpeg", drJPG)}, wantName: "beleg.JPG", wantType: ledger.MimeJPEG},
		{name: "jpeg alias type", parts: []drPart{drFile("beleg.jpeg", "image/jpg", drJPG)}, wantName: "beleg.jpeg", wantType: ledger.MimeJPEG},
		{name: "png", parts: []drPart{drFile("scan.png", "image/png", drPNG)}, wantName: "scan.png", wantType: ledger.MimePNG},
		{name: "octet-stream trusts the name", parts: []drPart{drFile("a.pdf", "application/octet-stream", drPDF)}, wantName: "a.pdf", wantType: ledger.MimePDF},
		{name: "no declared type", parts: []drPart{drFile("a.png", "", drPNG)}, wantName: "a.png", wantType: ledger.MimePNG},
		{name: "no extension, declared type", parts: []drPart{drFile("Rechnung", "application/pdf", drPDF)}, wantName: "Rechnung", wantType: ledger.MimePDF},
		{name: "no file name", parts: []drPart{{field: "file", contentType: "image/png", content: drPNG, file: true}}, wantName: "document.png", wantType: ledger.MimePNG},
		{name: "path stripped", parts: []drPart{drFile(`C:\fakepath\beleg.pdf`, "application/pdf", drPDF)}, wantName: "beleg.pdf", wantType: ledger.MimePDF},
		{name: "exactly 10 MB", parts: []drPart{drFile("big.pdf", "application/pdf", big)}, wantName: "big.pdf", wantType: ledger.MimePDF},

		{name: "empty", parts: []drPart{drFile("a.pdf", "application/pdf", nil)}, wantCode: errs.EmptyFile},
		{name: "10 MB + 1 byte", parts: []drPart{drFile("big.pdf", "application/pdf", tooBig)}, wantCode: errs.FileTooLarge},
		{name: "request over 11 MB", parts: []drPart{drFile("big.pdf", "application/pdf", big), drField("description", strings.Repeat("x", 1<<20+1))}, wantCode: errs.FileTooLarge},
		{name: "gif by name", parts: []drPart{drFile("a.gif", "image/gif", []byte("GIF89a...."))}, wantCode: errs.InvalidFileType},
		{name: "exe named", parts: []drPart{drFile("a.exe", "application/pdf", drPDF)}, wantCode: errs.InvalidFileType},
		{name: "text declared", parts: []drPart{drFile("a.pdf", "text/plain", drPDF)}, wantCode: errs.InvalidFileType},
		{name: "no name, no type", parts: []drPart{{field: "file", content: drPDF, file: true}}, wantCode: errs.InvalidFileType},
		{name: "png bytes named pdf", parts: []drPart{drFile("a.pdf", "application/pdf", drPNG)}, wantCode: errs.MimeMismatch},
		{name: "html named pdf", parts: []drPart{drFile("a.pdf", "application/pdf", []byte("<html><script>alert(1)</script>"))}, wantCode: errs.MimeMismatch},
		{name: "declared png, named pdf", parts: []drPart{drFile("a.pdf", "image/png", drPDF)}, wantCode: errs.MimeMismatch},
		{name: "jpg bytes declared png without name", parts: []drPart{{field: "file", contentType: "image/png", content: drJPG, file: true}}, wantCode: errs.MimeMismatch},
		{name: "missing file", parts: []drPart{drField("note", "x")}, wantCode: errs.InvalidInput},
		{name: "no parts", parts: nil, wantCode: errs.InvalidInput},
		{name: "two files", parts: []drPart{drFile("a.pdf", "application/pdf", drPDF), drFile("b.pdf", "application/pdf", drPDF)}, wantCode: errs.InvalidInput},
		{name: "json body", ct: "application/json", wantCode: errs.UnsupportedMedia},
		{name: "multipart without boundary", ct: "multipart/form-data", wantCode: errs.UnsupportedMedia},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ct, body := drForm(t, tc.parts...)
			if tc.ct != "" {
				ct = tc.ct
			}
			up, err := ledger.ParseUpload(ct, body, "file")
			wantCodeDR(t, err, tc.wantCode)
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
	ct, body := drForm(t, drField("description", "Büromaterial"), drFile("a.pdf", "application/pdf", drPDF), drField("lines", "[]"))
	up, err := ledger.ParseUpload(ct, body, "file", "description", "lines")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"description": "Büromaterial", "lines": "[]"}, up.Fields); diff != "" {
		t.Fatalf("fields (-want +got):\n%s", diff)
	}
	_, err = ledger.ParseUpload(ct, body, "file", "description")
	wantCodeDR(t, err, errs.InvalidInput)
	ct, body = drForm(t, drField("lines", "[]"), drField("lines", "[]"), drFile("a.pdf", "application/pdf", drPDF))
	_, err = ledger.ParseUpload(ct, body, "file", "lines")
	wantCodeDR(t, err, errs.InvalidInput)
	ct, body = drForm(t, drFile("a.pdf", "application/pdf", drPDF))
	_, err = ledger.ParseUpload(ct, body[:len(body)/2], "file")
	wantCodeDR(t, err, errs.InvalidInput)
}

// TestDocumentDedupe: the same bytes are stored once per tenant, under the
// first upload's name; other tenants neither see nor share them.
func TestDocumentDedupe(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	upload := func(claims *auth.Claims, name string, content []byte) (ledger.Document, bool) {
		t.Helper()
		ct, body := drForm(t, drFile(name, "", content))
		d, created, err := e.svc.UploadDocument(ctx, ledger.Request{Claims: claims}, ct, body)
		if err != nil {
			t.Fatal(err)
		}
		return d, created
	}
	first, created := upload(e.claims, "Rechnung März.pdf", drPDF)
	if !created {
		t.Fatal("first upload not created")
	}
	want := ledger.Document{ID: first.ID, MimeType: ledger.MimePDF, OriginalName: "Rechnung März.pdf", SizeBytes: int64(len(drPDF)), SHA256: drSHA(drPDF), CreatedAt: first.CreatedAt}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Fatalf("document (-want +got):\n%s", diff)
	}
	again, created := upload(e.claims, "copy.pdf", drPDF)
	if created || again != first {
		t.Fatalf("repeat upload = %+v created %v, want the first document", again, created)
	}
	png, created := upload(e.claims, "scan.png", drPNG)
	if !created || png.ID == first.ID {
		t.Fatalf("other content = %+v created %v, want a new document", png, created)
	}

	got, content, err := e.svc.DocumentFile(ctx, e.tenant, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(content, drPDF) || got != first {
		t.Fatalf("file = %+v %q, want the original bytes", got, content)
	}
	if got.Disposition() != `attachment; filename*=utf-8''Rechnung%20M%C3%A4rz.pdf` {
		t.Fatalf("disposition %q", got.Disposition())
	}

	otherTenant, otherClaims := e.newTenant()
	theirs, created := upload(otherClaims, "x.pdf", drPDF)
	if !created || theirs.ID == first.ID {
		t.Fatalf("other tenant's upload = %+v created %v, want its own document", theirs, created)
	}
	for _, id := range []string{theirs.ID, uuid.NewString(), "not-a-uuid", ""} {
		_, _, err := e.svc.DocumentFile(ctx, e.tenant, id)
		wantCodeDR(t, err, errs.NotFound)
		_, err = e.svc.Document(ctx, e.tenant, id)
		wantCodeDR(t, err, errs.NotFound)
	}
	if _, _, err := e.svc.DocumentFile(ctx, otherTenant, theirs.ID); err != nil {
		t.Fatal(err)
	}
	if n := e.count(t, "SELECT count(*) FROM ledger.documents"); n != 3 {
		t.Fatalf("%d documents stored, want 3", n)
	}
}

// TestUploadRefusalStoresNothing: a refused upload leaves no row.
func TestUploadRefusalStoresNothing(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	for _, p := range []drPart{drFile("a.pdf", "application/pdf", drPNG), drFile("a.pdf", "application/pdf", nil), drFile("a.txt", "text/plain", []byte("hi"))} {
		ct, body := drForm(t, p)
		if _, _, err := e.svc.UploadDocument(context.Background(), e.req(""), ct, body); err == nil {
			t.Fatalf("upload of %s accepted", p.filename)
		}
	}
	if n := e.count(t, "SELECT count(*) FROM ledger.documents"); n != 0 {
		t.Fatalf("%d documents stored, want 0", n)
	}
}

func drDocForm(t *testing.T, file []byte, fields ...drPart) (string, []byte) {
	return drForm(t, append([]drPart{drFile("beleg.pdf", "application/pdf", file)}, fields...)...)
}

// TestBookWithDocument: the booking is posted with the stored document;
// bad input stores nothing; the Idempotency-Key survives a new boundary.
func TestBookWithDocument(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	lines := `[{"account_debit":"6815","account_credit":"1800","amount":119.00,"tax_code":"VSt19"}]`
	fields := []drPart{drField("booking_date", "2025-03-10"), drField("description", "Büromaterial"), drField("lines", lines), drField("intent_category", "office")}
	ct, body := drDocForm(t, drPDF, fields...)
	posted, replay, err := e.svc.BookWithDocument(ctx, e.req("key-1"), ct, body)
	if err != nil || replay != nil {
		t.Fatalf("BookWithDocument: %v %v", err, replay)
	}
	if posted.EventCount != 2 || posted.DocumentID == "" {
		t.Fatalf("posted %+v, want 2 events and a document", posted)
	}
	d, err := e.svc.Intent(ctx, e.tenant, posted.IntentID)
	if err != nil {
		t.Fatal(err)
	}
	if d.DocumentID == nil || *d.DocumentID != posted.DocumentID || d.Category != "office" || d.Entries[0].ProvenanceSummary.Channel != "document" {
		t.Fatalf("intent %+v, want document %s, category office, channel document", d, posted.DocumentID)
	}
	doc, err := e.svc.Document(ctx, e.tenant, posted.DocumentID)
	if err != nil || doc.SHA256 != drSHA(drPDF) {
		t.Fatalf("document %+v %v", doc, err)
	}

	// The same request re-encoded (another boundary) with the same key replays.
	ct, body = drDocForm(t, drPDF, fields...)
	again, replay, err := e.svc.BookWithDocument(ctx, e.req("key-1"), ct, body)
	if err != nil || replay == nil {
		t.Fatalf("retry: %+v %v %v, want a replay", again, replay, err)
	}
	// Another body under the same key is refused.
	ct, body = drDocForm(t, drPDF, drField("booking_date", "2025-03-11"), drField("description", "Büromaterial"), drField("lines", lines))
	_, _, err = e.svc.BookWithDocument(ctx, e.req("key-1"), ct, body)
	wantCodeDR(t, err, errs.IdempotencyKeyReused)
	// Without a key the duplicate check applies, and can be skipped.
	ct, body = drDocForm(t, drPDF, fields...)
	_, _, err = e.svc.BookWithDocument(ctx, e.req(""), ct, body)
	wantCodeDR(t, err, errs.DuplicateBooking)
	ct, body = drDocForm(t, drPDF, append(fields, drField("skip_duplicate_check", "true"))...)
	second, _, err := e.svc.BookWithDocument(ctx, e.req(""), ct, body)
	if err != nil || second.DocumentID != posted.DocumentID || second.IntentID == posted.IntentID {
		t.Fatalf("second booking %+v %v, want a new intent with the same document", second, err)
	}

	before := e.count(t, "SELECT count(*) FROM ledger.intents")
	other := append([]byte("%PDF-1.4 other"), 1)
	for _, tc := range []struct {
		name   string
		fields []drPart
		file   []byte
		code   string
	}{
		{"lines not JSON", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", "[{")}, other, errs.InvalidInput},
		{"lines unknown field", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", `[{"konto":"1"}]`)}, other, errs.InvalidInput},
		{"lines missing", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x")}, other, errs.InvalidInput},
		{"unknown account", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", `[{"account_debit":"9999","account_credit":"1800","amount":1}]`)}, other, errs.InvalidInput},
		{"bad date", []drPart{drField("booking_date", "2025-02-30"), drField("description", "x"), drField("lines", lines)}, other, errs.InvalidInput},
		{"bad skip flag", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", lines), drField("skip_duplicate_check", "maybe")}, other, errs.InvalidInput},
		{"category too long", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", lines), drField("intent_category", strings.Repeat("c", 101))}, other, errs.InvalidInput},
		{"unknown field", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", lines), drField("amount", "1")}, other, errs.InvalidInput},
		{"mime mismatch", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", lines)}, drPNG, errs.MimeMismatch},
		{"empty file", []drPart{drField("booking_date", "2025-03-10"), drField("description", "x"), drField("lines", lines)}, nil, errs.EmptyFile},
	} {
		ct, body := drDocForm(t, tc.file, tc.fields...)
		_, _, err := e.svc.BookWithDocument(ctx, e.req(""), ct, body)
		if !errs.Is(err, tc.code) {
			t.Errorf("%s: error %v, want %s", tc.name, err, tc.code)
		}
	}
	if n := e.count(t, "SELECT count(*) FROM ledger.documents"); n != 1 {
		t.Fatalf("%d documents after refused bookings, want 1", n)
	}
	if n := e.count(t, "SELECT count(*) FROM ledger.intents"); n != before {
		t.Fatalf("%d intents after refused bookings, want %d", n, before)
	}
}

// TestValidateBooking posts nothing.
func TestValidateBooking(t *testing.T) {
	t.Parallel()
	e := newDREnv(t)
	ctx := context.Background()
	ok := ledger.Booking{BookingDate: "2025-01-02", Description: "Porto", Lines: []ledger.Line{drLine("6815", "1800", "10", "")}}
	if err := e.svc.ValidateBooking(ctx, e.tenant, ok); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Lines = []ledger.Line{drLine("6815", "6815", "10", "VSt99")}
	err := e.svc.ValidateBooking(ctx, e.tenant, bad)
	wantCodeDR(t, err, errs.InvalidInput)
	if len(errs.As(err).Details) != 2 {
		t.Fatalf("details %+v, want 2", errs.As(err).Details)
	}
	if n := e.count(t, "SELECT count(*) FROM ledger.intents"); n != 0 {
		t.Fatalf("%d intents, want 0", n)
	}
}
