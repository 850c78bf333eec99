package payables

import (
	"context"
	"fmt"
	"time"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Extractor reads an invoice document: what it says (the OCR result) and
// how it fares against §14 UStG. A document it cannot read as an invoice
// is an *errs.Error INVALID_INPUT; a failure of its tools is OCR_FAILED
// (500) or any other internal error, which the worker retries.
type Extractor interface {
	Extract(ctx context.Context, data []byte, mimeType string) (payablesv1.OCRResult, payablesv1.ComplianceCheck, error)
}

// DocumentFiles reads the bytes of the tenant's documents, which the ledger keeps. An
// unknown document is NOT_FOUND, one whose bytes are gone FILE_NOT_FOUND.
type DocumentFiles interface {
	DocumentFile(ctx context.Context, tenantID, id string) (data []byte, mimeType string, err error)
}

// Notifier tells a request waiting for an extraction that it finished.
// The notification is a wake-up only, and may be lost: the waiter also
// polls the row.
type Notifier interface {
	Notify(ctx context.Context, extractionID string)
	// Wait returns a channel that receives when extractionID was
	// notified, and the function that stops listening.
	Wait(ctx context.Context, extractionID string) (<-chan struct{}, func(), error)
}

// Extraction states.
const (
	ExtractionQueued  = "queued"
	ExtractionRunning = "running"
	ExtractionDone    = "done"
	ExtractionFailed  = "failed"
)

// Extraction is one extraction job, the row of payables.extractions.
type Extraction struct {
	ID          string
	TenantID    string
	DocumentID  string
	InboxItemID *string
	State       string
	Attempts    int
	Result      *payablesv1.OCRResult
	Compliance  *payablesv1.ComplianceCheck
	VendorMatch *payablesv1.VendorMatch
	// ErrorCode and Error are the public code and reason of a failed
	// extraction.
	ErrorCode string
	Error     string
}

// ExtractionStore keeps the extraction jobs.
type ExtractionStore interface {
	// EnqueueExtraction writes a queued extraction of documentID and its
	// work-queue message in one transaction.
	EnqueueExtraction(ctx context.Context, tenantID, documentID string, inboxItemID *string) (string, error)
	// Extraction reads one; an unknown id is NOT_FOUND.
	Extraction(ctx context.Context, tenantID, id string) (Extraction, error)
	// StartExtraction marks a queued or running extraction running, one
	// attempt more, and its inbox item processing; ok is false (and
	// nothing written) for one that is done or failed already.
	StartExtraction(ctx context.Context, tenantID, id string) (e Extraction, ok bool, err error)
	// MatchVendors are the tenant's active vendors, by name.
	MatchVendors(ctx context.Context, tenantID string) ([]Vendor, error)
	// FinishExtraction stores the result of a running extraction as done,
	// puts its inbox item back to pending (to be reviewed) and runs the
	// work that follows an extraction in the same transaction.
	FinishExtraction(ctx context.Context, tenantID, id string, r payablesv1.OCRResult, c payablesv1.ComplianceCheck, m payablesv1.VendorMatch) error
	// FailExtraction marks an extraction failed with a public code and
	// reason and puts its inbox item back to pending.
	FailExtraction(ctx context.Context, tenantID, id, code, reason string) error
}

// Extraction settings.
const (
	// MaxExtractAttempts bounds the tries of one extraction whose
	// failures are internal (a tool crashed, the ledger did not answer):
	// after that many it fails as OCR_FAILED instead of coming back
	// forever.
	MaxExtractAttempts = 5
	// DefaultExtractWait is how long POST /v1/ocr/extract waits for its
	// extraction: less than the gateway's 30 s.
	DefaultExtractWait = 25 * time.Second
	// extractPoll is how often a waiting request reads the row when no
	// notification comes.
	extractPoll = time.Second
)

// ocrFailedMessage is all a client learns of an extraction that failed
// inside.
const ocrFailedMessage = "the document could not be read"

// Extractions runs extraction jobs and the requests that wait for them.
type Extractions struct {
	store     ExtractionStore
	docs      DocumentFiles
	extractor Extractor
	notifier  Notifier
	wait      time.Duration
	attempts  int
}

// NewExtractions returns the extraction service.
func NewExtractions(store ExtractionStore, docs DocumentFiles, extractor Extractor, notifier Notifier) *Extractions {
	return &Extractions{store: store, docs: docs, extractor: extractor, notifier: notifier, wait: DefaultExtractWait, attempts: MaxExtractAttempts}
}

// WithWait sets how long a request waits for its extraction.
func (x *Extractions) WithWait(d time.Duration) *Extractions { x.wait = d; return x }

// Extract handles POST /v1/ocr/extract: it asks the ledger for the
// document first (an unknown one is 404 and nothing is queued), queues
// its extraction for the workers and waits for the result.
func (x *Extractions) Extract(ctx context.Context, tenantID string, in payablesv1.ExtractInput) (payablesv1.OCRResult, error) {
	if in.DocumentID == "" {
		return payablesv1.OCRResult{}, errs.Invalid("document_id is required", errs.Field("document_id", "required"))
	}
	if !ValidID(in.DocumentID) {
		return payablesv1.OCRResult{}, errs.Invalid("document_id must be a UUID", errs.Field("document_id", "not a UUID"))
	}
	// The ledger is asked before anything is queued, so that an unknown
	// document is refused with nothing written. It answers with the bytes
	// (it has no other read of a document); the worker reads them again.
	if _, _, err := x.docs.DocumentFile(ctx, tenantID, in.DocumentID); err != nil {
		return payablesv1.OCRResult{}, errs.Wrap("payables.Extract: ledger", err)
	}
	id, err := x.store.EnqueueExtraction(ctx, tenantID, in.DocumentID, nil)
	if err != nil {
		return payablesv1.OCRResult{}, err
	}
	e, err := x.await(ctx, tenantID, id)
	if err != nil {
		return payablesv1.OCRResult{}, err
	}
	if e.State == ExtractionFailed {
		err := errs.E(e.ErrorCode, "%s", e.Error)
		if e.ErrorCode == errs.InvalidInput {
			err.Details = []errs.Detail{errs.Field("document_id", e.Error)}
		}
		return payablesv1.OCRResult{}, err
	}
	return *e.Result, nil
}

// await waits until extraction id is done or failed. When the wait is
// over first it answers 504 TIMEOUT: the job stays queued, and its result
// is stored on the document when a worker gets to it.
func (x *Extractions) await(ctx context.Context, tenantID, id string) (Extraction, error) {
	woken, stop, err := x.notifier.Wait(ctx, id)
	if err != nil {
		return Extraction{}, err
	}
	defer stop()
	deadline := time.NewTimer(x.wait)
	defer deadline.Stop()
	tick := time.NewTicker(extractPoll)
	defer tick.Stop()
	for {
		e, err := x.store.Extraction(ctx, tenantID, id)
		if err != nil {
			return Extraction{}, err
		}
		if e.State == ExtractionDone || e.State == ExtractionFailed {
			return e, nil
		}
		select {
		case <-woken:
		case <-tick.C:
		case <-deadline.C:
			return Extraction{}, errs.E(errs.Timeout, "the document was not read within %s; its extraction %s is still queued", x.wait, id)
		case <-ctx.Done():
			return Extraction{}, fmt.Errorf("payables.Extract: wait: %w", ctx.Err())
		}
	}
}

// Run runs one extraction job for the worker. A nil error acknowledges
// the job: it is done, or failed for good (a refused document, or one
// tried MaxExtractAttempts times). An error asks for it again later.
func (x *Extractions) Run(ctx context.Context, tenantID, id string) error {
	e, ok, err := x.store.StartExtraction(ctx, tenantID, id)
	if errs.Is(err, errs.NotFound) {
		// A job whose row is gone (never written): nothing to do.
		return nil
	}
	if err != nil || !ok {
		return err
	}
	if err := x.run(ctx, e); err != nil {
		return x.failed(ctx, e, err)
	}
	x.notifier.Notify(ctx, id)
	return nil
}

func (x *Extractions) run(ctx context.Context, e Extraction) error {
	data, mimeType, err := x.docs.DocumentFile(ctx, e.TenantID, e.DocumentID)
	if err != nil {
		return errs.Wrap("payables.RunExtraction: ledger", err)
	}
	r, c, err := x.extractor.Extract(ctx, data, mimeType)
	if err != nil {
		return errs.Wrap("payables.RunExtraction: extract", err)
	}
	vendors, err := x.store.MatchVendors(ctx, e.TenantID)
	if err != nil {
		return err
	}
	return x.store.FinishExtraction(ctx, e.TenantID, e.ID, r, c, MatchVendor(r, vendors))
}

// failed settles a failed attempt: a refusal of the document (a client
// error: unreadable, not found) fails the job at once; an internal
// failure is retried until the attempts are used up.
func (x *Extractions) failed(ctx context.Context, e Extraction, cause error) error {
	code, msg, _ := errs.Public(cause)
	if errs.Status(code) >= 500 {
		if e.Attempts < x.attempts {
			return cause
		}
		code, msg = errs.OCRFailed, ocrFailedMessage
	}
	if err := x.store.FailExtraction(ctx, e.TenantID, e.ID, code, msg); err != nil {
		return err
	}
	x.notifier.Notify(ctx, e.ID)
	return nil
}
