package allinone_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

// tinyPDF is a minimal but well-formed PDF.
var tinyPDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n" +
	"trailer << /Root 1 0 R >>\n%%EOF\n")

// tinyPNG is a real 1×1 PNG.
var tinyPNG = pngOf(1)

func pngOf(size int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, size, size))); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func jpegOf(size int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, size, size)), nil); err != nil {
		panic(err)
	}
	return b.Bytes()
}

type documentBody struct {
	ID           string `json:"id"`
	MimeType     string `json:"mime_type"`
	OriginalName string `json:"original_name"`
	SizeBytes    int    `json:"size_bytes"`
	SHA256       string `json:"sha256"`
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestLedgerDocuments: upload, deduplication, download and every refusal of
// an upload.
func TestLedgerDocuments(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Beleg GmbH")
	w, ro := p.apiKey(admin, "journal:write"), p.apiKey(admin, "journal:read")

	r := p.upload(201, "/v1/documents", w, fileField("beleg.pdf", "application/pdf", tinyPDF))
	wantKeys(t, "upload", r.Raw, "id", "mime_type", "original_name", "size_bytes", "sha256")
	var pdf documentBody
	decodeJSON(t, r.Raw, &pdf)
	if pdf.MimeType != "application/pdf" || pdf.OriginalName != "beleg.pdf" || pdf.SizeBytes != len(tinyPDF) || pdf.SHA256 != sha(tinyPDF) {
		t.Fatalf("pdf upload %+v", pdf)
	}
	// The same bytes again: the first document, 200 instead of 201.
	var again documentBody
	decodeJSON(t, p.upload(200, "/v1/documents", w, fileField("kopie.pdf", "application/octet-stream", tinyPDF)).Raw, &again)
	if again != pdf {
		t.Fatalf("re-upload %+v, want %+v", again, pdf)
	}
	var img documentBody
	decodeJSON(t, p.upload(201, "/v1/documents", w, fileField("scan.png", "image/png", tinyPNG)).Raw, &img)
	if img.MimeType != "image/png" || img.OriginalName != "scan.png" || img.ID == pdf.ID {
		t.Fatalf("png upload %+v", img)
	}
	// Type from the name alone, from the declared type alone, and a
	// client path stripped from the name.
	var jpg, noExt, path documentBody
	decodeJSON(t, p.upload(201, "/v1/documents", w, fileField("FOTO.JPG", "", jpegOf(2))).Raw, &jpg)
	decodeJSON(t, p.upload(201, "/v1/documents", w, fileField("scan", "image/png", pngOf(3))).Raw, &noExt)
	decodeJSON(t, p.upload(201, "/v1/documents", w, fileField("/home/anna/Belege/Rechnung März.pdf", "application/pdf", append([]byte("%PDF-1.7\n"), tinyPDF[9:]...))).Raw, &path)
	if jpg.MimeType != "image/jpeg" || noExt.MimeType != "image/png" || noExt.OriginalName != "scan" || path.OriginalName != "Rechnung März.pdf" {
		t.Fatalf("uploads %+v %+v %+v", jpg, noExt, path)
	}

	// Download: the same bytes, typed, never sniffed.
	for _, d := range []struct {
		doc     documentBody
		content []byte
	}{{pdf, tinyPDF}, {img, tinyPNG}} {
		f := p.must(200, "GET", "/v1/documents/"+d.doc.ID+"/file", ro, nil)
		if !bytes.Equal(f.Raw, d.content) {
			t.Fatalf("download of %s: %d bytes differ from the upload", d.doc.OriginalName, len(f.Raw))
		}
		if f.Header.Get("Content-Type") != d.doc.MimeType || f.Header.Get("X-Content-Type-Options") != "nosniff" ||
			!strings.HasPrefix(f.Header.Get("Content-Disposition"), "attachment") || !strings.Contains(f.Header.Get("Content-Disposition"), d.doc.OriginalName) {
			t.Fatalf("download headers of %s: %v", d.doc.OriginalName, f.Header)
		}
	}
	if f := p.must(200, "GET", "/v1/documents/"+path.ID+"/file", ro, nil); !strings.Contains(f.Header.Get("Content-Disposition"), "filename*=utf-8''Rechnung%20M%C3%A4rz.pdf") {
		t.Fatalf("non-ASCII file name: %q", f.Header.Get("Content-Disposition"))
	}
	p.expectError(404, "NOT_FOUND", "GET", "/v1/documents/00000000-0000-4000-8000-000000000000/file", ro, nil)
	p.expectError(404, "NOT_FOUND", "GET", "/v1/documents/beleg.pdf/file", ro, nil)

	// Refusals, none of which stores anything.
	before := ledgerSnapshot(t, p, tenant)
	big := bytes.Repeat([]byte{'x'}, 10<<20+1)
	copy(big, "%PDF-1.4\n")
	huge := bytes.Repeat([]byte{'x'}, 11<<20)
	copy(huge, "%PDF-1.4\n")
	refusals := []struct {
		name   string
		parts  []part
		status int
		code   string
	}{
		{"text file", []part{fileField("notiz.txt", "text/plain", []byte("hallo"))}, 400, "INVALID_FILE_TYPE"},
		{"executable", []part{fileField("rechnung.pdf.exe", "application/octet-stream", []byte("MZ\x90\x00"))}, 400, "INVALID_FILE_TYPE"},
		{"declared html", []part{fileField("rechnung", "text/html", []byte("<html>"))}, 400, "INVALID_FILE_TYPE"},
		{"neither name nor type", []part{fileField("rechnung", "", tinyPDF)}, 400, "INVALID_FILE_TYPE"},
		{"empty", []part{fileField("leer.pdf", "application/pdf", nil)}, 400, "EMPTY_FILE"},
		{"pdf named png", []part{fileField("bild.png", "image/png", tinyPDF)}, 400, "MIME_MISMATCH"},
		{"declared png named pdf", []part{fileField("beleg.pdf", "image/png", tinyPDF)}, 400, "MIME_MISMATCH"},
		{"png content named pdf", []part{fileField("beleg.pdf", "application/pdf", tinyPNG)}, 400, "MIME_MISMATCH"},
		{"text named pdf", []part{fileField("beleg.pdf", "application/pdf", []byte("just text"))}, 400, "MIME_MISMATCH"},
		{"file over 10 MB", []part{fileField("gross.pdf", "application/pdf", big)}, 400, "FILE_TOO_LARGE"},
		{"upload over 11 MB", []part{fileField("riesig.pdf", "application/pdf", huge)}, 400, "FILE_TOO_LARGE"},
		{"no file", []part{textField("note", "x")}, 400, "INVALID_INPUT"},
		{"two files", []part{fileField("a.pdf", "application/pdf", tinyPDF), fileField("b.png", "image/png", tinyPNG)}, 400, "INVALID_INPUT"},
		{"unknown field", []part{fileField("c.pdf", "application/pdf", tinyPDF), textField("booking_date", "2025-01-01")}, 400, "INVALID_INPUT"},
	}
	for _, tt := range refusals {
		body, ct := multipartBody(t, tt.parts...)
		r := p.call("POST", "/v1/documents", w, body, "Content-Type", ct)
		if r.Status != tt.status || r.code() != tt.code || r.str("error") == "" || r.str("request_id") == "" {
			t.Errorf("%s: %d %.300s, want %d %s", tt.name, r.Status, r.Raw, tt.status, tt.code)
		}
	}
	p.expectError(415, "UNSUPPORTED_MEDIA_TYPE", "POST", "/v1/documents", w, map[string]any{"file": "JVBERi0xLjQ="})
	p.sameLedger("refused uploads", tenant, before)
	p.wantCount(5, "SELECT count(*) FROM ledger.documents WHERE tenant_id = $1", tenant)
}

// TestLedgerBookingWithDocument posts a booking with its original in one
// multipart request.
func TestLedgerBookingWithDocument(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Mit Beleg GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read")

	fields := func(file part, lines string, extra ...part) []part {
		return append([]part{file, textField("booking_date", "2025-05-05"), textField("description", "Druckerpapier"), textField("lines", lines)}, extra...)
	}
	lines := `[{"account_debit":"6815","account_credit":"1800","amount":23.80,"tax_code":"VSt19"}]`
	r := p.upload(201, "/v1/bookings/with-document", w, fields(fileField("quittung.png", "image/png", tinyPNG), lines, textField("intent_category", "office"))...)
	wantKeys(t, "booking with document", r.Raw, "intent_id", "event_count", "document_id")
	var posted postedBody
	decodeJSON(t, r.Raw, &posted)
	if posted.EventCount != 2 || posted.DocumentID == "" {
		t.Fatalf("posted %+v", posted)
	}
	d := p.intent(w, posted.IntentID)
	if d.DocumentID == nil || *d.DocumentID != posted.DocumentID || d.Category != "office" || d.Source != "document" || d.Description != "Druckerpapier" {
		t.Fatalf("intent %+v", d)
	}
	if got := entrySigs(d.Entries); strings.Join(got, ",") != "6815>1800 20.00 VSt19,1406>1800 3.80 VSt19" {
		t.Fatalf("entries %v", got)
	}
	if pv := d.Entries[0].Provenance; pv["channel"] != "document" || pv["channel_label"] != "Booking with document" {
		t.Fatalf("provenance %+v", pv)
	}
	if f := p.must(200, "GET", "/v1/documents/"+posted.DocumentID+"/file", w, nil); !bytes.Equal(f.Raw, tinyPNG) || f.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("the booking's document: %v", f.Header)
	}

	// With an Idempotency-Key the request is identified by the file and
	// the fields, not by the multipart bytes, whose boundary differs.
	idem := fields(fileField("rechnung.pdf", "application/pdf", tinyPDF), `[{"account_debit":"6805","account_credit":"1800","amount":59.5}]`)
	first := p.upload(201, "/v1/bookings/with-document", w, idem...).Raw
	body, ct := multipartBody(t, append(idem, textField("skip_duplicate_check", "true"))...)
	replay := p.must(201, "POST", "/v1/bookings/with-document", w, body, "Content-Type", ct, "Idempotency-Key", "doc-1")
	if string(replay.Raw) == string(first) {
		t.Fatal("a request without a key must not replay")
	}
	body2, ct2 := multipartBody(t, append(idem, textField("skip_duplicate_check", "true"))...)
	if again := p.must(201, "POST", "/v1/bookings/with-document", w, body2, "Content-Type", ct2, "Idempotency-Key", "doc-1"); !sameJSON(t, again.Raw, replay.Raw) {
		t.Fatalf("replay %s, want %s", again.Raw, replay.Raw)
	}
	body3, ct3 := multipartBody(t, append(idem, textField("skip_duplicate_check", "true"), textField("intent_category", "other"))...)
	p.expectError(422, "IDEMPOTENCY_KEY_REUSED", "POST", "/v1/bookings/with-document", w, body3, "Content-Type", ct3, "Idempotency-Key", "doc-1")
	// Without skip_duplicate_check the same booking again is a duplicate.
	body4, ct4 := multipartBody(t, idem...)
	p.expectError(409, "DUPLICATE_BOOKING", "POST", "/v1/bookings/with-document", w, body4, "Content-Type", ct4)

	// Invalid requests store neither the document nor a booking.
	before := ledgerSnapshot(t, p, tenant)
	other := fileField("neu.jpg", "image/jpeg", jpegOf(4))
	invalid := []struct {
		name   string
		parts  []part
		code   string
		fields []string
	}{
		{"lines not JSON", fields(other, `[{"account_debit":`), "INVALID_INPUT", []string{"lines"}},
		{"lines missing", []part{other, textField("booking_date", "2025-05-05"), textField("description", "x")}, "INVALID_INPUT", []string{"lines"}},
		{"lines unknown field", fields(other, `[{"account_debit":"6815","account_credit":"1800","amount":1,"vat":19}]`), "INVALID_INPUT", []string{"lines[0].vat"}},
		{"line invalid", fields(other, `[{"account_debit":"6815","account_credit":"99999","amount":1}]`), "INVALID_INPUT", []string{"lines[0].account_credit"}},
		{"bad date", []part{other, textField("booking_date", "2025-02-30"), textField("description", "x"), textField("lines", lines)}, "INVALID_INPUT", []string{"booking_date"}},
		{"bad skip flag", fields(other, lines, textField("skip_duplicate_check", "vielleicht")), "INVALID_INPUT", []string{"skip_duplicate_check"}},
		{"category too long", fields(other, lines, textField("intent_category", strings.Repeat("c", 101))), "INVALID_INPUT", []string{"intent_category"}},
		{"no file", []part{textField("booking_date", "2025-05-05"), textField("description", "x"), textField("lines", lines)}, "INVALID_INPUT", []string{"file"}},
		{"bad file", fields(fileField("x.gif", "image/gif", []byte("GIF89a")), lines), "INVALID_FILE_TYPE", nil},
		{"empty file", fields(fileField("x.pdf", "application/pdf", nil), lines), "EMPTY_FILE", nil},
		{"mismatched file", fields(fileField("x.jpg", "image/jpeg", tinyPDF), lines), "MIME_MISMATCH", nil},
	}
	for _, tt := range invalid {
		body, ct := multipartBody(t, tt.parts...)
		r := p.call("POST", "/v1/bookings/with-document", w, body, "Content-Type", ct)
		if r.Status != 400 || r.code() != tt.code {
			t.Errorf("%s: %d %s, want 400 %s", tt.name, r.Status, r.Raw, tt.code)
			continue
		}
		if tt.fields != nil && !sameFields(detailFields(t, r), tt.fields) {
			t.Errorf("%s: detail fields %v, want %v", tt.name, detailFields(t, r), tt.fields)
		}
	}
	p.expectError(415, "UNSUPPORTED_MEDIA_TYPE", "POST", "/v1/bookings/with-document", w, bookingBody("2025-05-05", "x", bline("6815", "1800", "1")))
	p.sameLedger("invalid requests", tenant, before)

	// A refusal after validation (a duplicate, a locked period) stores no
	// document either: the original commits with its booking or not at
	// all, so the same file uploads afterwards as a new document.
	refusedDoc := func(name string, file []byte, status int, code string, extra ...part) {
		t.Helper()
		before := ledgerSnapshot(t, p, tenant)
		body, ct := multipartBody(t, fields(fileField(name, "image/png", file), lines, extra...)...)
		p.expectError(status, code, "POST", "/v1/bookings/with-document", w, body, "Content-Type", ct)
		p.sameLedger(code, tenant, before)
		p.wantCount(0, "SELECT count(*) FROM ledger.documents WHERE tenant_id = $1 AND sha256 = decode($2, 'hex')", tenant, sha(file))
		p.upload(201, "/v1/documents", w, fileField(name, "image/png", file))
	}
	refusedDoc("doppelt.png", pngOf(6), 409, "DUPLICATE_BOOKING")
	p.setLock(tenant, "2025-05", "soft-locked")
	refusedDoc("gesperrt.png", pngOf(5), 409, "PERIOD_LOCKED", textField("skip_duplicate_check", "true"))
}
