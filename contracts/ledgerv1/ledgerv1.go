// Package ledgerv1 is the contract of the ledger service.
package ledgerv1

import (
	"encoding/json"
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Request/reply subjects of the REST routes; path parameters travel in the
// Path-Params header under the names noted.
const (
	SubjectBookingsCreate       = "ledger.v1.bookings.create"
	SubjectBookingsWithDocument = "ledger.v1.bookings.with_document"
	SubjectDocumentsUpload      = "ledger.v1.documents.upload"
	SubjectDocumentsFile        = "ledger.v1.documents.file" // param id
	SubjectJournalList          = "ledger.v1.journal.list"
	SubjectJournalGet           = "ledger.v1.journal.get" // param intent_id
	SubjectJournalReverse       = "ledger.v1.journal.reverse"
	SubjectJournalVerify        = "ledger.v1.journal.verify" // query full=true
	// SubjectJournalCheckpoints lists the caller's signed chain checkpoints.
	SubjectJournalCheckpoints = "ledger.v1.journal.checkpoints"

	SubjectAccountsList    = "ledger.v1.accounts.list"
	SubjectAccountsCreate  = "ledger.v1.accounts.create"
	SubjectAccountsSearch  = "ledger.v1.accounts.search"
	SubjectAccountsEntries = "ledger.v1.accounts.entries" // param number

	SubjectTaxCodesList   = "ledger.v1.tax_codes.list"
	SubjectTaxCodesUpdate = "ledger.v1.tax_codes.update" // param code

	SubjectReviewList     = "ledger.v1.review.list"
	SubjectReviewCount    = "ledger.v1.review.count"
	SubjectReviewNext     = "ledger.v1.review.next"
	SubjectReviewGet      = "ledger.v1.review.get"    // param id
	SubjectReviewDelete   = "ledger.v1.review.delete" // param id
	SubjectReviewAdjust   = "ledger.v1.review.adjust" // param id
	SubjectReviewConfirm  = "ledger.v1.review.confirm"
	SubjectReviewDraft    = "ledger.v1.review.draft"
	SubjectReviewOverride = "ledger.v1.review.override"

	// Internal commands from other services.
	// SubjectSetPeriodLock sets the lock state of a month; body SetPeriodLock.
	SubjectSetPeriodLock = "ledger.v1.periods.set_lock"
	// SubjectReviewCreate creates a review-queue item; body ReviewItemInput.
	SubjectReviewCreate = "ledger.v1.review.create"
	// SubjectPost posts a booking for another service; body PostRequest.
	SubjectPost = "ledger.v1.post"
	// SubjectJournalFeed pages through a tenant's journal in number order,
	// for projections that rebuild and for exports; body JournalFeedRequest.
	SubjectJournalFeed = "ledger.v1.journal.feed"
	// SubjectAccountGet reads one account of a tenant's chart by number
	// for another service (the bank checks the account it links); body
	// AccountGet, reply Account, NOT_FOUND when the chart lacks it.
	SubjectAccountGet = "ledger.v1.accounts.get"
	// SubjectAccountBalance reads the balance of one account of a tenant's
	// chart at the end of a day for another service (the bank compares it
	// with the statement); body AccountBalanceGet, reply AccountBalance.
	SubjectAccountBalance = "ledger.v1.accounts.balance"
)

// AccountBalanceGet is the request of SubjectAccountBalance: the balance
// of account Number over every entry booked on or before AsOf (YYYY-MM-DD;
// empty: every entry). TenantID is sent as the calling service's signed
// principal's, never in the body.
type AccountBalanceGet struct {
	TenantID string `json:"tenant_id,omitempty"`
	Number   string `json:"number"`
	AsOf     string `json:"as_of,omitempty"`
}

// AccountBalance answers SubjectAccountBalance: Balance is debit minus
// credit, positive for an asset account holding money.
type AccountBalance struct {
	Number     string       `json:"number"`
	AsOf       *string      `json:"as_of"`
	Balance    money.Amount `json:"balance"`
	EntryCount int64        `json:"entry_count"`
}

// AccountGet is the request of SubjectAccountGet. TenantID is sent as the
// calling service's signed principal's, never in the body.
type AccountGet struct {
	TenantID string `json:"tenant_id,omitempty"`
	Number   string `json:"number"`
}

// Events of the ledger, published through its outbox.
const (
	StreamEvents       = "LEDGER"
	EventsFilter       = "evt.ledger.v1.>"
	EventIntentPosted  = "evt.ledger.v1.intent_posted"
	EventPeriodLockSet = "evt.ledger.v1.period_lock_set"
)

// Period lock states, exactly as the specification writes them.
const (
	PeriodOpen       = "open"
	PeriodSoftLocked = "soft-locked"
	PeriodHardLocked = "hard-locked"
)

// SetPeriodLock is the command of SubjectSetPeriodLock and the payload of
// EventPeriodLockSet. Period is YYYY-MM, or YYYY-13 for a year's adjustment
// period. TenantID names the tenant in the event; a command takes its
// tenant from the caller's signed principal and refuses one in the body
// (Client moves it there).
type SetPeriodLock struct {
	TenantID string `json:"tenant_id,omitempty"`
	Period   string `json:"period"`
	Status   string `json:"status"`
	LockedBy string `json:"locked_by,omitempty"`
}

// EventLine is one journal event inside IntentPosted.
type EventLine struct {
	ID                string  `json:"id"`
	JournalNumber     int64   `json:"journal_number"`
	AccountDebit      string  `json:"account_debit"`
	AccountCredit     string  `json:"account_credit"`
	Amount            string  `json:"amount"` // exact decimal as text
	TaxCode           *string `json:"tax_code"`
	Description       string  `json:"description"`
	ExternalReference *string `json:"external_reference,omitempty"`
	// FXCurrency and FXAmount are the line's foreign-currency amount when
	// it was booked with one (exact decimal as text, like Amount); the
	// bank's open items take an invoice's document currency from them.
	FXCurrency *string `json:"fx_currency,omitempty"`
	FXAmount   *string `json:"fx_amount,omitempty"`
}

// IntentPosted is the payload of EventIntentPosted: everything a projection
// needs, in journal order.
type IntentPosted struct {
	TenantID    string `json:"tenant_id"`
	IntentID    string `json:"intent_id"`
	BookingDate string `json:"booking_date"`
	// Period is the accounting period the intent belongs to: the month of
	// its booking date, or YYYY-13 for the year's adjustment period.
	Period      string      `json:"period"`
	Description string      `json:"description"`
	Source      string      `json:"source"`
	Reverses    string      `json:"reverses,omitempty"`
	FirstNumber int64       `json:"first_number"`
	LastNumber  int64       `json:"last_number"`
	Events      []EventLine `json:"events"`
	CapturedAt  time.Time   `json:"captured_at"`
}

// PostRequest lets another service post with a deterministic intent id, so
// a retried command never posts twice. The reply is Posted. TenantID never
// travels in the body: the tenant is the calling service's signed
// principal's (Client moves it there), and a body naming one is refused.
type PostRequest struct {
	TenantID   string  `json:"tenant_id,omitempty"`
	IntentID   string  `json:"intent_id"`
	Source     string  `json:"source"`
	Booking    Booking `json:"booking"`
	DocumentID string  `json:"document_id,omitempty"`
}

// Review-queue source types.
const (
	ReviewSourceDocument        = "document"
	ReviewSourceBankTransaction = "bank_transaction"
	ReviewSourceManual          = "manual"
)

// ReviewItemInput is the command of SubjectReviewCreate: another service
// proposes a booking draft for a human to confirm, adjust or override.
// Suggestion is the draft: {booking_date, description, lines[], confidence,
// reasons[]} with lines shaped like a booking's lines.
//
// A retried command never creates a second item: an item with the same ID
// (when given), or a live item with the same source_type and source_id
// (when source_id is set), is answered with its id and status 200 instead
// of 201.
//
// TenantID never travels in the body: see PostRequest.
type ReviewItemInput struct {
	TenantID   string          `json:"tenant_id,omitempty"`
	ID         string          `json:"id,omitempty"` // optional deterministic UUID chosen by the caller
	SourceType string          `json:"source_type"`  // document, bank_transaction or manual
	SourceID   string          `json:"source_id,omitempty"`
	DocumentID string          `json:"document_id,omitempty"` // a ledger document of the tenant
	Suggestion json.RawMessage `json:"suggestion"`
	CreatedBy  string          `json:"created_by,omitempty"` // e.g. "service:bank"
}

// ReviewItemCreated answers SubjectReviewCreate.
type ReviewItemCreated struct {
	ID      string `json:"id"`
	Created bool   `json:"created"`
}

// JournalFeedRequest asks for the events after journal number After.
// TenantID never travels in the body: see PostRequest.
type JournalFeedRequest struct {
	TenantID string `json:"tenant_id,omitempty"`
	After    int64  `json:"after"`
	Limit    int    `json:"limit"` // 1..5000
	// From and To (YYYY-MM-DD, inclusive, optional) restrict booking dates.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// JournalLine is one journal event with its intent's data.
type JournalLine struct {
	EventLine
	IntentID    string    `json:"intent_id"`
	BookingDate string    `json:"booking_date"`
	Period      string    `json:"period"`
	Source      string    `json:"source"`
	DocumentID  *string   `json:"document_id,omitempty"`
	CapturedAt  time.Time `json:"captured_at"`
}

// JournalFeed is a page of the feed. Head is the tenant's last journal
// number when the page was read.
type JournalFeed struct {
	Lines []JournalLine `json:"lines"`
	Last  int64         `json:"last"`
	Head  int64         `json:"head"`
}

// ReverseRequest is the body of SubjectJournalReverse (POST
// /v1/journal/reverse).
type ReverseRequest struct {
	IntentID    string `json:"intent_id"`
	Reason      string `json:"reason,omitempty"`
	BookingDate string `json:"booking_date,omitempty"`
}

// Reversed answers SubjectJournalReverse.
type Reversed struct {
	ReversalIntentID string `json:"reversal_intent_id"`
	OriginalIntentID string `json:"original_intent_id"`
	EventCount       int    `json:"event_count"`
}
