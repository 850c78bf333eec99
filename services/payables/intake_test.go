package payables

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
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

// memStore is an in-memory IntakeStore.
type memStore struct {
	secretStore
	items map[string]InboxRef // by hash
	log   []payablesv1.IngestionRow
}

func (m *memStore) InboxByHash(_ context.Context, _, hash string) (InboxRef, error) {
	if r, ok := m.items[hash]; ok {
		return r, nil
	}
	return InboxRef{}, errs.NotFoundf("none")
}

func (m *memStore) Ingest(_ context.Context, _ string, it NewInboxItem, row payablesv1.IngestionRow) (payablesv1.InboxItem, InboxRef, error) {
	if r, ok := m.items[it.FileHash]; ok {
		return payablesv1.InboxItem{}, r, errs.E(errs.DuplicateDocument, "dup")
	}
	m.items[it.FileHash] = InboxRef{ID: it.ID}
	m.log = append(m.log, row)
	return payablesv1.InboxItem{ID: it.ID, DocumentID: it.DocumentID, Status: payablesv1.InboxPending, OriginalName: it.OriginalName}, InboxRef{}, nil
}

func (m *memStore) LogIngestion(_ context.Context, _ string, row payablesv1.IngestionRow) error {
	m.log = append(m.log, row)
	return nil
}

// docs is a Documents that fails while down.
type docs struct{ down bool }

func (d *docs) Upload(_ context.Context, _, _, _ string, content []byte) (string, error) {
	if d.down {
		return "", fmt.Errorf("nats: no responders available for request")
	}
	return fmt.Sprintf("doc-%x", sha256.Sum256(content))[:20], nil
}

// TestUploadToInbox: each outcome of a direct upload, its answer and its
// one log row; a failure says nothing of internals.
func TestUploadToInbox(t *testing.T) {
	store := &memStore{items: map[string]InboxRef{}}
	d := &docs{}
	n := 0
	s := New(nil, nil).WithIntake(store, d, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), func() string { n++; return fmt.Sprint("id-", n) })
	ctx := context.Background()
	pdf := []byte("%PDF-1.4\n%%EOF\n")
	up := func(name, ct string, b []byte) string {
		_, err := s.UploadToInbox(ctx, "t", name, ct, bytes.NewReader(b))
		if e := errs.As(err); e != nil {
			return e.Code + ": " + e.Message
		}
		return ""
	}
	d.down = true
	got := []string{up("a.pdf", "application/pdf", pdf)}
	d.down = false
	got = append(got, up("a.pdf", "application/pdf", pdf), up("b.pdf", "", pdf), up("c.pdf", "application/pdf", []byte("MZ")))
	want := []string{"INTERNAL: the file could not be processed", "",
		"DUPLICATE_DOCUMENT: the same file (SHA-256 " + fmt.Sprintf("%x", sha256.Sum256(pdf)) + ") is already in the inbox as item id-3",
		"MIME_MISMATCH: the file claims to be application/pdf but its content is an executable"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("answers (-want +got):\n%s", d)
	}
	var outcomes []string
	for _, r := range store.log {
		reason := ""
		if r.Reason != nil {
			reason = *r.Reason
		}
		outcomes = append(outcomes, r.Outcome+" "+reason)
	}
	if d := cmp.Diff([]string{"failed " + failedReason, "ingested ", "skipped_duplicate the same file (SHA-256) is already in the inbox",
		"rejected_invalid the file claims to be application/pdf but its content is an executable"}, outcomes); d != "" {
		t.Fatalf("log (-want +got):\n%s", d)
	}
}
