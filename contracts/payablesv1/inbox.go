package payablesv1

import (
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Subjects of the inbox, the ingestion log and extraction. Uploads
// travel as gatewayv1.UploadRequest like the bank's statement files.
const (
	// SubjectInboundEmail is the inbound-email webhook (POST
	// /v1/payables/inbound-email/{tenant_id}, public at the gateway): the
	// raw RFC 5322 message as mail providers forward it, authenticated by
	// the tenant's webhook secret, not by an API key.
	SubjectInboundEmail      = "payables.v1.inbound_email" // param tenant_id
	SubjectInboxList         = "payables.v1.inbox.list"
	SubjectInboxUpload       = "payables.v1.inbox.upload"
	SubjectIngestionLog      = "payables.v1.ingestion_log.list"
	SubjectOCRExtract        = "payables.v1.ocr.extract"
	SubjectWebhookSecretRoll = "payables.v1.inbound_email.secret" // POST: a new webhook secret, shown once
)

// The extraction work queue: OCR workers (PAYABLES_API=off processes)
// take one job at a time, apart from the API.
const (
	StreamExtract         = "PAYABLES_EXTRACT"
	ExtractFilter         = "cmd.payables.v1.>"
	SubjectExtractCommand = "cmd.payables.v1.extract"
)

// ExtractCommand is the work-queue message of one extraction; the job's
// state is the extractions row it names.
type ExtractCommand struct {
	TenantID     string `json:"tenant_id"`
	ExtractionID string `json:"extraction_id"`
}

// Inbox item statuses (spec: Inbox item status).
const (
	InboxPending    = "pending"    // received, waiting for extraction or review
	InboxProcessing = "processing" // being extracted
	InboxConfirmed  = "confirmed"  // its review case was approved
	InboxRejected   = "rejected"   // its review case was rejected
)

// Ingestion outcomes (spec: Ingestion log row).
const (
	OutcomeIngested         = "ingested"
	OutcomeSkippedDuplicate = "skipped_duplicate"
	OutcomeRejectedInvalid  = "rejected_invalid"
	OutcomeFailed           = "failed"
)

// OCRResult is what extraction read from a document (spec: OCR result);
// it is stored with the extraction as the document's ocr_result. Amounts
// are exact decimals; a field not found is null (or empty for texts).
type OCRResult struct {
	VendorName    string        `json:"vendor_name"`
	VendorVATID   string        `json:"vendor_vat_id"`
	VendorTaxID   string        `json:"vendor_tax_id"`
	VendorIBAN    string        `json:"vendor_iban"`
	VendorBIC     string        `json:"vendor_bic"`
	VendorAddress *Address      `json:"vendor_address"`
	BuyerName     string        `json:"buyer_name"`
	BuyerAddress  *Address      `json:"buyer_address"`
	InvoiceNumber string        `json:"invoice_number"`
	InvoiceDate   *string       `json:"invoice_date"` // YYYY-MM-DD
	DueDate       *string       `json:"due_date"`
	DeliveryDate  *string       `json:"delivery_date"`
	ServicePeriod *Period       `json:"service_period"`
	TotalNet      *money.Amount `json:"total_net"`
	TotalTax      *money.Amount `json:"total_tax"`
	TotalGross    *money.Amount `json:"total_gross"`
	Currency      string        `json:"currency"`
	TaxBreakdown  []TaxLine     `json:"tax_breakdown"`
	LineItems     []OCRLine     `json:"line_items"`
	PaymentTerms  string        `json:"payment_terms"`
	ReferenceText string        `json:"reference_text"`
	// Notes are the invoice's free texts: an exemption or reverse-charge
	// note (§14 Abs. 4 Nr. 8, §14a UStG) is found here.
	Notes        []string `json:"notes"`
	IsCreditNote bool     `json:"is_credit_note"`
	// Source is how it was read: einvoice_cii, einvoice_ubl, zugferd_pdf,
	// pdf_text or ocr.
	Source      string `json:"source"`
	RawMarkdown string `json:"raw_markdown"`
}

// Period is a service period.
type Period struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// TaxLine is the net, the rate and the tax of one rate.
type TaxLine struct {
	Rate money.Amount `json:"rate"` // percent, e.g. 19
	Net  money.Amount `json:"net"`
	Tax  money.Amount `json:"tax"`
	// Category is the EN 16931 VAT category (S, Z, E, AE, K, G, O) when
	// the document says it.
	Category string `json:"category,omitempty"`
}

// OCRLine is one line item.
type OCRLine struct {
	Description string        `json:"description"`
	Quantity    *money.Amount `json:"quantity"`
	Unit        string        `json:"unit,omitempty"`
	UnitPrice   *money.Amount `json:"unit_price"`
	TaxRate     *money.Amount `json:"tax_rate"`
	LineTotal   *money.Amount `json:"line_total"`
}

// Compliance check statuses.
const (
	CheckPassed  = "passed"
	CheckFailed  = "failed"
	CheckMissing = "missing"
	CheckNA      = "not_applicable"
)

// ComplianceCheck is §14 Abs. 4 UStG (and §33 UStDV for small amounts)
// applied field by field; e-invoices also carry the EN 16931 result.
type ComplianceCheck struct {
	DocumentType string       `json:"document_type"` // invoice, credit_note, small_amount_invoice, not_an_invoice
	IsInvoice    bool         `json:"is_invoice"`
	Compliant    bool         `json:"compliant"`
	Passed       int          `json:"passed"`
	Total        int          `json:"total"`
	Checks       []CheckEntry `json:"checks"`
}

// CheckEntry is one rule.
type CheckEntry struct {
	Rule   string `json:"rule"`  // e.g. "UStG 14(4) Nr. 1", "EN16931 BR-CO-15"
	Label  string `json:"label"` // e.g. "Name und Anschrift des leistenden Unternehmers"
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Vendor match statuses and methods.
const (
	MatchMatched   = "matched"
	MatchSuggested = "suggested" // a candidate below the confidence to take it
	MatchNone      = "unmatched"

	MatchByVATID = "vat_id"
	MatchByIBAN  = "iban"
	MatchByName  = "name"
)

// VendorMatch is the vendor extraction found for a document.
type VendorMatch struct {
	Status      string       `json:"status"`
	VendorID    *string      `json:"vendor_id"`
	Confidence  money.Amount `json:"confidence"` // 0..1
	MatchMethod *string      `json:"match_method"`
}

// OCRExtraction is the inbox item's short form of the result.
type OCRExtraction struct {
	VendorName string        `json:"vendor_name"`
	TotalGross *money.Amount `json:"total_gross"`
}

// InboxItem is one document in the payables inbox (spec: Inbox item).
type InboxItem struct {
	ID              string           `json:"id"`
	DocumentID      string           `json:"document_id"`
	Status          string           `json:"status"`
	OCRExtraction   *OCRExtraction   `json:"ocr_extraction"`
	VendorMatch     *VendorMatch     `json:"vendor_match"`
	ComplianceCheck *ComplianceCheck `json:"compliance_check"`
	SourceEmail     *string          `json:"source_email"`
	SourceSubject   *string          `json:"source_subject"`
	OriginalName    string           `json:"original_name"`
	ReviewCaseID    *string          `json:"review_case_id"`
	CreatedAt       time.Time        `json:"created_at"`
}

// InboxFilter is the query of SubjectInboxList.
type InboxFilter struct {
	Status string // one of the inbox statuses; default pending
	Limit  int
	Offset int
}

// InboxList is the reply of SubjectInboxList, newest first.
type InboxList struct {
	Items []InboxItem `json:"items"`
}

// IngestionRow is one attachment processing attempt (spec: Ingestion log
// row). Reason is set unless the outcome is ingested; the document and
// the original are set as the outcome has them.
type IngestionRow struct {
	ID                   string    `json:"id"`
	Outcome              string    `json:"outcome"`
	Reason               *string   `json:"reason"`
	SenderEmail          *string   `json:"sender_email"`
	Subject              *string   `json:"subject"`
	Filename             string    `json:"filename"`
	ClaimedMime          string    `json:"claimed_mime"`
	SizeBytes            int64     `json:"size_bytes"`
	FileHash             *string   `json:"file_hash"`
	DocumentID           *string   `json:"document_id"`
	OriginalInboxID      *string   `json:"original_inbox_id"`
	OriginalReviewCaseID *string   `json:"original_review_case_id"`
	CreatedAt            time.Time `json:"created_at"`
}

// IngestionFilter is the query of SubjectIngestionLog.
type IngestionFilter struct {
	Outcomes []string // any of these; none means all
	Limit    int
	Offset   int
}

// IngestionLog is the reply of SubjectIngestionLog, newest first.
type IngestionLog struct {
	Rows []IngestionRow `json:"rows"`
}

// InboundEmailResult is the webhook's answer: one row per attachment of
// the message, in its order.
type InboundEmailResult struct {
	Rows []IngestionRow `json:"rows"`
}

// WebhookSecret is the reply of SubjectWebhookSecretRoll: the new secret,
// shown this once (only its SHA-256 is kept), and the webhook address it
// authenticates.
type WebhookSecret struct {
	Secret    string    `json:"secret"`
	Path      string    `json:"path"`
	CreatedAt time.Time `json:"created_at"`
}
