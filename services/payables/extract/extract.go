// Package extract reads an incoming invoice document into an OCR result
// and checks it against the mandatory fields of §14 Abs. 4 UStG.
//
// Three ways in, best first:
//
//  1. e-invoices (XRechnung / EN 16931 as CII or UBL XML, ZUGFeRD and
//     Factur-X PDFs with the XML embedded) are read exactly by einvoicein
//     and also checked against the EN 16931 calculation rules;
//  2. PDFs with a text layer are read with `pdftotext -layout` and the
//     field rules (Fields) find the invoice's data in the text;
//  3. scans (PDFs without a text layer, JPEG, PNG) are rasterised with
//     pdftoppm and read with Tesseract, then the same field rules apply.
//
// The package is a library: no NATS, no database. The external tools
// (poppler-utils, tesseract-ocr with the deu and eng data) run as
// processes under the caller's context and the per-document timeout; their
// temporary files live in one os.MkdirTemp directory removed afterwards.
//
// Errors: input that cannot be read as a document (a PDF that does not
// open, bytes that are no image, XML that is no invoice, a document with
// no text at all) is 400 INVALID_INPUT; a failure of the tools themselves
// (missing binary, crash, timeout) is 500 OCR_FAILED. A readable document
// that is no invoice is not an error: its check says not_an_invoice.
package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/payables/einvoicein"
)

// Sources of a result.
const (
	SourceCII     = "einvoice_cii"
	SourceUBL     = "einvoice_ubl"
	SourceZUGFeRD = "zugferd_pdf"
	SourcePDFText = "pdf_text"
	SourceOCR     = "ocr"
)

// Limits.
const (
	// MaxSize is the largest document accepted (as einvoicein).
	MaxSize = einvoicein.MaxSize
	// MaxPages bounds the pages rasterised and read by OCR: an invoice
	// has its data on the first pages, and each page costs seconds.
	MaxPages = 10
	// MaxText bounds raw_markdown and the text the rules look at.
	MaxText = 64 << 10
)

// Options configures an Extractor; zero fields take the defaults.
type Options struct {
	Tesseract string        // path of the tesseract binary, default "tesseract"
	PDFToText string        // default "pdftotext"
	PDFToPPM  string        // default "pdftoppm"
	Languages string        // default "deu+eng"
	DPI       int           // default 300
	Timeout   time.Duration // per document, default 120s
}

// Extractor reads invoice documents. It holds no state between calls and
// is safe for concurrent use.
type Extractor struct {
	o Options
}

// New returns an Extractor with o's defaults filled in.
func New(o Options) *Extractor {
	if o.Tesseract == "" {
		o.Tesseract = "tesseract"
	}
	if o.PDFToText == "" {
		o.PDFToText = "pdftotext"
	}
	if o.PDFToPPM == "" {
		o.PDFToPPM = "pdftoppm"
	}
	if o.Languages == "" {
		o.Languages = "deu+eng"
	}
	if o.DPI <= 0 {
		o.DPI = 300
	}
	if o.Timeout <= 0 {
		o.Timeout = 120 * time.Second
	}
	return &Extractor{o: o}
}

const op = "extract.Extract"

// invalid is the 400 for a document that cannot be read.
func invalid(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &errs.Error{Code: errs.InvalidInput, Message: msg, Details: []errs.Detail{errs.Field(field, msg)}, Op: op}
}

// ocrFailed is the 500 for a failure of the tools; the cause stays in
// the chain for the log, the client sees the public message only.
func ocrFailed(err error) error {
	return &errs.Error{Code: errs.OCRFailed, Message: "the document could not be read", Op: op, Err: err}
}

// Extract reads data (mimeType: application/pdf, image/jpeg, image/png,
// application/xml, text/xml; for application/octet-stream or none the
// bytes decide) and answers the OCR result and the compliance check.
func (e *Extractor) Extract(ctx context.Context, data []byte, mimeType string) (_ payablesv1.OCRResult, _ payablesv1.ComplianceCheck, err error) {
	// A bug in the rules must fail one document, not the worker.
	defer func() {
		if p := recover(); p != nil {
			err = ocrFailed(fmt.Errorf("panic: %v", p))
		}
	}()
	r, en, err := e.read(ctx, data, mimeType)
	if err != nil {
		return payablesv1.OCRResult{}, payablesv1.ComplianceCheck{}, err
	}
	return r, Check(r, en), nil
}

func (e *Extractor) read(ctx context.Context, data []byte, mimeType string) (payablesv1.OCRResult, []payablesv1.CheckEntry, error) {
	if len(data) > MaxSize {
		return payablesv1.OCRResult{}, nil, &errs.Error{Code: errs.FileTooLarge, Message: "the document is larger than 10 MB", Op: op}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return payablesv1.OCRResult{}, nil, invalid("file", "the document is empty")
	}
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(mimeType))
	}
	if mt == "" || mt == "application/octet-stream" || mt == "binary/octet-stream" {
		// Mail attachments often come without a useful type: the bytes
		// tell.
		mt = sniff(data)
	}
	ctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()

	switch mt {
	case "application/xml", "text/xml":
		inv, err := einvoicein.ReadBytes(data)
		if err != nil {
			return payablesv1.OCRResult{}, nil, err
		}
		r, en := fromEInvoice(inv)
		return r, en, nil
	case "application/pdf":
		if !bytes.Contains(head(data), []byte("%PDF-")) {
			return payablesv1.OCRResult{}, nil, invalid("file", "the document is not a PDF")
		}
		inv, err := einvoicein.ReadBytes(data)
		if err == nil {
			r, en := fromEInvoice(inv)
			// The visible text helps a reviewer; an e-invoice is read
			// without it, so a failing tool costs nothing here.
			if text, terr := e.pdfText(ctx, data); terr == nil {
				r.RawMarkdown = bound(text)
			}
			return r, en, nil
		}
		// A PDF with an embedded XML that is broken is refused as such:
		// the sender meant it as the invoice.
		if !errors.Is(err, einvoicein.ErrNoEmbeddedXML) && !errors.Is(err, einvoicein.ErrMalformedPDF) {
			return payablesv1.OCRResult{}, nil, err
		}
		text, err := e.pdfText(ctx, data)
		if err != nil {
			return payablesv1.OCRResult{}, nil, err
		}
		source := SourcePDFText
		if !hasTextLayer(text) {
			if text, err = e.ocrPDF(ctx, data); err != nil {
				return payablesv1.OCRResult{}, nil, err
			}
			source = SourceOCR
		}
		return fromText(text, source)
	case "image/jpeg", "image/jpg", "image/png":
		if err := checkImage(data); err != nil {
			return payablesv1.OCRResult{}, nil, err
		}
		text, err := e.ocrImage(ctx, data, mt)
		if err != nil {
			return payablesv1.OCRResult{}, nil, err
		}
		return fromText(text, SourceOCR)
	}
	return payablesv1.OCRResult{}, nil, invalid("mime_type", "unsupported document type %q: want application/pdf, image/jpeg, image/png, application/xml or text/xml", clip(mimeType, 80))
}

// fromText applies the field rules to a document's text.
func fromText(text, source string) (payablesv1.OCRResult, []payablesv1.CheckEntry, error) {
	if len(strings.Fields(text)) == 0 {
		return payablesv1.OCRResult{}, nil, invalid("file", "no text could be read from the document")
	}
	r := Fields(text)
	r.Source = source
	return r, nil, nil
}

// sniff names the type of data by its first bytes, "" when unknown.
func sniff(data []byte) string {
	t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(t, []byte("<")):
		return "application/xml"
	case bytes.Contains(head(data), []byte("%PDF-")):
		return "application/pdf"
	}
	return ""
}

func head(data []byte) []byte {
	if len(data) > 1024 {
		return data[:1024]
	}
	return data
}

// bound trims text and cuts it to MaxText bytes at a rune boundary.
func bound(text string) string {
	text = strings.TrimSpace(text)
	if len(text) <= MaxText {
		return text
	}
	cut := MaxText
	for cut > 0 && !utf8RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
