package payablesv1

// ExtractInput is the body of SubjectOCRExtract (POST /v1/ocr/extract):
// the ledger document to read.
type ExtractInput struct {
	DocumentID string `json:"document_id"`
}

// SubjectExtracted is the core-NATS notification an extraction worker
// publishes after the commit that finished (or failed) an extraction, the
// extraction's id appended: a request waiting for it then reads the row at
// once instead of at its next poll. It carries nothing but the wake-up;
// the row is the truth.
const (
	SubjectExtracted = "payables.v1.extracted." // + extraction id
	ExtractedFilter  = "payables.v1.extracted.>"
)
