package errs

import "net/http"

// Generic codes.
const (
	InvalidInput     = "INVALID_INPUT"
	Unauthenticated  = "UNAUTHENTICATED"
	Forbidden        = "FORBIDDEN"
	NotFound         = "NOT_FOUND"
	Conflict         = "CONFLICT"
	Unprocessable    = "UNPROCESSABLE"
	RateLimited      = "RATE_LIMITED"
	Internal         = "INTERNAL"
	Unavailable      = "UNAVAILABLE"
	Timeout          = "TIMEOUT"
	PayloadTooLarge  = "PAYLOAD_TOO_LARGE"
	MethodNotAllowed = "METHOD_NOT_ALLOWED"
	UnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE"

	IdempotencyKeyReused     = "IDEMPOTENCY_KEY_REUSED"
	IdempotencyKeyInProgress = "IDEMPOTENCY_KEY_IN_PROGRESS"
)

// Identity codes.
const (
	InvalidCredentials = "INVALID_CREDENTIALS"
	InvalidToken       = "INVALID_TOKEN"
	DuplicateEmail     = "DUPLICATE_EMAIL"
	TenantInactive     = "TENANT_INACTIVE"
	LastAdmin          = "LAST_ADMIN"
	ScopeNotGrantable  = "SCOPE_NOT_GRANTABLE"
	NoChanges          = "NO_CHANGES"
)

// Ledger, bank, payables, receivables and periods codes named by the spec.
const (
	AccountNotFound             = "ACCOUNT_NOT_FOUND"
	AccountExists               = "ACCOUNT_EXISTS"
	AccountInactive             = "ACCOUNT_INACTIVE"
	InvalidAccountType          = "INVALID_ACCOUNT_TYPE"
	AccountAlreadyLinked        = "ACCOUNT_ALREADY_LINKED"
	DuplicateIBAN               = "DUPLICATE_IBAN"
	DuplicateBooking            = "DUPLICATE_BOOKING"
	AlreadyReversed             = "ALREADY_REVERSED"
	CannotReverseReversal       = "CANNOT_REVERSE_REVERSAL"
	TaxCodeNotFound             = "TAX_CODE_NOT_FOUND"
	TaxCodeInactive             = "TAX_CODE_INACTIVE"
	InvalidFileType             = "INVALID_FILE_TYPE"
	EmptyFile                   = "EMPTY_FILE"
	FileTooLarge                = "FILE_TOO_LARGE"
	MimeMismatch                = "MIME_MISMATCH"
	FileNotFound                = "FILE_NOT_FOUND"
	PeriodLocked                = "PERIOD_LOCKED"
	PeriodAlreadySoftLocked     = "PERIOD_ALREADY_SOFT_LOCKED"
	PeriodAlreadyLocked         = "PERIOD_ALREADY_LOCKED"
	PeriodNotLocked             = "PERIOD_NOT_LOCKED"
	ReviewItemNotPending        = "REVIEW_ITEM_NOT_PENDING"
	BankTxMixedBankAccounts     = "BANK_TX_MIXED_BANK_ACCOUNTS"
	DirectionMismatch           = "DIRECTION_MISMATCH"
	MixedSettlementCurrency     = "MIXED_SETTLEMENT_CURRENCY"
	GroupNotBalanced            = "GROUP_NOT_BALANCED"
	SettlementExceedsOpenAmount = "SETTLEMENT_EXCEEDS_OPEN_AMOUNT"
	SettledDocumentAmountNeeded = "SETTLED_DOCUMENT_AMOUNT_REQUIRED"
	UnsupportedSettlementCurr   = "UNSUPPORTED_SETTLEMENT_CURRENCY"
	TargetKindUnsupported       = "TARGET_KIND_UNSUPPORTED"
	AdjustmentAccountNotFound   = "ADJUSTMENT_ACCOUNT_NOT_FOUND"
	DuplicateName               = "DUPLICATE_NAME"
	DuplicateTaxID              = "DUPLICATE_TAX_ID"
	DuplicateVATID              = "DUPLICATE_VAT_ID"
	DuplicateCustomerNumber     = "DUPLICATE_CUSTOMER_NUMBER"
	VendorIBANMissing           = "VENDOR_IBAN_MISSING"
	InvoiceAlreadyInActiveRun   = "INVOICE_ALREADY_IN_ACTIVE_RUN"
	InvoiceNotFound             = "INVOICE_NOT_FOUND"
	BankAccountNotFound         = "BANK_ACCOUNT_NOT_FOUND"
	OCRFailed                   = "OCR_FAILED"
	InvalidStateTransition      = "INVALID_STATE_TRANSITION"
	// DuplicateDocument: the same bytes (SHA-256) are already in the
	// tenant's payables inbox.
	DuplicateDocument = "DUPLICATE_DOCUMENT"
)

// statusOf is the one table from machine codes to HTTP statuses.
var statusOf = map[string]int{
	InvalidInput:     http.StatusBadRequest,
	Unauthenticated:  http.StatusUnauthorized,
	Forbidden:        http.StatusForbidden,
	NotFound:         http.StatusNotFound,
	Conflict:         http.StatusConflict,
	Unprocessable:    http.StatusUnprocessableEntity,
	RateLimited:      http.StatusTooManyRequests,
	Internal:         http.StatusInternalServerError,
	Unavailable:      http.StatusServiceUnavailable,
	Timeout:          http.StatusGatewayTimeout,
	PayloadTooLarge:  http.StatusRequestEntityTooLarge,
	MethodNotAllowed: http.StatusMethodNotAllowed,
	UnsupportedMedia: http.StatusUnsupportedMediaType,

	IdempotencyKeyReused:     http.StatusUnprocessableEntity,
	IdempotencyKeyInProgress: http.StatusConflict,

	InvalidCredentials: http.StatusUnauthorized,
	InvalidToken:       http.StatusBadRequest,
	DuplicateEmail:     http.StatusConflict,
	TenantInactive:     http.StatusForbidden,
	LastAdmin:          http.StatusConflict,
	ScopeNotGrantable:  http.StatusForbidden,
	NoChanges:          http.StatusBadRequest,

	AccountNotFound:             http.StatusBadRequest,
	AccountExists:               http.StatusConflict,
	AccountInactive:             http.StatusBadRequest,
	InvalidAccountType:          http.StatusBadRequest,
	AccountAlreadyLinked:        http.StatusConflict,
	DuplicateIBAN:               http.StatusConflict,
	DuplicateBooking:            http.StatusConflict,
	AlreadyReversed:             http.StatusConflict,
	CannotReverseReversal:       http.StatusConflict,
	TaxCodeNotFound:             http.StatusNotFound,
	TaxCodeInactive:             http.StatusBadRequest,
	InvalidFileType:             http.StatusBadRequest,
	EmptyFile:                   http.StatusBadRequest,
	FileTooLarge:                http.StatusBadRequest,
	MimeMismatch:                http.StatusBadRequest,
	FileNotFound:                http.StatusNotFound,
	PeriodLocked:                http.StatusConflict,
	PeriodAlreadySoftLocked:     http.StatusConflict,
	PeriodAlreadyLocked:         http.StatusConflict,
	PeriodNotLocked:             http.StatusConflict,
	ReviewItemNotPending:        http.StatusConflict,
	BankTxMixedBankAccounts:     http.StatusBadRequest,
	DirectionMismatch:           http.StatusBadRequest,
	MixedSettlementCurrency:     http.StatusBadRequest,
	GroupNotBalanced:            http.StatusBadRequest,
	SettlementExceedsOpenAmount: http.StatusBadRequest,
	SettledDocumentAmountNeeded: http.StatusBadRequest,
	UnsupportedSettlementCurr:   http.StatusUnprocessableEntity,
	TargetKindUnsupported:       http.StatusBadRequest,
	AdjustmentAccountNotFound:   http.StatusNotFound,
	DuplicateName:               http.StatusConflict,
	DuplicateTaxID:              http.StatusConflict,
	DuplicateVATID:              http.StatusConflict,
	DuplicateCustomerNumber:     http.StatusConflict,
	VendorIBANMissing:           http.StatusBadRequest,
	InvoiceAlreadyInActiveRun:   http.StatusConflict,
	InvoiceNotFound:             http.StatusNotFound,
	BankAccountNotFound:         http.StatusNotFound,
	OCRFailed:                   http.StatusInternalServerError,
	InvalidStateTransition:      http.StatusConflict,
	DuplicateDocument:           http.StatusConflict,
}

// Status maps a machine code to its HTTP status. Unknown codes are a
// programming error and surface as 500 so they get noticed.
func Status(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Known reports whether code is part of the vocabulary.
func Known(code string) bool { _, ok := statusOf[code]; return ok }
