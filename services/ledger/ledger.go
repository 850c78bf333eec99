// Package ledger is the GoBD-compliant, append-only double-entry general
// ledger: chart of accounts, tax codes, documents, bookings (journal intents
// and their events), reversals, the journal, its hash chain and the review
// queue. Postings are validated and expanded here; the store persists them
// with gapless per-tenant numbers and a SHA-256 chain.
package ledger

import (
	"encoding/json"
	"time"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
)

// The wire types of the ledger live in its contract; these names keep the
// ledger's code reading as before.
type (
	Account        = ledgerv1.Account
	TaxCode        = ledgerv1.TaxCode
	TaxCodeChanged = ledgerv1.TaxCodeChanged
	Line           = ledgerv1.Line
	Booking        = ledgerv1.Booking
	Event          = ledgerv1.Event
	Posted         = ledgerv1.Posted
	AccountPage    = ledgerv1.AccountPage
	Verification   = ledgerv1.Verification
)

// Account types of the chart.
const (
	Asset     = ledgerv1.AccountAsset
	Liability = ledgerv1.AccountLiability
	Equity    = ledgerv1.AccountEquity
	Revenue   = ledgerv1.AccountRevenue
	Expense   = ledgerv1.AccountExpense
)

// ValidAccountType reports whether t is one of the five account types.
func ValidAccountType(t string) bool { return ledgerv1.ValidAccountType(t) }

// Tax code kinds decide which side of a line the tax lands on.
const (
	TaxOutput        = ledgerv1.TaxOutput
	TaxInput         = ledgerv1.TaxInput
	TaxReverseCharge = ledgerv1.TaxReverseCharge
	TaxICAcquisition = ledgerv1.TaxICAcquisition
	TaxExempt        = ledgerv1.TaxExempt
)

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
	// Document, when set, is an uploaded original to store with the
	// posting, in its transaction: a refused posting leaves no document
	// behind. Should the tenant hold the same bytes already, the posting
	// links that document instead. The store sets DocumentID to the
	// document linked.
	Document   *NewDocument
	Reverses   string // intent id this one reverses
	Provenance Provenance
	Events     []Event
	// Fingerprint identifies a booking for the duplicate check. It is
	// stored even when the check is skipped, so the posting counts for
	// later checks.
	Fingerprint        string
	SkipDuplicateCheck bool
	// IdemKey and IdemHash make the posting idempotent when set.
	IdemScope, IdemKey, IdemHash string
}

// NewDocument is an uploaded original not yet stored: its metadata, its
// bytes and who uploaded it.
type NewDocument struct {
	Document
	Content   []byte
	CreatedBy string
}

// IdemRecord is the stored first response to an idempotent request, as
// the shared idempotency table holds it (pkg/idem.Record, which the store
// converts to and from).
type IdemRecord struct {
	Hash   string
	Status int
	Body   json.RawMessage
}
