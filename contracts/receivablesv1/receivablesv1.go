// Package receivablesv1 is the contract of the receivables service: the
// tenant's debtors (customers it invoices) and, next, its sales invoices.
package receivablesv1

import (
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Request/reply subjects of the REST routes; path parameters travel in the
// Path-Params header under the names noted.
const (
	SubjectDebtorsList   = "receivables.v1.debtors.list"
	SubjectDebtorsCreate = "receivables.v1.debtors.create"
	SubjectDebtorsGet    = "receivables.v1.debtors.get"    // param id
	SubjectDebtorsUpdate = "receivables.v1.debtors.update" // param id
)

// ServiceName is the receivables service's NATS user and signer.
const ServiceName = "receivables"

// Events of the receivables service, published through its outbox.
const (
	StreamEvents = "RECEIVABLES"
	EventsFilter = "evt.receivables.v1.>"
)

// Address is a debtor's postal address, the one its invoices go to.
type Address struct {
	Street  string `json:"street"`
	Zip     string `json:"zip"`
	City    string `json:"city"`
	Country string `json:"country"` // ISO 3166-1 alpha-2
}

// PaymentTerms are what a debtor's invoices grant: payment due Days after
// the invoice date, CashDiscountRate percent off (Skonto) when paid within
// CashDiscountDays.
type PaymentTerms struct {
	Days             int          `json:"days"`
	CashDiscountRate money.Amount `json:"cash_discount_rate"`
	CashDiscountDays int          `json:"cash_discount_days"`
}

// Debtor is a customer the tenant invoices (Debitor). Optional texts are
// null when not set.
type Debtor struct {
	ID                string       `json:"id"`
	CustomerNumber    string       `json:"customer_number"`
	Name              string       `json:"name"`
	Address           Address      `json:"address"`
	VATID             *string      `json:"vat_id"`
	Email             *string      `json:"email"`
	PaymentTerms      PaymentTerms `json:"payment_terms"`
	LeitwegID         *string      `json:"leitweg_id"`
	ReceivableAccount string       `json:"receivable_account"`
	IsActive          bool         `json:"is_active"`
	CreatedAt         time.Time    `json:"created_at"`
	UpdatedAt         time.Time    `json:"updated_at"`
}

// DebtorList is the reply of SubjectDebtorsList.
type DebtorList struct {
	Debtors []Debtor `json:"debtors"`
}

// AddressInput is an address as a request gives it: on creation street,
// zip and city are required, on a change each given field replaces the
// current one.
type AddressInput struct {
	Street  *string `json:"street,omitempty"`
	Zip     *string `json:"zip,omitempty"`
	City    *string `json:"city,omitempty"`
	Country *string `json:"country,omitempty"`
}

// PaymentTermsInput are payment terms as a request gives them; an omitted
// field keeps its default (creation) or current value (change).
type PaymentTermsInput struct {
	Days             *int          `json:"days,omitempty"`
	CashDiscountRate *money.Amount `json:"cash_discount_rate,omitempty"`
	CashDiscountDays *int          `json:"cash_discount_days,omitempty"`
}

// DebtorInput is the body of SubjectDebtorsCreate (POST /v1/debtors). A
// customer number is assigned (K-10001, K-10002, …) when none is given.
type DebtorInput struct {
	CustomerNumber    *string            `json:"customer_number,omitempty"`
	Name              string             `json:"name"`
	Address           *AddressInput      `json:"address,omitempty"`
	VATID             *string            `json:"vat_id,omitempty"`
	Email             *string            `json:"email,omitempty"`
	PaymentTerms      *PaymentTermsInput `json:"payment_terms,omitempty"`
	LeitwegID         *string            `json:"leitweg_id,omitempty"`
	ReceivableAccount *string            `json:"receivable_account,omitempty"`
}

// DebtorUpdate is the body of SubjectDebtorsUpdate (PATCH
// /v1/debtors/:id): each given field replaces the current value; an empty
// vat_id, email or leitweg_id removes it. A debtor is never deleted, only
// deactivated (is_active false).
type DebtorUpdate struct {
	CustomerNumber    *string            `json:"customer_number,omitempty"`
	Name              *string            `json:"name,omitempty"`
	Address           *AddressInput      `json:"address,omitempty"`
	VATID             *string            `json:"vat_id,omitempty"`
	Email             *string            `json:"email,omitempty"`
	PaymentTerms      *PaymentTermsInput `json:"payment_terms,omitempty"`
	LeitwegID         *string            `json:"leitweg_id,omitempty"`
	ReceivableAccount *string            `json:"receivable_account,omitempty"`
	IsActive          *bool              `json:"is_active,omitempty"`
}

// DebtorFilter is the query of SubjectDebtorsList.
type DebtorFilter struct {
	Search   string // case-blind part of the name, customer number or VAT ID
	IsActive *bool
	Limit    int
	Offset   int
}
