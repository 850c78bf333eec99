package bankv1

import "github.com/ledgerplatform/ledger/contracts/money"

// Statement file import: the gateway streams the file into its uploads
// bucket and sends a gatewayv1.UploadRequest naming the object.
const (
	SubjectStatementsUpload     = "bank.v1.statements.upload"      // param id: POST /v1/bank-accounts/{id}/upload
	SubjectStatementsImportFile = "bank.v1.statements.import_file" // POST /v1/bank-transactions/import-file
	SubjectImportsGet           = "bank.v1.imports.get"            // param id: GET /v1/bank-imports/{id}
)

// Statement file imports run as jobs on a work queue the bank owns, so
// import workers can run apart from the API replicas.
const (
	StreamImports        = "BANK_IMPORTS"
	ImportsFilter        = "cmd.bank.v1.>"
	SubjectImportCommand = "cmd.bank.v1.import"
)

// ImportCommand asks an import worker to run one file job.
type ImportCommand struct {
	TenantID string `json:"tenant_id"`
	JobID    string `json:"job_id"`
}

// MaxStatementFileBytes is the largest statement file (specification, Limits).
const MaxStatementFileBytes = 50 << 20

// FileImportResult answers a statement file import: the JSON import's
// result plus the file's format, bank account and statements with their
// balance check.
type FileImportResult struct {
	BatchID           string            `json:"batch_id"`
	BankAccountID     string            `json:"bank_account_id"`
	Format            string            `json:"format"` // camt, mt940 or csv
	TotalRows         int               `json:"total_rows"`
	Imported          int               `json:"imported"`
	SkippedDuplicates int               `json:"skipped_duplicates"`
	DuplicateFile     bool              `json:"duplicate_file"`
	Errors            []FileRowError    `json:"errors"`
	Statements        []StatementResult `json:"statements"`
}

// FileRowError is a row of a CSV file left out: its row (from 1, the
// header not counted), the field and why.
type FileRowError struct {
	Row   int    `json:"row"`
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// StatementResult is one statement of an imported file. The balances are
// null when the statement carries none; expected_closing is opening plus
// the entries, and balance_mismatch says it differs from closing.
type StatementResult struct {
	ID                *string       `json:"id"` // null when the file was imported before
	Kind              string        `json:"kind"`
	StatementRef      string        `json:"statement_ref"`
	IBAN              *string       `json:"iban"`
	Entries           int           `json:"entries"`
	Sum               money.Amount  `json:"sum"`
	Imported          int           `json:"imported"`
	SkippedDuplicates int           `json:"skipped_duplicates"`
	Opening           *money.Amount `json:"opening_balance"`
	Closing           *money.Amount `json:"closing_balance"`
	ExpectedClosing   *money.Amount `json:"expected_closing"`
	BalanceMismatch   bool          `json:"balance_mismatch"`
}

// ImportJob is an import as a resource (GET /v1/bank-imports/{id}): a
// JSON or file import (its batch_id), or a statement file job still
// queued or running, done (Result) or failed (Error).
type ImportJob struct {
	ID                string            `json:"id"`
	BankAccountID     *string           `json:"bank_account_id"` // null while a job by IBAN has not found it
	Source            *string           `json:"source"`          // null while a job has not read the file
	State             string            `json:"state"`           // queued, running, done or failed
	Result            *FileImportResult `json:"result"`
	Error             *JobError         `json:"error"`
	RowsDone          int               `json:"rows_done"`
	TotalRows         int               `json:"total_rows"`
	Imported          int               `json:"imported"`
	SkippedDuplicates int               `json:"skipped_duplicates"`
	Errors            []RowError        `json:"errors"`
	CreatedAt         string            `json:"created_at"`
	FinishedAt        *string           `json:"finished_at"`
}

// JobError is why a file job failed, as the API error would have said.
type JobError struct {
	Error   string        `json:"error"`
	Code    string        `json:"code"`
	Details []ErrorDetail `json:"details,omitempty"`
}

// ErrorDetail names one problem of a failed job.
type ErrorDetail struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}
