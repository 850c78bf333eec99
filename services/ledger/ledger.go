// Package ledger is the GoBD-compliant, append-only double-entry general
// ledger: chart of accounts, tax codes, documents, bookings (journal intents
// and their events), reversals, the journal, its hash chain and the review
// queue. Postings are validated and expanded here; the store persists them
// with gapless per-tenant numbers and a SHA-256 chain.
package ledger

import (
	"encoding/json"
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Account types of the chart.
const (
	Asset     = "asset"
	Liability = "liability"
	Equity    = "equity"
	Revenue   = "revenue"
	Expense   = "expense"
)

// ValidAccountType reports whether t is one of the five account types.
func ValidAccountType(t string) bool {
	switch t {
	case Asset, Liability, Equity, Revenue, Expense:
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

// Booking is a request to post one journal intent.
type Booking struct {
	BookingDate        string `json:"booking_date"`
	Description        string `json:"description"`
	Lines              []Line `json:"lines"`
	SkipDuplicateCheck bool   `json:"skip_duplicate_check,omitempty"`
	// Period, when set, must be YYYY-13 of the booking date's year: the
	// posting goes into that year's adjustment period.
	Period string `json:"period,omitempty"`
}

// Provenance records how a posting arrived, for the journal's
// provenance_summary.
type Provenance struct {
	Surface   string `json:"surface"` // api, mcp, system
	Channel   string `json:"channel"` // rest, review_queue, bank, receivables, ...
	ActorType string `json:"actor_type"`
	ActorID   string `json:"actor_id"`
	Label     string `json:"actor_label"`
	KeyPrefix string `json:"actor_key_prefix"`
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

// Intent is a validated booking ready for the store: its events carry
// everything but number, capture time and hash, which the store assigns.
type Intent struct {
	ID          string
	TenantID    string
	BookingDate time.Time
	Description string
	Period      string // YYYY-MM of the booking date, or YYYY-13
	Source      string // api, reversal, review_queue, bank, ...
	Category    string
	DocumentID  string
	Reverses    string // intent id this one reverses
	Provenance  Provenance
	Events      []Event
	// Fingerprint identifies a booking for the duplicate check. It is
	// stored even when the check is skipped, so the posting counts for
	// later checks.
	Fingerprint        string
	SkipDuplicateCheck bool
	// IdemKey and IdemHash make the posting idempotent when set.
	IdemScope, IdemKey, IdemHash string
}

// Posted is the result of posting an intent.
type Posted struct {
	IntentID   string `json:"intent_id"`
	EventCount int    `json:"event_count"`
	DocumentID string `json:"document_id,omitempty"`
}

// IdemRecord is the stored first response to an idempotent request.
type IdemRecord struct {
	RequestHash string
	Status      int
	Response    json.RawMessage
}
