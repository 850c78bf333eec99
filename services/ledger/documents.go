package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Upload limits. A request carries one file of at most MaxDocumentBytes;
// the whole multipart body, with the other fields and the part headers, may
// not exceed MaxUploadRequestBytes. The gateway must let bodies of that size
// through on the upload routes.
const (
	MaxDocumentBytes      = 10 << 20
	MaxUploadRequestBytes = 11 << 20
	MaxDocumentName       = 255
	MaxCategory           = 100
	maxFormField          = 1 << 20 // one text field of a multipart form
	maxFormParts          = 16
)

// Document MIME types.
const (
	MimePDF  = "application/pdf"
	MimeJPEG = "image/jpeg"
	MimePNG  = "image/png"
	// MimeXML is an XML e-invoice (CII, UBL), taken from services only:
	// the payables inbox stores the e-invoices it receives as documents.
	// POST /v1/documents stays PDF, JPG and PNG as the spec says.
	MimeXML = "application/xml"
)

// Document is the metadata of an uploaded original.
type Document struct {
	ID           string    `json:"id"`
	MimeType     string    `json:"mime_type"`
	OriginalName string    `json:"original_name"`
	SizeBytes    int64     `json:"size_bytes"`
	SHA256       string    `json:"sha256"`
	CreatedAt    time.Time `json:"created_at"`
}

// DocumentStore keeps uploaded originals unchanged. Documents are never
// changed or deleted.
type DocumentStore interface {
	// PutDocument stores content as d unless the tenant already holds the
	// same bytes (same SHA-256); it returns the stored document and whether
	// this call created it.
	PutDocument(ctx context.Context, tenant string, d Document, content []byte, createdBy string) (Document, bool, error)
	// Document returns a document's metadata; NOT_FOUND when the tenant has
	// no such document.
	Document(ctx context.Context, tenant, id string) (Document, error)
	// DocumentFile returns a document's metadata and its original bytes.
	DocumentFile(ctx context.Context, tenant, id string) (Document, []byte, error)
}

// UploadedFile is the file part of a multipart upload, validated: its type
// is allowed and its magic bytes agree with the declared type and name.
type UploadedFile struct {
	Name     string
	MimeType string
	Content  []byte
}

// Upload is a parsed multipart/form-data request: the one file field and
// the text fields.
type Upload struct {
	File   *UploadedFile
	Fields map[string]string
}

var extTypes = map[string]string{".pdf": MimePDF, ".jpg": MimeJPEG, ".jpeg": MimeJPEG, ".jpe": MimeJPEG, ".png": MimePNG}

// declaredTypes maps part Content-Types to document types; generic types
// (octet-stream, none) say nothing and leave the decision to the name.
var declaredTypes = map[string]string{
	MimePDF: MimePDF, "application/x-pdf": MimePDF,
	MimeJPEG: MimeJPEG, "image/jpg": MimeJPEG, "image/pjpeg": MimeJPEG,
	MimePNG: MimePNG, "image/x-png": MimePNG,
}

var extOf = map[string]string{MimePDF: ".pdf", MimeJPEG: ".jpg", MimePNG: ".png", MimeXML: ".xml"}

// xmlTypes are the name and declared types of an XML e-invoice, where a
// service may upload one.
var xmlTypes = map[string]string{".xml": MimeXML, MimeXML: MimeXML, "text/xml": MimeXML}

// eInvoiceRoots are the root elements of the e-invoice syntaxes: UBL
// Invoice and CreditNote, UN/CEFACT CrossIndustryInvoice (XRechnung CII,
// ZUGFeRD/Factur-X).
var eInvoiceRoots = map[string]bool{"Invoice": true, "CreditNote": true, "CrossIndustryInvoice": true}

// isEInvoice reports whether content is XML whose root is an e-invoice's.
// encoding/xml expands no entities; the charset does not matter for an
// element name.
func isEInvoice(content []byte) bool {
	c := bytes.TrimLeft(bytes.TrimPrefix(content, []byte{0xEF, 0xBB, 0xBF}), " \t\r\n")
	if !bytes.HasPrefix(c, []byte("<")) {
		return false
	}
	d := xml.NewDecoder(bytes.NewReader(c))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for range 1000 {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		if se, ok := tok.(xml.StartElement); ok {
			return eInvoiceRoots[se.Name.Local]
		}
	}
	return false
}

// sniff names the document type of content by its magic bytes, or "".
func sniff(content []byte) string {
	switch {
	case bytes.HasPrefix(content, []byte("%PDF-")):
		return MimePDF
	case bytes.HasPrefix(content, []byte{0xFF, 0xD8, 0xFF}):
		return MimeJPEG
	case bytes.HasPrefix(content, []byte{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}):
		return MimePNG
	}
	return ""
}

const allowedTypes = "PDF, JPG or PNG"

// ParseUpload reads a multipart/form-data body. fileField names the one
// file part; allowed lists the text fields that may accompany it. Errors:
// FILE_TOO_LARGE (request over 11 MB or file over 10 MB), EMPTY_FILE,
// INVALID_FILE_TYPE (name or declared type not PDF/JPG/PNG), MIME_MISMATCH
// (declared type, name and magic bytes disagree), INVALID_INPUT (no file,
// unknown or repeated fields, malformed body) and UNSUPPORTED_MEDIA_TYPE
// (not multipart/form-data).
func ParseUpload(contentType string, body []byte, fileField string, allowed ...string) (*Upload, error) {
	return parseUpload(contentType, body, false, fileField, allowed...)
}

// parseUpload is ParseUpload that also takes XML e-invoices when xml is
// set.
func parseUpload(contentType string, body []byte, xml bool, fileField string, allowed ...string) (*Upload, error) {
	if len(body) > MaxUploadRequestBytes {
		return nil, errs.E(errs.FileTooLarge, "the upload exceeds %d MB", MaxDocumentBytes>>20)
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, errs.E(errs.UnsupportedMedia, "send the upload as multipart/form-data with a %q field", fileField)
	}
	up := &Upload{Fields: map[string]string{}}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	malformed := func(err error) error {
		return errs.Invalid("malformed multipart body", errs.Field("", err.Error()))
	}
	for n := 0; ; n++ {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, malformed(err)
		}
		if n >= maxFormParts {
			return nil, errs.Invalid("too many form fields", errs.Field("", fmt.Sprintf("at most %d parts", maxFormParts)))
		}
		name := p.FormName()
		switch {
		case name == fileField:
			if up.File != nil {
				return nil, errs.Invalid("send exactly one file", errs.Field(fileField, "given more than once"))
			}
			content, err := io.ReadAll(io.LimitReader(p, MaxDocumentBytes+1))
			if err != nil {
				return nil, malformed(err)
			}
			if len(content) > MaxDocumentBytes {
				return nil, errs.E(errs.FileTooLarge, "the file exceeds %d MB", MaxDocumentBytes>>20)
			}
			f, err := checkFile(p.FileName(), p.Header.Get("Content-Type"), content, xml)
			if err != nil {
				return nil, err
			}
			up.File = f
		case contains(allowed, name):
			if _, dup := up.Fields[name]; dup {
				return nil, errs.Invalid("form field given more than once", errs.Field(name, "given more than once"))
			}
			v, err := io.ReadAll(io.LimitReader(p, maxFormField+1))
			if err != nil {
				return nil, malformed(err)
			}
			if len(v) > maxFormField {
				return nil, errs.Invalid("form field too long", errs.Field(name, fmt.Sprintf("at most %d bytes", maxFormField)))
			}
			if !utf8.Valid(v) {
				return nil, errs.Invalid("form field is not UTF-8 text", errs.Field(name, "must be UTF-8 text"))
			}
			up.Fields[name] = string(v)
		case name == "":
			return nil, errs.Invalid("malformed multipart body", errs.Field("", "a part has no form-data name"))
		default:
			return nil, errs.Invalid("unknown form field "+strconv.Quote(truncate(name, 50)), errs.Field(truncate(name, 50), "unknown field"))
		}
	}
	if up.File == nil {
		return nil, errs.Invalid("the file is missing", errs.Field(fileField, "required: a PDF, JPG or PNG file"))
	}
	return up, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkFile validates one uploaded file: non-empty, a PDF/JPG/PNG by name
// and declared type, and content whose magic bytes agree.
func checkFile(filename, declared string, content []byte, xml bool) (*UploadedFile, error) {
	if len(content) == 0 {
		return nil, errs.E(errs.EmptyFile, "the file is empty")
	}
	name := cleanName(filename)
	ext := strings.ToLower(path.Ext(name))
	byExt, extKnown := extTypes[ext]
	if xml && ext == ".xml" {
		byExt, extKnown = MimeXML, true
	}
	if ext != "" && !extKnown {
		return nil, errs.E(errs.InvalidFileType, "files of type %s are not accepted; upload a %s", truncate(ext, 20), allowedTypes)
	}
	var byDecl string
	if dt, _, err := mime.ParseMediaType(declared); err == nil && dt != "application/octet-stream" {
		var ok bool
		byDecl, ok = declaredTypes[dt]
		if xml && !ok {
			byDecl, ok = xmlTypes[dt]
		}
		if !ok {
			return nil, errs.E(errs.InvalidFileType, "files of type %s are not accepted; upload a %s", truncate(dt, 50), allowedTypes)
		}
	} else if err != nil && strings.TrimSpace(declared) != "" {
		return nil, errs.E(errs.InvalidFileType, "the declared Content-Type of the file is malformed; upload a %s", allowedTypes)
	}
	claimed := byExt
	switch {
	case byExt == "" && byDecl == "":
		return nil, errs.E(errs.InvalidFileType, "the file has neither a known extension nor a declared type; upload a %s", allowedTypes)
	case byExt == "":
		claimed = byDecl
	case byDecl != "" && byDecl != byExt:
		return nil, errs.E(errs.MimeMismatch, "the declared type %s does not match the file name %s", byDecl, truncate(name, 80))
	}
	got := sniff(content)
	if got == "" && claimed == MimeXML && isEInvoice(content) {
		got = MimeXML
	}
	if got != claimed {
		what := "no " + allowedTypes + " signature"
		if got != "" {
			what = "those of " + got
		}
		return nil, errs.E(errs.MimeMismatch, "the file is declared as %s but its content starts with %s", claimed, what)
	}
	if name == "" || name == ext {
		name = "document" + extOf[claimed]
	}
	return &UploadedFile{Name: name, MimeType: claimed, Content: content}, nil
}

// cleanName keeps the last path element of a client's file name, without
// control characters, at most MaxDocumentName characters.
func cleanName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > MaxDocumentName {
		ext := path.Ext(s)
		if utf8.RuneCountInString(ext) > 10 {
			ext = ""
		}
		s = truncate(s, MaxDocumentName-utf8.RuneCountInString(ext)) + ext
	}
	return s
}

// UploadDocument validates a multipart upload with field "file" and stores
// the document. The same bytes uploaded again are not stored twice: the
// existing document is returned with created false.
//
// A service (not a caller through the gateway) may also upload an XML
// e-invoice.
func (s *Service) UploadDocument(ctx context.Context, r Request, contentType string, body []byte) (Document, bool, error) {
	up, err := parseUpload(contentType, body, r.Claims != nil && r.Claims.Service != "", "file")
	if err != nil {
		return Document{}, false, err
	}
	if err := s.ensureTenant(ctx, r.Claims.TenantID); err != nil {
		return Document{}, false, err
	}
	return s.storeDocument(ctx, r, up.File)
}

func (s *Service) storeDocument(ctx context.Context, r Request, f *UploadedFile) (Document, bool, error) {
	d := newDocument(r, f)
	return s.store.PutDocument(ctx, r.Claims.TenantID, d.Document, d.Content, d.CreatedBy)
}

// newDocument is the document an upload becomes, with a fresh id.
func newDocument(r Request, f *UploadedFile) *NewDocument {
	sum := sha256.Sum256(f.Content)
	return &NewDocument{
		Document: Document{ID: uuid.NewString(), MimeType: f.MimeType, OriginalName: f.Name, SizeBytes: int64(len(f.Content)), SHA256: hex.EncodeToString(sum[:])},
		Content:  f.Content, CreatedBy: r.Claims.Actor(),
	}
}

// Document returns a document's metadata.
func (s *Service) Document(ctx context.Context, tenant, id string) (Document, error) {
	if !ValidID(id) {
		return Document{}, errs.NotFoundf("document %s not found", truncate(id, 40))
	}
	return s.store.Document(ctx, tenant, id)
}

// DocumentFile returns a document and its original bytes.
func (s *Service) DocumentFile(ctx context.Context, tenant, id string) (Document, []byte, error) {
	if !ValidID(id) {
		return Document{}, nil, errs.NotFoundf("document %s not found", truncate(id, 40))
	}
	return s.store.DocumentFile(ctx, tenant, id)
}

// Disposition is the Content-Disposition of a document download: an
// attachment under its original name (RFC 2231-encoded when not ASCII).
func (d Document) Disposition() string {
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": d.OriginalName}); v != "" {
		return v
	}
	return "attachment; filename=document" + extOf[d.MimeType]
}

// ValidateBooking checks a booking against the tenant's chart exactly as
// posting would, without posting it.
func (s *Service) ValidateBooking(ctx context.Context, tenant string, b Booking) error {
	chart, err := s.chart(ctx, tenant)
	if err != nil {
		return err
	}
	_, _, err = Expand(b, chart)
	return err
}

// BookWithDocument handles POST /v1/bookings/with-document: a multipart
// body with file, booking_date, description, lines (a JSON array),
// optional intent_category and skip_duplicate_check. Everything is
// validated before anything is stored; then the booking is posted with the
// document, which the store writes in the posting's transaction (or finds
// by its hash when the tenant holds the same bytes). A refused posting (a
// locked period, a duplicate) therefore stores no document either, and
// the same file can be uploaded or booked again as new.
//
// For idempotency the request is identified by the file's hash and the
// fields, not by the raw multipart bytes, whose boundary differs per try.
// The posting's channel is always "document".
func (s *Service) BookWithDocument(ctx context.Context, r Request, contentType string, body []byte) (Posted, *IdemRecord, error) {
	up, err := ParseUpload(contentType, body, "file", "booking_date", "description", "lines", "intent_category", "skip_duplicate_check")
	if err != nil {
		return Posted{}, nil, err
	}
	b := Booking{BookingDate: up.Fields["booking_date"], Description: up.Fields["description"]}
	raw, ok := up.Fields["lines"]
	if !ok || strings.TrimSpace(raw) == "" {
		return Posted{}, nil, errs.Invalid("lines are missing", errs.Field("lines", "required: a JSON array of booking lines"))
	}
	if err := natsx.Decode([]byte(raw), &b.Lines); err != nil {
		e := errs.As(under("lines", err))
		e.Message = "lines is not a valid JSON array of booking lines"
		return Posted{}, nil, e
	}
	if v, ok := up.Fields["skip_duplicate_check"]; ok && strings.TrimSpace(v) != "" {
		if b.SkipDuplicateCheck, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return Posted{}, nil, errs.Invalid("skip_duplicate_check must be true or false", errs.Field("skip_duplicate_check", "true or false"))
		}
	}
	category := strings.TrimSpace(up.Fields["intent_category"])
	if utf8.RuneCountInString(category) > MaxCategory {
		return Posted{}, nil, errs.Invalid("intent_category is too long", errs.Field("intent_category", fmt.Sprintf("at most %d characters", MaxCategory)))
	}
	if err := s.ValidateBooking(ctx, r.Claims.TenantID, b); err != nil {
		return Posted{}, nil, err
	}
	sum := sha256.Sum256(up.File.Content)
	canon, err := json.Marshal(struct {
		File     string  `json:"file_sha256"`
		Booking  Booking `json:"booking"`
		Category string  `json:"intent_category"`
	}{hex.EncodeToString(sum[:]), b, category})
	if err != nil {
		return Posted{}, nil, errs.Wrap("ledger.BookWithDocument", err)
	}
	r.Body, r.Channel = canon, "document"
	return s.book(ctx, r, b, &Intent{Document: newDocument(r, up.File), Category: category})
}
