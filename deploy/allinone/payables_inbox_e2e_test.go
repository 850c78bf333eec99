package allinone_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// mailPart is one attachment of a test e-mail.
type mailPart struct {
	name, contentType string
	content           []byte
}

// testMail writes an Outlook-like message: multipart/mixed holding a
// multipart/alternative body (text in quoted-printable, HTML) and the
// attachments in base64, names RFC 2231-encoded when not ASCII.
func testMail(t testing.TB, subject string, atts ...mailPart) []byte {
	t.Helper()
	var b bytes.Buffer
	outer := multipart.NewWriter(&b)
	fmt.Fprintf(&b, "From: =?UTF-8?Q?J=C3=BCrgen_M=C3=BCller?= <juergen@lieferant.example>\r\nTo: rechnungen@kunde.example\r\n"+
		"Subject: %s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=%q\r\n\r\n", subject, outer.Boundary())
	var alt bytes.Buffer
	aw := multipart.NewWriter(&alt)
	w, _ := aw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain; charset=UTF-8"}, "Content-Transfer-Encoding": {"quoted-printable"}})
	w.Write([]byte("anbei die Rechnung f=C3=BCr Oktober.\r\n"))
	w, _ = aw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/html; charset=UTF-8"}})
	w.Write([]byte("<p>anbei die Rechnung</p>"))
	aw.Close()
	w, _ = outer.CreatePart(textproto.MIMEHeader{"Content-Type": {"multipart/alternative; boundary=" + aw.Boundary()}})
	w.Write(alt.Bytes())
	for _, a := range atts {
		disp := fmt.Sprintf("attachment; filename=%q", a.name)
		if strings.ContainsFunc(a.name, func(r rune) bool { return r > 127 }) {
			disp = "attachment; filename*=UTF-8''" + pctEncode(a.name)
		}
		w, err := outer.CreatePart(textproto.MIMEHeader{"Content-Type": {a.contentType}, "Content-Disposition": {disp},
			"Content-Transfer-Encoding": {"base64"}})
		if err != nil {
			t.Fatal(err)
		}
		enc := base64.StdEncoding.EncodeToString(a.content)
		for len(enc) > 76 {
			w.Write([]byte(enc[:76] + "\r\n"))
			enc = enc[76:]
		}
		w.Write([]byte(enc + "\r\n"))
	}
	outer.Close()
	return b.Bytes()
}

// pctEncode percent-encodes s for an RFC 2231 value.
func pctEncode(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func readRepoFile(t testing.TB, path ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outcomesOf is each row's outcome, file name and reason, in order.
func outcomesOf(rows []map[string]any) []string {
	out := []string{}
	for _, r := range rows {
		s := r["outcome"].(string) + " " + r["filename"].(string)
		if reason, _ := r["reason"].(string); r["outcome"] == "rejected_invalid" {
			s += ": " + reason
		}
		out = append(out, s)
	}
	return out
}

// TestPayablesInbox: the inbound-email webhook and the inbox through the
// gateway: one ingestion log row per attachment with the right outcome,
// exactly the inbox items and queued extractions of the documents
// accepted, the same message again, wrong secrets and unknown tenants
// refused with nothing written, a provider's form, direct uploads, the
// lists' filters and limits, scopes and tenants apart.
func TestPayablesInbox(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Eingangsrechnungen GmbH")
	other, otherTenant := p.newTenant("Fremde Eingang GmbH")
	writer, reader, outsider := p.apiKey(admin, "kreditoren:read", "kreditoren:write"), p.apiKey(admin, "kreditoren:read"), p.apiKey(admin, "debitoren:read")
	otherWriter := p.apiKey(other, "kreditoren:read", "kreditoren:write")

	// The secret: shown once, scope kreditoren:write.
	p.expectError(403, "FORBIDDEN", "POST", "/v1/payables/inbound-email/secret", reader, nil)
	sec := p.must(201, "POST", "/v1/payables/inbound-email/secret", writer, nil)
	secret := sec.str("secret")
	if !strings.HasPrefix(secret, "whsec_") || sec.str("path") != "/v1/payables/inbound-email/"+tenant {
		t.Fatalf("secret answer %s", sec.Raw)
	}
	p.wantCount(1, `SELECT count(*) FROM payables.webhook_secrets WHERE tenant_id = $1 AND secret_sha256 = sha256(convert_to($2, 'UTF8'))`, tenant, secret)
	otherSecret := p.must(201, "POST", "/v1/payables/inbound-email/secret", otherWriter, nil).str("secret")

	invoice := []byte("%PDF-1.7\n% Rechnung 2026-001 Lieferant GmbH\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	zugferd := readRepoFile(t, "services", "payables", "einvoicein", "testdata", "mustang-EN16931_Einfach.pdf")
	exe := append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff"), bytes.Repeat([]byte{0}, 64)...)
	mail := testMail(t, "Rechnung 2026-001", mailPart{"Rechnung Müller 2026-001.pdf", "application/pdf", invoice},
		mailPart{"ZUGFeRD-Rechnung.pdf", "application/octet-stream", zugferd},
		mailPart{"Rechnung.pdf", "application/pdf", exe},
		mailPart{"leer.pdf", "application/pdf", nil},
		mailPart{"Kopie.pdf", "application/pdf", invoice})
	hook := "/v1/payables/inbound-email/" + tenant
	rows := func(where string) string {
		return `SELECT count(*) FROM payables.ingestion_log WHERE tenant_id = $1` + where
	}

	// Refused without a word written: no secret, a wrong one, another
	// tenant's, and a tenant that does not exist (or is no id at all).
	for _, tc := range []struct{ name, path, secret string }{
		{"no secret", hook, ""},
		{"wrong secret", hook, "whsec_wrong"},
		{"other tenant's secret", hook, otherSecret},
		{"unknown tenant", "/v1/payables/inbound-email/" + uuid.NewString(), secret},
		{"no tenant id", "/v1/payables/inbound-email/acme", secret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := p.call("POST", tc.path, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", tc.secret)
			if r.Status != 401 || r.code() != "UNAUTHENTICATED" {
				t.Fatalf("status %d %s", r.Status, r.Raw)
			}
		})
	}
	p.wantCount(0, `SELECT count(*) FROM payables.ingestion_log`)

	// The message: one row per attachment, two inbox items, two queued
	// extractions, nothing else.
	got := p.must(200, "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	want := []string{"ingested Rechnung Müller 2026-001.pdf", "ingested ZUGFeRD-Rechnung.pdf",
		"rejected_invalid Rechnung.pdf: the file claims to be application/pdf but its content is an executable",
		"rejected_invalid leer.pdf: the file is empty", "skipped_duplicate Kopie.pdf"}
	if diff := cmp.Diff(want, outcomesOf(got.list("rows"))); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	first := got.list("rows")[0]
	if dup := got.list("rows")[4]; dup["original_inbox_id"] == nil || dup["original_review_case_id"] != nil || dup["file_hash"] != first["file_hash"] {
		t.Fatalf("duplicate row %v, first %v", dup, first)
	}
	if first["sender_email"] != "juergen@lieferant.example" || first["subject"] != "Rechnung 2026-001" || first["claimed_mime"] != "application/pdf" ||
		first["size_bytes"] != float64(len(invoice)) || first["document_id"] == nil || first["reason"] != nil {
		t.Fatalf("first row %v", first)
	}
	p.wantCount(5, rows(""), tenant)
	// (The OCR worker may already be at them.)
	p.wantCount(2, `SELECT count(*) FROM payables.inbox_items WHERE tenant_id = $1 AND source = 'email' AND status IN ('pending', 'processing')`, tenant)
	p.wantCount(2, `SELECT count(*) FROM payables.extractions e JOIN payables.inbox_items i ON i.id = e.inbox_item_id
		WHERE e.tenant_id = $1 AND e.document_id = i.document_id`, tenant)
	p.wantCount(2, `SELECT count(*) FROM payables.extractions`)
	p.wantCount(2, `SELECT count(*) FROM ledger.documents WHERE tenant_id = $1`, tenant)
	// The duplicate points at the first PDF's item.
	p.wantCount(1, `SELECT count(*) FROM payables.ingestion_log l JOIN payables.inbox_items i ON i.id = l.original_inbox_id
		WHERE l.tenant_id = $1 AND l.outcome = 'skipped_duplicate' AND i.original_name = 'Rechnung Müller 2026-001.pdf'`, tenant)

	// The same message again: five more rows, nothing else.
	again := p.must(200, "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	want = []string{"skipped_duplicate Rechnung Müller 2026-001.pdf", "skipped_duplicate ZUGFeRD-Rechnung.pdf", want[2], want[3], "skipped_duplicate Kopie.pdf"}
	if diff := cmp.Diff(want, outcomesOf(again.list("rows"))); diff != "" {
		t.Fatalf("rows again (-want +got):\n%s", diff)
	}
	p.wantCount(10, rows(""), tenant)
	p.wantCount(2, `SELECT count(*) FROM payables.inbox_items`)
	p.wantCount(2, `SELECT count(*) FROM payables.extractions`)

	// From e-mail to review: the ZUGFeRD attachment is extracted by the
	// OCR worker and waits in the review queue with its totals, its
	// inbox item pointing at the case (a duplicate of it names the case:
	// below).
	var caseID string
	eventually(t, 60*time.Second, func() error {
		return p.owner.QueryRow(context.Background(), `SELECT c.id FROM payables.review_cases c JOIN payables.inbox_items i ON i.id = c.inbox_item_id
			WHERE c.tenant_id = $1 AND i.original_name = 'ZUGFeRD-Rechnung.pdf' AND i.review_case_id = c.id AND i.status = 'pending'`, tenant).Scan(&caseID)
	})
	rc := p.must(200, "GET", "/v1/invoice-review-cases/"+caseID, reader, nil)
	if !strings.Contains(string(rc.Raw), `"total_gross":529.87`) || !strings.Contains(string(rc.Raw), `"invoice_number":"471102"`) {
		t.Fatalf("the review case of the ZUGFeRD attachment: %s", rc.Raw)
	}
	items := p.must(200, "GET", "/v1/inbox?status=pending", reader, nil)
	if !strings.Contains(string(items.Raw), caseID) || !strings.Contains(string(items.Raw), `"total_gross":529.87`) {
		t.Fatalf("the inbox after extraction: %s", items.Raw)
	}

	// A Mailgun form with the secret in the query: an XML e-invoice (CII),
	// stored as a ledger document of type application/xml.
	cii := readRepoFile(t, "services", "payables", "einvoicein", "testdata", "zugferd-en16931-einfach.xml")
	form, ct := multipartBody(t, textField("sender", "x@lieferant.example"), textField("subject", "XRechnung"),
		textField("body-plain", "siehe Anhang"),
		textField("body-mime", string(testMail(t, "XRechnung 4711", mailPart{"xrechnung.xml", "text/xml; charset=UTF-8", cii}))),
		textField("signature", "abc"))
	xml := p.must(200, "POST", hook+"?secret="+secret, "", form, "Content-Type", ct)
	if diff := cmp.Diff([]string{"ingested xrechnung.xml"}, outcomesOf(xml.list("rows"))); diff != "" {
		t.Fatalf("form rows (-want +got):\n%s", diff)
	}
	p.wantCount(1, `SELECT count(*) FROM ledger.documents WHERE tenant_id = $1 AND mime_type = 'application/xml'`, tenant)
	// Not an e-invoice, and no message in the form.
	notInvoice := testMail(t, "Daten", mailPart{"daten.xml", "application/xml", []byte(`<?xml version="1.0"?><Bestellung/>`)})
	r := p.must(200, "POST", hook, "", notInvoice, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	if o := outcomesOf(r.list("rows")); len(o) != 1 || !strings.HasPrefix(o[0], `rejected_invalid daten.xml: the XML file is no e-invoice (its root is "Bestellung"`) {
		t.Fatalf("not an e-invoice: %v", o)
	}
	form, ct = multipartBody(t, textField("sender", "x@lieferant.example"))
	p.expectError(400, "INVALID_INPUT", "POST", hook+"?secret="+secret, "", form, "Content-Type", ct)
	p.expectError(415, "UNSUPPORTED_MEDIA_TYPE", "POST", hook, "", mail, "Content-Type", "application/json", "X-Webhook-Secret", secret)
	p.wantCount(12, rows(""), tenant)

	// Direct uploads: the same outcomes, each one row.
	png := append([]byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 'I', 'H', 'D', 'R'}, bytes.Repeat([]byte{7}, 40)...)
	p.expectError(403, "FORBIDDEN", "POST", "/v1/inbox", reader, []byte("x"), "Content-Type", "multipart/form-data; boundary=x")
	item := p.upload(201, "/v1/inbox", writer, fileField("beleg.png", "image/png", png))
	if item.str("status") != "pending" || item.Body["source_email"] != nil || item.str("original_name") != "beleg.png" ||
		item.Body["ocr_extraction"] != nil || item.Body["compliance_check"] != nil || item.Body["vendor_match"] != nil {
		t.Fatalf("uploaded item %s", item.Raw)
	}
	for _, tc := range []struct {
		name, code string
		status     int
		file       part
	}{
		{"same bytes", "DUPLICATE_DOCUMENT", 409, fileField("nochmal.png", "image/png", png)},
		{"same bytes as the e-mail's PDF", "DUPLICATE_DOCUMENT", 409, fileField("x.pdf", "application/pdf", invoice)},
		{"executable named pdf", "MIME_MISMATCH", 400, fileField("r.pdf", "application/pdf", exe)},
		{"empty", "EMPTY_FILE", 400, fileField("r.pdf", "application/pdf", nil)},
		{"gif", "INVALID_FILE_TYPE", 400, fileField("r.gif", "image/gif", []byte("GIF89a"))},
		{"over 10 MB", "FILE_TOO_LARGE", 400, fileField("big.pdf", "application/pdf", append([]byte("%PDF-"), bytes.Repeat([]byte{'x'}, 10<<20)...))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := p.upload(tc.status, "/v1/inbox", writer, tc.file)
			if r.code() != tc.code {
				t.Fatalf("code %s, want %s: %s", r.code(), tc.code, r.Raw)
			}
		})
	}
	p.wantCount(19, rows(""), tenant)
	p.wantCount(1, rows(` AND outcome = 'rejected_invalid' AND filename = 'big.pdf' AND size_bytes = $2 AND file_hash IS NULL`), tenant, 10<<20+5)

	// The ingestion log: newest first, filters, limits, scopes.
	log := p.must(200, "GET", "/v1/payables/ingestion-log", reader, nil).list("rows")
	if len(log) != 19 || log[0]["filename"] != "big.pdf" || log[18]["filename"] != "Rechnung Müller 2026-001.pdf" {
		t.Fatalf("log of %d rows, first %v, last %v", len(log), log[0], log[len(log)-1])
	}
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"?outcome=ingested", 4},
		{"?outcome=skipped_duplicate", 6},
		{"?outcome=rejected_invalid&outcome=skipped_duplicate", 15},
		{"?outcome=failed", 0},
		{"?limit=5&offset=16", 3},
		{"?limit=200", 19},
	} {
		if got := p.must(200, "GET", "/v1/payables/ingestion-log"+tc.query, reader, nil).list("rows"); len(got) != tc.n {
			t.Errorf("ingestion log %s: %d rows, want %d", tc.query, len(got), tc.n)
		}
	}
	for _, q := range []string{"?limit=0", "?limit=201", "?outcome=bogus", "?offset=-1", "?limit=x"} {
		p.expectError(400, "INVALID_INPUT", "GET", "/v1/payables/ingestion-log"+q, reader, nil)
	}
	p.expectError(403, "FORBIDDEN", "GET", "/v1/payables/ingestion-log", outsider, nil)

	// The inbox: pending by default, newest first (once the OCR worker
	// is through with the items: one being read is processing).
	eventually(t, 60*time.Second, func() error {
		if n := count(t, p.owner, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND state IN ('queued', 'running')`, tenant); n > 0 {
			return fmt.Errorf("%d extractions still at work", n)
		}
		return nil
	})
	inbox := p.must(200, "GET", "/v1/inbox", reader, nil).list("items")
	var names []string
	for _, it := range inbox {
		names = append(names, it["original_name"].(string))
	}
	if diff := cmp.Diff([]string{"beleg.png", "xrechnung.xml", "ZUGFeRD-Rechnung.pdf", "Rechnung Müller 2026-001.pdf"}, names); diff != "" {
		t.Fatalf("inbox (-want +got):\n%s", diff)
	}
	if inbox[3]["source_email"] != "juergen@lieferant.example" || inbox[3]["source_subject"] != "Rechnung 2026-001" {
		t.Fatalf("e-mail item %v", inbox[3])
	}
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"?status=pending", 4}, {"?status=confirmed", 0}, {"?status=processing", 0}, {"?status=rejected", 0},
		{"?limit=1", 1}, {"?limit=2&offset=3", 1}, {"?limit=200", 4},
	} {
		if got := p.must(200, "GET", "/v1/inbox"+tc.query, reader, nil).list("items"); len(got) != tc.n {
			t.Errorf("inbox %s: %d items, want %d", tc.query, len(got), tc.n)
		}
	}
	for _, q := range []string{"?status=bogus", "?limit=0", "?limit=201", "?offset=-1"} {
		p.expectError(400, "INVALID_INPUT", "GET", "/v1/inbox"+q, reader, nil)
	}
	p.expectError(403, "FORBIDDEN", "GET", "/v1/inbox", outsider, nil)

	// A done extraction shows on the item.
	if _, err := p.owner.Exec(t.Context(), `UPDATE payables.extractions SET state = 'done', finished_at = now(),
			ocr_result = '{"vendor_name": "Lieferant GmbH", "total_gross": 119.00}',
			vendor_match = '{"status": "unmatched", "vendor_id": null, "confidence": 0, "match_method": null}'
		WHERE inbox_item_id = $1`, inbox[3]["id"]); err != nil {
		t.Fatal(err)
	}
	done := p.must(200, "GET", "/v1/inbox?limit=1&offset=3", reader, nil).list("items")[0]
	if diff := cmp.Diff([]any{map[string]any{"vendor_name": "Lieferant GmbH", "total_gross": 119.0},
		map[string]any{"status": "unmatched", "vendor_id": nil, "confidence": 0.0, "match_method": nil}, nil},
		[]any{done["ocr_extraction"], done["vendor_match"], done["compliance_check"]}); diff != "" {
		t.Fatalf("extraction on the item (-want +got):\n%s", diff)
	}

	// Tenants apart: the other tenant sees nothing, and may send the same
	// bytes into its own inbox.
	if n := len(p.must(200, "GET", "/v1/inbox", otherWriter, nil).list("items")); n != 0 {
		t.Fatalf("other tenant's inbox has %d items", n)
	}
	if n := len(p.must(200, "GET", "/v1/payables/ingestion-log", otherWriter, nil).list("rows")); n != 0 {
		t.Fatalf("other tenant's log has %d rows", n)
	}
	p.must(200, "POST", "/v1/payables/inbound-email/"+otherTenant, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", otherSecret)
	p.wantCount(2, `SELECT count(*) FROM payables.inbox_items WHERE tenant_id = $1`, otherTenant)

	// A new secret retires the old one.
	fresh := p.must(201, "POST", "/v1/payables/inbound-email/secret", writer, nil).str("secret")
	p.expectError(401, "UNAUTHENTICATED", "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	resent := p.must(200, "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", fresh)
	p.wantCount(24, rows(""), tenant)
	// Sent now that the ZUGFeRD attachment's review case is open, its
	// duplicate names the case.
	if dup := resent.list("rows")[1]; dup["outcome"] != "skipped_duplicate" || dup["original_review_case_id"] != caseID {
		t.Fatalf("the duplicate after review opened: %v", dup)
	}
}

// TestInboundEmailRateLimit: the webhook is limited per client address by
// its own budget, apart from the stricter one of the auth routes; a wrong
// secret spends it like any call.
func TestInboundEmailRateLimit(t *testing.T) {
	p, admin, tenant := setup(t, env{"WEBHOOK_RATE_LIMIT_PER_MINUTE": "3", "AUTH_RATE_LIMIT_PER_MINUTE": "1"}, "Drossel GmbH")
	secret := p.must(201, "POST", "/v1/payables/inbound-email/secret", p.apiKey(admin, "kreditoren:write"), nil).str("secret")
	mail := testMail(t, "Rechnung", mailPart{"r.pdf", "application/pdf", pdfOf("limit")})
	hook := "/v1/payables/inbound-email/" + tenant
	p.must(401, "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", "wrong")
	p.must(200, "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	r := p.must(200, "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	if r.Header.Get("X-RateLimit-Limit") != "3" {
		t.Fatalf("limit header %q", r.Header.Get("X-RateLimit-Limit"))
	}
	p.expectError(429, "RATE_LIMITED", "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	p.wantCount(2, `SELECT count(*) FROM payables.ingestion_log WHERE tenant_id = $1`, tenant)
}

// TestInboundEmailLarge: a message of some 27 MB (two large PDFs in
// base64) goes through the uploads bucket: the 9 MB one is ingested, the
// 11 MB one refused with its full size; a message over 32 MiB is refused
// with nothing written.
func TestInboundEmailLarge(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Grosspost GmbH")
	secret := p.must(201, "POST", "/v1/payables/inbound-email/secret", p.apiKey(admin, "kreditoren:write"), nil).str("secret")
	pdf := func(n int, tag string) []byte {
		return append(append([]byte("%PDF-1.7\n% "+tag+"\n"), bytes.Repeat([]byte("0123456789abcdef"), n/16)...), "\n%%EOF\n"...)
	}
	mail := testMail(t, "Pläne", mailPart{"plan.pdf", "application/pdf", pdf(9<<20, "plan")}, mailPart{"zu-gross.pdf", "application/pdf", pdf(11<<20, "gross")})
	hook := "/v1/payables/inbound-email/" + tenant
	r := p.must(200, "POST", hook, "", mail, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	rows := r.list("rows")
	if diff := cmp.Diff([]string{"ingested plan.pdf", fmt.Sprintf("rejected_invalid zu-gross.pdf: the file has %d bytes; at most 10 MB are accepted", len(pdf(11<<20, "gross")))}, outcomesOf(rows)); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	p.wantCount(1, `SELECT count(*) FROM ledger.documents WHERE tenant_id = $1 AND size_bytes = $2`, tenant, len(pdf(9<<20, "plan")))
	huge := testMail(t, "zu viel", mailPart{"a.pdf", "application/pdf", pdf(25<<20, "huge")})
	p.expectError(400, "FILE_TOO_LARGE", "POST", hook, "", huge, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	p.wantCount(2, `SELECT count(*) FROM payables.ingestion_log WHERE tenant_id = $1`, tenant)

	// A message cut short after its first attachment is refused whole:
	// nothing is written for the attachment that was readable.
	cut := testMail(t, "abgeschnitten", mailPart{"ganz.pdf", "application/pdf", pdf(1000, "ganz")}, mailPart{"halb.pdf", "application/pdf", pdf(5000, "halb")})
	cut = cut[:len(cut)-2000]
	p.expectError(400, "INVALID_INPUT", "POST", hook, "", cut, "Content-Type", "message/rfc822", "X-Webhook-Secret", secret)
	p.wantCount(2, `SELECT count(*) FROM payables.ingestion_log WHERE tenant_id = $1`, tenant)
	p.wantCount(1, `SELECT count(*) FROM payables.inbox_items WHERE tenant_id = $1`, tenant)

	// SendGrid's raw form: the message in the field email, beside the
	// provider's own fields.
	form, ct := multipartBody(t, textField("headers", "Received: by mx.sendgrid.net"), textField("dkim", "{@lieferant.example : pass}"),
		textField("email", string(testMail(t, "Beleg", mailPart{"beleg.png", "image/png", pngOf(4)}))), textField("to", "rechnungen@kunde.example"))
	r = p.must(200, "POST", hook, "", form, "Content-Type", ct, "X-Webhook-Secret", secret)
	if diff := cmp.Diff([]string{"ingested beleg.png"}, outcomesOf(r.list("rows"))); diff != "" {
		t.Fatalf("SendGrid form (-want +got):\n%s", diff)
	}
	p.wantCount(2, `SELECT count(*) FROM payables.inbox_items WHERE tenant_id = $1`, tenant)
}

// TestInboxScannedInvoice: a scanned invoice (a 200 dpi greyscale JPEG
// with noise and a slight skew, as an office scanner writes it) uploaded
// to the inbox is read by the OCR worker with Tesseract and waits in the
// review queue with the right totals per rate, matched to its vendor by
// name.
func TestInboxScannedInvoice(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Scan GmbH")
	w := p.apiKey(admin, "kreditoren:read", "kreditoren:write")
	vendor := p.must(201, "POST", "/v1/vendors", w, map[string]any{"name": "Bürobedarf Schmidt GmbH"}).str("id")
	scan := readRepoFile(t, "deploy", "allinone", "testdata", "scans", "scan-de-19-7.jpg")
	item := p.upload(201, "/v1/inbox", w, fileField("scan.jpg", "image/jpeg", scan))
	var caseID string
	eventually(t, 90*time.Second, func() error {
		return p.owner.QueryRow(context.Background(), `SELECT review_case_id FROM payables.inbox_items
			WHERE tenant_id = $1 AND id = $2 AND review_case_id IS NOT NULL`, tenant, item.str("id")).Scan(&caseID)
	})
	var got struct {
		Source      string `json:"source"`
		Gross       string
		Breakdown   []string
		VendorMatch string
	}
	var ocr struct {
		Source       string `json:"source"`
		InvoiceNo    string `json:"invoice_number"`
		TotalNet     any    `json:"total_net"`
		TotalTax     any    `json:"total_tax"`
		TotalGross   any    `json:"total_gross"`
		TaxBreakdown []struct {
			Rate, Net, Tax any
		} `json:"tax_breakdown"`
	}
	var raw []byte
	if err := p.owner.QueryRow(context.Background(), `SELECT ocr_result FROM payables.extractions WHERE tenant_id = $1 AND inbox_item_id = $2 AND state = 'done'`,
		tenant, item.str("id")).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ocr); err != nil {
		t.Fatal(err)
	}
	got.Source, got.Gross = ocr.Source, fmt.Sprint(ocr.TotalNet, " ", ocr.TotalTax, " ", ocr.TotalGross)
	for _, b := range ocr.TaxBreakdown {
		got.Breakdown = append(got.Breakdown, fmt.Sprint(b.Rate, " ", b.Net, " ", b.Tax))
	}
	inbox := p.must(200, "GET", "/v1/inbox", w, nil).list("items")
	if len(inbox) == 1 {
		if m, ok := inbox[0]["vendor_match"].(map[string]any); ok {
			got.VendorMatch = fmt.Sprint(m["status"], " ", m["vendor_id"] == vendor)
		}
	}
	want := struct {
		Source      string `json:"source"`
		Gross       string
		Breakdown   []string
		VendorMatch string
	}{"ocr", "250.4 37.68 288.08", []string{"19 167.9 31.9", "7 82.5 5.78"}, "matched true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the scan's extraction (-want +got):\n%s\n%s", diff, raw)
	}
	rc := p.must(200, "GET", "/v1/invoice-review-cases/"+caseID, w, nil)
	if !strings.Contains(string(rc.Raw), `"total_gross":288.08`) {
		t.Fatalf("review case %s", rc.Raw)
	}
}

// TestInboxUploadOverMCP: an agent puts an e-invoice into the inbox with
// the upload_to_inbox tool (the file in base64, as MCP has no file
// arguments); it takes the REST upload's path to the review queue, and the
// tool answers the route's refusals as tool errors.
func TestInboxUploadOverMCP(t *testing.T) {
	p, admin, tenant := setup(t, nil, "MCP Eingang GmbH")
	w := p.apiKey(admin, "kreditoren:read", "kreditoren:write")
	zugferd := readRepoFile(t, "services", "payables", "einvoicein", "testdata", "mustang-EN16931_Einfach.pdf")
	upload := func(args map[string]any) (map[string]any, bool) {
		return toolResult(t, p.mcpCall(t, w, 1, "tools/call", map[string]any{"name": "upload_to_inbox", "arguments": args}))
	}
	item, isErr := upload(map[string]any{"file_base64": base64.StdEncoding.EncodeToString(zugferd), "filename": "rechnung 471102.pdf"})
	if isErr || item["status"] == nil || item["original_name"] != "rechnung 471102.pdf" {
		t.Fatalf("upload_to_inbox: %v", item)
	}
	var caseID string
	eventually(t, 60*time.Second, func() error {
		return p.owner.QueryRow(context.Background(), `SELECT review_case_id FROM payables.inbox_items
			WHERE tenant_id = $1 AND id = $2 AND review_case_id IS NOT NULL`, tenant, item["id"]).Scan(&caseID)
	})
	if rc := p.must(200, "GET", "/v1/invoice-review-cases/"+caseID, w, nil); !strings.Contains(string(rc.Raw), `"total_gross":529.87`) {
		t.Fatalf("review case %s", rc.Raw)
	}
	for _, c := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"file_base64": base64.StdEncoding.EncodeToString(zugferd), "filename": "nochmal.pdf"}, "DUPLICATE_DOCUMENT"},
		{map[string]any{"file_base64": "kein base64!", "filename": "x.pdf"}, "INVALID_INPUT"},
		{map[string]any{"file_base64": base64.StdEncoding.EncodeToString(zugferd), "filename": "bild.png"}, "MIME_MISMATCH"},
		{map[string]any{"filename": "x.pdf"}, "INVALID_INPUT"},
	} {
		if res, isErr := upload(c.args); !isErr || res["code"] != c.code {
			t.Errorf("%v: want the tool error %s, got %v", c.args["filename"], c.code, res)
		}
	}
	p.wantCount(1, `SELECT count(*) FROM payables.inbox_items WHERE tenant_id = $1`, tenant)
	// Only an upload tool's arguments may exceed the REST body limit.
	big, isErr := toolResult(t, p.mcpCall(t, w, 1, "tools/call", map[string]any{"name": "list_inbox",
		"arguments": map[string]any{"status": strings.Repeat("x", 2<<20)}}))
	if !isErr || big["code"] != "PAYLOAD_TOO_LARGE" {
		t.Errorf("2 MB of arguments to list_inbox: %.200v", big)
	}
}
