package payables

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/payables/mailin"
)

// Intake limits (spec: Limits; a document of the inbox is a ledger
// document, at most 10 MB).
const (
	MaxAttachmentBytes    = 10 << 20
	DefaultInboxLimit     = 50
	MaxInboxLimit         = 200
	DefaultIngestionLimit = 100
	MaxIngestionLimit     = 200
)

// The document types the inbox takes: what the ledger keeps, and XML
// e-invoices (CII, UBL).
const (
	MimePDF  = "application/pdf"
	MimeJPEG = "image/jpeg"
	MimePNG  = "image/png"
	MimeXML  = "application/xml"
)

// Sources of an inbox item.
const (
	SourceEmail  = "email"
	SourceUpload = "upload"
)

// InboxRef is an inbox item as a duplicate points at it.
type InboxRef struct {
	ID           string
	ReviewCaseID *string
}

// NewInboxItem is an accepted attachment on its way into the inbox.
type NewInboxItem struct {
	ID, DocumentID, FileHash, MimeType, OriginalName, Source string
	SourceEmail, SourceSubject                               *string
}

// IntakeStore keeps the inbox, the ingestion log and the webhook secrets;
// postgres.Store implements it.
type IntakeStore interface {
	// WebhookSecretHash is the SHA-256 of the tenant's webhook secret;
	// NOT_FOUND when it has none.
	WebhookSecretHash(ctx context.Context, tenantID string) ([]byte, error)
	// SetWebhookSecret replaces the tenant's secret by the one hashed.
	SetWebhookSecret(ctx context.Context, tenantID string, hash []byte) (time.Time, error)
	// InboxByHash is the tenant's inbox item of these bytes; NOT_FOUND
	// when none.
	InboxByHash(ctx context.Context, tenantID, fileHash string) (InboxRef, error)
	// Ingest writes the inbox item, queues its extraction and appends row
	// (outcome ingested) in one transaction. When an item of the same
	// bytes was written first, it writes nothing and returns that item's
	// ref with a DUPLICATE_DOCUMENT error.
	Ingest(ctx context.Context, tenantID string, item NewInboxItem, row payablesv1.IngestionRow) (payablesv1.InboxItem, InboxRef, error)
	// LogIngestion appends one row to the ingestion log.
	LogIngestion(ctx context.Context, tenantID string, row payablesv1.IngestionRow) error
	// Inbox lists the tenant's inbox items of f.Status, newest first,
	// each with the result of its latest extraction.
	Inbox(ctx context.Context, tenantID string, f payablesv1.InboxFilter) ([]payablesv1.InboxItem, error)
	// IngestionLog lists the tenant's ingestion log, newest first.
	IngestionLog(ctx context.Context, tenantID string, f payablesv1.IngestionFilter) ([]payablesv1.IngestionRow, error)
}

// Documents stores originals as ledger documents; the ledger keeps one
// document per tenant and SHA-256.
type Documents interface {
	Upload(ctx context.Context, tenantID, name, mimeType string, content []byte) (documentID string, err error)
}

// Uploads reads and deletes what the gateway put into its uploads bucket.
type Uploads interface {
	Open(ctx context.Context, bucket, name string) (io.ReadCloser, error)
	Delete(ctx context.Context, bucket, name string) error
}

// Intake is the inbox's part of the service.
type Intake struct {
	store   IntakeStore
	docs    Documents
	uploads Uploads
	log     *slog.Logger
	newID   func() string
}

// WithIntake gives the service its inbox.
func (s *Service) WithIntake(store IntakeStore, docs Documents, uploads Uploads, log *slog.Logger, newID func() string) *Service {
	s.intake = &Intake{store: store, docs: docs, uploads: uploads, log: log, newID: newID}
	return s
}

// RollWebhookSecret makes a new webhook secret for the tenant, replacing
// the one it had; only its SHA-256 is kept, so this answer is the one
// time it is shown.
func (s *Service) RollWebhookSecret(ctx context.Context, tenantID string) (payablesv1.WebhookSecret, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return payablesv1.WebhookSecret{}, fmt.Errorf("payables.RollWebhookSecret: %w", err)
	}
	secret := "whsec_" + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(secret))
	at, err := s.intake.store.SetWebhookSecret(ctx, tenantID, sum[:])
	if err != nil {
		return payablesv1.WebhookSecret{}, err
	}
	return payablesv1.WebhookSecret{Secret: secret, Path: "/v1/payables/inbound-email/" + tenantID, CreatedAt: at}, nil
}

func unauthenticated() error {
	return errs.E(errs.Unauthenticated, "missing or invalid webhook secret; send it as X-Webhook-Secret or ?secret=")
}

// checkSecret is nil when secret is the tenant's webhook secret. An
// unknown tenant and a tenant without a secret are refused as a wrong
// secret is, after the same work, so that the answer tells no tenants
// apart.
func (s *Service) checkSecret(ctx context.Context, tenantID, secret string) error {
	want := make([]byte, sha256.Size)
	known := false
	if ValidID(tenantID) {
		h, err := s.intake.store.WebhookSecretHash(ctx, tenantID)
		switch {
		case err == nil && len(h) == sha256.Size:
			want, known = h, true
		case err != nil && !errs.Is(err, errs.NotFound):
			return err
		}
	}
	got := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(got[:], want) != 1 || !known || secret == "" {
		return unauthenticated()
	}
	return nil
}

// InboundEmail takes one e-mail the tenant's mail provider forwarded, the
// raw message being the object upload names in the uploads bucket (which
// is deleted afterwards, whatever the outcome). A wrong secret is 401
// with nothing read or written; else every attachment gets one ingestion
// log row, the rows being the answer.
func (s *Service) InboundEmail(ctx context.Context, tenantID, secret, bucket, object string) (payablesv1.InboundEmailResult, error) {
	defer func() {
		if err := s.intake.uploads.Delete(context.WithoutCancel(ctx), bucket, object); err != nil {
			s.intake.log.Warn("inbound e-mail not deleted from the uploads bucket; its TTL will", "object", object, "err", err)
		}
	}()
	if err := s.checkSecret(ctx, tenantID, secret); err != nil {
		return payablesv1.InboundEmailResult{}, err
	}
	// The message is read twice: once to see that it is MIME throughout
	// (a message refused writes nothing), then to take its attachments.
	if err := s.readMessage(ctx, bucket, object, func(_ mailin.Envelope, a mailin.Attachment) error {
		_, err := io.Copy(io.Discard, a.Body)
		return err
	}); err != nil {
		return payablesv1.InboundEmailResult{}, err
	}
	res := payablesv1.InboundEmailResult{Rows: []payablesv1.IngestionRow{}}
	err := s.readMessage(ctx, bucket, object, func(env mailin.Envelope, a mailin.Attachment) error {
		in := incoming{source: SourceEmail, filename: a.FileName, declared: a.ContentType,
			sender: nonEmpty(env.From), subject: nonEmpty(env.Subject)}
		row, _, err := s.ingest(ctx, tenantID, in, a.Body)
		if err != nil {
			return err
		}
		res.Rows = append(res.Rows, row)
		return nil
	})
	if err != nil {
		// Read once already, the message is MIME: this is the bucket or
		// the store failing.
		return res, errs.Wrap("payables.InboundEmail", err)
	}
	return res, nil
}

// readMessage walks the message in the bucket. A broken message is an
// INVALID_INPUT error; the bucket failing is any other.
func (s *Service) readMessage(ctx context.Context, bucket, object string, fn func(mailin.Envelope, mailin.Attachment) error) error {
	rc, err := s.intake.uploads.Open(ctx, bucket, object)
	if err != nil {
		return errs.Wrap("payables.InboundEmail: open", err)
	}
	defer rc.Close()
	src := &readErr{r: rc}
	_, err = mailin.Walk(src, fn)
	switch {
	case err == nil:
		return nil
	case src.err != nil:
		return errs.Wrap("payables.InboundEmail: read", src.err)
	case errors.Is(err, mailin.ErrMalformed) || errs.As(err) == nil:
		// Not the bucket: the message's structure or an attachment's
		// transfer encoding.
		return errs.Invalid("the message is not readable as MIME: "+err.Error(), errs.Field("message", "malformed"))
	}
	return err
}

// readErr remembers an error of the reader under the MIME parser, so that
// a failing bucket is not taken for a broken message.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// UploadToInbox takes one file uploaded directly: 201 with the new inbox
// item, DUPLICATE_DOCUMENT for bytes already in the inbox, and the
// document upload's codes for a file refused. It is logged as an e-mail
// attachment is.
func (s *Service) UploadToInbox(ctx context.Context, tenantID, filename, contentType string, body io.Reader) (payablesv1.InboxItem, error) {
	row, item, err := s.ingest(ctx, tenantID, incoming{source: SourceUpload, filename: mailin.FileName(filename), declared: mediaType(contentType)}, body)
	if err != nil {
		return payablesv1.InboxItem{}, err
	}
	switch row.Outcome {
	case payablesv1.OutcomeIngested:
		return item.InboxItem, nil
	case payablesv1.OutcomeSkippedDuplicate:
		e := errs.E(errs.DuplicateDocument, "the same file (SHA-256 %s) is already in the inbox as item %s", *row.FileHash, *row.OriginalInboxID)
		e.Details = []errs.Detail{errs.Field("file", "duplicate of inbox item "+*row.OriginalInboxID)}
		return payablesv1.InboxItem{}, e
	case payablesv1.OutcomeRejectedInvalid:
		return payablesv1.InboxItem{}, item.rejection
	}
	return payablesv1.InboxItem{}, errs.E(errs.Internal, "the file could not be processed")
}

// Inbox lists the tenant's inbox items.
func (s *Service) Inbox(ctx context.Context, tenantID string, f payablesv1.InboxFilter) (payablesv1.InboxList, error) {
	items, err := s.intake.store.Inbox(ctx, tenantID, f)
	if items == nil {
		items = []payablesv1.InboxItem{}
	}
	return payablesv1.InboxList{Items: items}, err
}

// IngestionLog lists the tenant's ingestion log.
func (s *Service) IngestionLog(ctx context.Context, tenantID string, f payablesv1.IngestionFilter) (payablesv1.IngestionLog, error) {
	rows, err := s.intake.store.IngestionLog(ctx, tenantID, f)
	if rows == nil {
		rows = []payablesv1.IngestionRow{}
	}
	return payablesv1.IngestionLog{Rows: rows}, err
}

// incoming is where an attachment came from and what it claims to be.
type incoming struct {
	source, filename, declared string
	sender, subject            *string
}

// ingested is the item an attachment became, or why it was refused.
type ingested struct {
	payablesv1.InboxItem
	rejection *errs.Error
}

// failedReason is the public reason of an unexpected failure: the log
// says nothing of internals.
const failedReason = "the attachment could not be processed; send it again"

// ingest processes one attachment and writes its one ingestion log row:
// refused at the boundary (rejected_invalid), bytes already in the inbox
// (skipped_duplicate), stored and queued for extraction (ingested), or an
// unexpected failure (failed). An error is returned only when not even
// the row could be written.
func (s *Service) ingest(ctx context.Context, tenantID string, in incoming, body io.Reader) (payablesv1.IngestionRow, ingested, error) {
	row := payablesv1.IngestionRow{ID: s.intake.newID(), SenderEmail: in.sender, Subject: in.subject,
		Filename: in.filename, ClaimedMime: truncate(in.declared, 255), CreatedAt: time.Now().UTC()}
	content, err := io.ReadAll(io.LimitReader(body, MaxAttachmentBytes+1))
	row.SizeBytes = int64(len(content))
	if err == nil && len(content) > MaxAttachmentBytes {
		// Counted, not kept: the log says how large it was.
		var n int64
		n, err = io.Copy(io.Discard, body)
		row.SizeBytes += n
	}
	if err != nil {
		return s.fail(ctx, tenantID, row, "read", err)
	}
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	row.FileHash = &hash
	mimeType, rej := CheckAttachment(in.filename, in.declared, content, row.SizeBytes)
	if rej != nil {
		if row.SizeBytes == 0 || row.SizeBytes > MaxAttachmentBytes {
			row.FileHash = nil // the hash of nothing, or of a cut file, names nothing
		}
		return s.logged(ctx, tenantID, row, payablesv1.OutcomeRejectedInvalid, rej.Message, ingested{rejection: rej})
	}
	orig, err := s.intake.store.InboxByHash(ctx, tenantID, hash)
	switch {
	case err == nil:
		return s.duplicate(ctx, tenantID, row, orig)
	case !errs.Is(err, errs.NotFound):
		return s.fail(ctx, tenantID, row, "inbox by hash", err)
	}
	name := in.filename
	if name == "" || name == path.Ext(name) {
		name = "document" + extOf[mimeType]
	}
	docID, err := s.intake.docs.Upload(ctx, tenantID, name, mimeType, content)
	if err != nil {
		return s.fail(ctx, tenantID, row, "ledger document", err)
	}
	row.DocumentID = &docID
	row.Outcome = payablesv1.OutcomeIngested
	item, orig, err := s.intake.store.Ingest(ctx, tenantID, NewInboxItem{ID: s.intake.newID(), DocumentID: docID, FileHash: hash,
		MimeType: mimeType, OriginalName: name, Source: in.source, SourceEmail: in.sender, SourceSubject: in.subject}, row)
	switch {
	case errs.Is(err, errs.DuplicateDocument):
		// The same bytes arrived twice at once; the other one won.
		row.DocumentID = nil
		return s.duplicate(ctx, tenantID, row, orig)
	case err != nil:
		row.DocumentID = nil
		return s.fail(ctx, tenantID, row, "ingest", err)
	}
	return row, ingested{InboxItem: item}, nil
}

func (s *Service) duplicate(ctx context.Context, tenantID string, row payablesv1.IngestionRow, orig InboxRef) (payablesv1.IngestionRow, ingested, error) {
	row.OriginalInboxID, row.OriginalReviewCaseID = &orig.ID, orig.ReviewCaseID
	return s.logged(ctx, tenantID, row, payablesv1.OutcomeSkippedDuplicate, "the same file (SHA-256) is already in the inbox", ingested{})
}

// fail logs the unexpected error for the operator and a generic row for
// the tenant.
func (s *Service) fail(ctx context.Context, tenantID string, row payablesv1.IngestionRow, op string, err error) (payablesv1.IngestionRow, ingested, error) {
	s.intake.log.Error("inbox attachment failed", "tenant", tenantID, "row", row.ID, "op", op, "err", err)
	return s.logged(ctx, tenantID, row, payablesv1.OutcomeFailed, failedReason, ingested{})
}

func (s *Service) logged(ctx context.Context, tenantID string, row payablesv1.IngestionRow, outcome, reason string, it ingested) (payablesv1.IngestionRow, ingested, error) {
	row.Outcome, row.Reason = outcome, &reason
	if err := s.intake.store.LogIngestion(ctx, tenantID, row); err != nil {
		return row, it, errs.Wrap("payables.ingest: log", err)
	}
	return row, it, nil
}

var extTypes = map[string]string{".pdf": MimePDF, ".jpg": MimeJPEG, ".jpeg": MimeJPEG, ".jpe": MimeJPEG, ".png": MimePNG, ".xml": MimeXML}

var extOf = map[string]string{MimePDF: ".pdf", MimeJPEG: ".jpg", MimePNG: ".png", MimeXML: ".xml"}

// declaredTypes maps declared Content-Types to document types; a generic
// type (octet-stream, none) says nothing and leaves it to the name.
var declaredTypes = map[string]string{
	MimePDF: MimePDF, "application/x-pdf": MimePDF,
	MimeJPEG: MimeJPEG, "image/jpg": MimeJPEG, "image/pjpeg": MimeJPEG,
	MimePNG: MimePNG, "image/x-png": MimePNG,
	MimeXML: MimeXML, "text/xml": MimeXML,
}

const allowedTypes = "PDF, JPG, PNG or an XML e-invoice (CII or UBL)"

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

// CheckAttachment is the inbox's boundary filter: an attachment is taken
// when it is not empty, at most 10 MB, a PDF, JPG, PNG or XML e-invoice by
// its name or declared type, and its first bytes are those of that type.
// It answers the document type, or the refusal with the code the document
// upload uses (EMPTY_FILE, FILE_TOO_LARGE, INVALID_FILE_TYPE,
// MIME_MISMATCH).
func CheckAttachment(name, declared string, content []byte, size int64) (string, *errs.Error) {
	switch {
	case size == 0:
		return "", errs.E(errs.EmptyFile, "the file is empty")
	case size > MaxAttachmentBytes:
		return "", errs.E(errs.FileTooLarge, "the file has %d bytes; at most %d MB are accepted", size, MaxAttachmentBytes>>20)
	}
	ext := strings.ToLower(path.Ext(name))
	byExt, extKnown := extTypes[ext]
	if ext != "" && !extKnown {
		return "", errs.E(errs.InvalidFileType, "files of type %s are not accepted; send a %s", truncate(ext, 20), allowedTypes)
	}
	var byDecl string
	if dt := mediaType(declared); dt != "" && dt != "application/octet-stream" {
		var ok bool
		if byDecl, ok = declaredTypes[dt]; !ok {
			return "", errs.E(errs.InvalidFileType, "files of type %s are not accepted; send a %s", truncate(dt, 50), allowedTypes)
		}
	}
	claimed := byExt
	switch {
	case byExt == "" && byDecl == "":
		return "", errs.E(errs.InvalidFileType, "the file has neither a known extension nor a declared type; send a %s", allowedTypes)
	case byExt == "":
		claimed = byDecl
	case byDecl != "" && byDecl != byExt:
		return "", errs.E(errs.MimeMismatch, "the declared type %s does not match the file name %s", byDecl, truncate(name, 80))
	}
	got := sniff(content)
	if got != claimed {
		what := "does not start like one"
		if got != "" {
			what = "is a " + got
		} else if bytes.HasPrefix(content, []byte("MZ")) {
			what = "is an executable"
		}
		return "", errs.E(errs.MimeMismatch, "the file claims to be %s but its content %s", claimed, what)
	}
	if claimed == MimeXML {
		if root := xmlRoot(content); !eInvoiceRoots[root] {
			return "", errs.E(errs.InvalidFileType, "the XML file is no e-invoice (its root is %q, not Invoice, CreditNote or CrossIndustryInvoice)", truncate(root, 50))
		}
	}
	return claimed, nil
}

// sniff names the document type of content by its first bytes, or "".
func sniff(content []byte) string {
	switch {
	case bytes.HasPrefix(content, []byte("%PDF-")):
		return MimePDF
	case bytes.HasPrefix(content, []byte{0xFF, 0xD8, 0xFF}):
		return MimeJPEG
	case bytes.HasPrefix(content, []byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}):
		return MimePNG
	}
	c := bytes.TrimPrefix(content, []byte{0xEF, 0xBB, 0xBF})
	c = bytes.TrimLeft(c, " \t\r\n")
	if bytes.HasPrefix(c, []byte("<?xml")) || bytes.HasPrefix(c, []byte("<")) && len(c) > 1 && isNameStart(c[1]) {
		return MimeXML
	}
	return ""
}

func isNameStart(b byte) bool { return b == '_' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' }

var eInvoiceRoots = map[string]bool{"Invoice": true, "CreditNote": true, "CrossIndustryInvoice": true}

// xmlRoot is the local name of the document's root element, "" when
// there is none before an error. Entities are never expanded by
// encoding/xml; the charset does not matter for an element name.
func xmlRoot(content []byte) string {
	d := xml.NewDecoder(bytes.NewReader(content))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for range 1000 {
		tok, err := d.RawToken()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local
		}
	}
	return ""
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
