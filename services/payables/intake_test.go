package payables

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

func TestCheckAttachment(t *testing.T) {
	pdf := []byte("%PDF-1.7\n%%EOF\n")
	png := []byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0}
	jpg := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10}
	cii := []byte("\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<!-- ZUGFeRD -->\n<rsm:CrossIndustryInvoice xmlns:rsm=\"urn:x\"/>")
	ubl := []byte(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`)
	exe := []byte("MZ\x90\x00\x03\x00")
	type want struct{ Type, Code string }
	tests := []struct {
		name, file, declared string
		content              []byte
		size                 int64 // 0: len(content)
		want                 want
	}{
		{"pdf", "Rechnung.pdf", "application/pdf", pdf, 0, want{Type: MimePDF}},
		{"pdf as octet-stream", "Rechnung.PDF", "application/octet-stream", pdf, 0, want{Type: MimePDF}},
		{"pdf without a name", "", "application/x-pdf", pdf, 0, want{Type: MimePDF}},
		{"png", "scan.png", "image/png", png, 0, want{Type: MimePNG}},
		{"jpeg by name only", "foto.jpeg", "", jpg, 0, want{Type: MimeJPEG}},
		{"CII as text/xml", "x.xml", "text/xml; charset=ISO-8859-1", cii, 0, want{Type: MimeXML}},
		{"UBL without a name", "", "application/xml", ubl, 0, want{Type: MimeXML}},
		{"empty", "a.pdf", "application/pdf", nil, 0, want{Code: errs.EmptyFile}},
		{"over 10 MB", "a.pdf", "application/pdf", pdf, MaxAttachmentBytes + 1, want{Code: errs.FileTooLarge}},
		{"exactly 10 MB", "a.pdf", "application/pdf", pdf, MaxAttachmentBytes, want{Type: MimePDF}},
		{"exe named pdf", "Rechnung.pdf", "application/pdf", exe, 0, want{Code: errs.MimeMismatch}},
		{"exe by name", "setup.exe", "application/octet-stream", exe, 0, want{Code: errs.InvalidFileType}},
		{"word", "a.docx", "", pdf, 0, want{Code: errs.InvalidFileType}},
		{"declared gif", "", "image/gif", []byte("GIF89a"), 0, want{Code: errs.InvalidFileType}},
		{"nothing says", "", "", pdf, 0, want{Code: errs.InvalidFileType}},
		{"name and type disagree", "a.pdf", "image/png", pdf, 0, want{Code: errs.MimeMismatch}},
		{"png bytes named pdf", "a.pdf", "", png, 0, want{Code: errs.MimeMismatch}},
		{"xml that is no e-invoice", "order.xml", "application/xml", []byte(`<?xml version="1.0"?><Order/>`), 0, want{Code: errs.InvalidFileType}},
		{"broken xml", "x.xml", "", []byte(`<?xml version="1.0"?><<`), 0, want{Code: errs.InvalidFileType}},
		{"html named xml", "x.xml", "", []byte(`<!DOCTYPE html><html/>`), 0, want{Code: errs.MimeMismatch}},
		{"pdf named xml", "x.xml", "", pdf, 0, want{Code: errs.MimeMismatch}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := tt.size
			if size == 0 {
				size = int64(len(tt.content))
			}
			typ, err := CheckAttachment(tt.file, tt.declared, tt.content, size)
			got := want{Type: typ}
			if err != nil {
				got.Code = err.Code
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

// secretStore is an IntakeStore holding secrets only.
type secretStore struct {
	IntakeStore
	hashes map[string][]byte
}

func (s secretStore) WebhookSecretHash(_ context.Context, tenantID string) ([]byte, error) {
	if h, ok := s.hashes[tenantID]; ok {
		return h, nil
	}
	return nil, errs.NotFoundf("no webhook secret")
}

func TestCheckSecret(t *testing.T) {
	const tenant, other = "6f1c2f9e-1d2b-4c3a-9e8f-0a1b2c3d4e5f", "7f1c2f9e-1d2b-4c3a-9e8f-0a1b2c3d4e5f"
	sum := sha256.Sum256([]byte("whsec_right"))
	s := &Service{intake: &Intake{store: secretStore{hashes: map[string][]byte{tenant: sum[:]}}}}
	for _, tc := range []struct {
		name, tenant, secret string
		ok                   bool
	}{
		{"right", tenant, "whsec_right", true},
		{"wrong", tenant, "whsec_wrong", false},
		{"empty", tenant, "", false},
		{"prefix", tenant, "whsec_righ", false},
		{"tenant without a secret", other, "whsec_right", false},
		{"no tenant id", "acme", "whsec_right", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.checkSecret(context.Background(), tc.tenant, tc.secret)
			if tc.ok != (err == nil) || err != nil && !errs.Is(err, errs.Unauthenticated) {
				t.Fatalf("checkSecret = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestSniffXMLNeedsAnElement(t *testing.T) {
	for _, c := range [][]byte{[]byte("<"), []byte("< Invoice"), []byte("text <Invoice/>"), bytes.Repeat([]byte(" "), 10)} {
		if got := sniff(c); got != "" {
			t.Errorf("sniff(%q) = %q", c, got)
		}
	}
}
