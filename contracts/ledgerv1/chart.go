package ledgerv1

import (
	"encoding/json"
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Account types of the chart.
const (
	AccountAsset     = "asset"
	AccountLiability = "liability"
	AccountEquity    = "equity"
	AccountRevenue   = "revenue"
	AccountExpense   = "expense"
)

// ValidAccountType reports whether t is one of the five account types.
func ValidAccountType(t string) bool {
	switch t {
	case AccountAsset, AccountLiability, AccountEquity, AccountRevenue, AccountExpense:
		return true
	}
	return false
}

// Account is one account of a tenant's chart.
type Account struct {
	Number      string    `json:"number"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Category    string    `json:"category"`
	ReportGroup string    `json:"report_group"`
	IsActive    bool      `json:"is_active"`
	IsSystem    bool      `json:"is_system"`
	CreatedAt   time.Time `json:"created_at"`
}

// AccountFilter selects a page of the chart (SubjectAccountsList, GET
// /v1/accounts). Zero values leave a parameter out, so the ledger's
// defaults apply (limit 500, which is also the maximum; offset 0).
type AccountFilter struct {
	Q        string
	Category string
	Type     string
	Limit    int
	Offset   int
}

// AccountPage answers SubjectAccountsList.
type AccountPage struct {
	Accounts []Account `json:"accounts"`
	Total    int       `json:"total"`
	Limit    int       `json:"limit"`
	Offset   int       `json:"offset"`
}

// Tax code kinds decide which side of a line the tax lands on.
const (
	TaxOutput        = "output"         // sales: tax credited to an output-VAT account
	TaxInput         = "input"          // purchases: tax debited to an input-VAT account
	TaxReverseCharge = "reverse_charge" // §13b: input and output VAT self-assessed
	TaxICAcquisition = "ic_acquisition" // intra-EU acquisition: self-assessed likewise
	TaxExempt        = "exempt"         // tax-free and 0 %: no tax event
)

// TaxCode maps a rate to the VAT accounts and the DATEV BU key.
type TaxCode struct {
	Code              string       `json:"code"`
	Label             string       `json:"label"`
	Description       *string      `json:"description"`
	Kind              string       `json:"kind"`
	Rate              money.Amount `json:"rate"`
	VATAccount        string       `json:"vat_account"`
	SelfAssessAccount *string      `json:"self_assess_account"`
	DATEVKey          string       `json:"datev_bu_key"`
	IsSystem          bool         `json:"is_system"`
	IsActive          bool         `json:"is_active"`
	CreatedAt         time.Time    `json:"created_at"`
}

// TaxCodeList answers SubjectTaxCodesList.
type TaxCodeList struct {
	TaxCodes []TaxCode `json:"tax_codes"`
}

// TaxCodeChanged answers SubjectTaxCodesUpdate (PATCH /v1/tax-codes/:code).
type TaxCodeChanged struct {
	Code     string `json:"code"`
	Label    string `json:"label"`
	IsActive bool   `json:"is_active"`
}

// Changed is the PATCH answer for t.
func (t TaxCode) Changed() TaxCodeChanged {
	return TaxCodeChanged{Code: t.Code, Label: t.Label, IsActive: t.IsActive}
}

// Line is one DATEV-style posting record of a booking request.
type Line struct {
	AccountDebit      string          `json:"account_debit"`
	AccountCredit     string          `json:"account_credit"`
	Amount            money.Amount    `json:"amount"`
	TaxCode           string          `json:"tax_code,omitempty"`
	Description       string          `json:"description,omitempty"`
	FXCurrency        string          `json:"fx_currency,omitempty"`
	FXAmount          *money.Amount   `json:"fx_amount,omitempty"`
	ExternalReference string          `json:"external_reference,omitempty"`
	CustomMetadata    json.RawMessage `json:"custom_metadata,omitempty"`
}

// Booking is a request to post one journal intent (POST /v1/bookings, and
// the booking of a PostRequest).
type Booking struct {
	BookingDate        string `json:"booking_date"`
	Description        string `json:"description"`
	Lines              []Line `json:"lines"`
	SkipDuplicateCheck bool   `json:"skip_duplicate_check,omitempty"`
	// Period, when set, must be YYYY-13 of the booking date's year: the
	// posting goes into that year's adjustment period.
	Period string `json:"period,omitempty"`
}

// Event is one journal event (a row of the journal).
type Event struct {
	ID                string          `json:"id"`
	JournalNumber     int64           `json:"journal_number"`
	IntentID          string          `json:"intent_id"`
	BookingDate       string          `json:"booking_date"`
	AccountDebit      string          `json:"account_debit"`
	AccountCredit     string          `json:"account_credit"`
	Amount            money.Amount    `json:"amount"`
	TaxCode           *string         `json:"tax_code"`
	Description       string          `json:"description"`
	Source            string          `json:"source"`
	FXCurrency        *string         `json:"fx_currency"`
	FXAmount          *money.Amount   `json:"fx_amount"`
	ExternalReference *string         `json:"external_reference"`
	CustomMetadata    json.RawMessage `json:"custom_metadata"`
	CapturedAt        time.Time       `json:"captured_at"`
	Hash              string          `json:"hash"`
}

// Posted is the result of posting an intent (SubjectBookingsCreate,
// SubjectPost).
type Posted struct {
	IntentID   string `json:"intent_id"`
	EventCount int    `json:"event_count"`
	DocumentID string `json:"document_id,omitempty"`
}

// Verification answers SubjectJournalVerify: the result of checking a
// tenant's hash chain. Events is the head's journal number (numbers are
// gapless, so also the count of events); the chain was recomputed from
// StartedFrom (nil: from the first event) to the head, Recomputed events
// in all. Checkpoints are the signed checkpoints looked at on the way,
// newest first.
type Verification struct {
	OK          bool              `json:"ok"`
	Events      int64             `json:"events"`
	HeadHash    string            `json:"head_hash"`
	FirstBroken *int64            `json:"first_broken_journal_number,omitempty"`
	Reason      string            `json:"reason,omitempty"`
	Full        bool              `json:"full"`
	StartedFrom *CheckpointCheck  `json:"started_from"`
	Recomputed  int64             `json:"recomputed_events"`
	Checkpoints []CheckpointCheck `json:"checkpoints"`
}

// CheckpointCheck is one signed checkpoint as verification found it:
// SignatureOK when a configured public key verifies it, Matched when its
// hash is the stored event's at its journal number.
type CheckpointCheck struct {
	JournalNumber int64     `json:"journal_number"`
	Hash          string    `json:"hash"`
	SignedAt      time.Time `json:"signed_at"`
	Reason        string    `json:"reason"`
	KeyID         string    `json:"key_id"`
	SignatureOK   bool      `json:"signature_ok"`
	Matched       bool      `json:"matched"`
	Problem       string    `json:"problem,omitempty"`
}

// Checkpoint is a signed checkpoint of a tenant's chain head as the GoBD
// export carries it (SubjectJournalCheckpoints). The signature (Ed25519,
// hex) covers Message: the fields tag "ledger-checkpoint-v1", tenant id,
// journal number (decimal), hash (hex), signed_at (RFC 3339 UTC,
// microseconds), reason and key id, each preceded by its length as a
// 4-byte big-endian integer. PublicKey (hex) is the configured key with
// that id, empty when none is.
type Checkpoint struct {
	JournalNumber int64     `json:"journal_number"`
	Hash          string    `json:"hash"`
	SignedAt      time.Time `json:"signed_at"`
	Reason        string    `json:"reason"`
	KeyID         string    `json:"key_id"`
	PublicKey     string    `json:"public_key"`
	Signature     string    `json:"signature"`
	SignatureOK   bool      `json:"signature_ok"`
}

// CheckpointList answers SubjectJournalCheckpoints, oldest first.
type CheckpointList struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// ReviewCount answers SubjectReviewCount (query status, default pending):
// Count items have the asked status, Pending are pending.
type ReviewCount struct {
	Count   int `json:"count"`
	Pending int `json:"pending"`
}

// PeriodLockSet answers SubjectSetPeriodLock.
type PeriodLockSet struct {
	OK     bool   `json:"ok"`
	Period string `json:"period"`
	Status string `json:"status"`
}
