// Package payablesv1 is the contract of the payables service: the
// tenant's vendors (Kreditoren, the suppliers whose invoices it receives)
// and, next, their incoming invoices and payment runs.
package payablesv1

import (
	"time"

	"github.com/ledgerplatform/ledger/contracts/money"
)

// Request/reply subjects of the REST routes; path parameters travel in the
// Path-Params header under the names noted.
const (
	SubjectVendorsList   = "payables.v1.vendors.list"
	SubjectVendorsCreate = "payables.v1.vendors.create"
	SubjectVendorsGet    = "payables.v1.vendors.get"    // param id
	SubjectVendorsUpdate = "payables.v1.vendors.update" // param id
)

// ServiceName is the payables service's NATS user and signer.
const ServiceName = "payables"

// Events of the payables service, published through its outbox.
const (
	StreamEvents = "PAYABLES"
	EventsFilter = "evt.payables.v1.>"
)

// Address is a vendor's postal address; a part not known is "".
type Address struct {
	Street  string `json:"street"`
	Zip     string `json:"zip"`
	City    string `json:"city"`
	Country string `json:"country"` // ISO 3166-1 alpha-2, "" when not given
}

// Vendor is a supplier the tenant receives invoices from (Kreditor).
// Optional fields are null when not set. OpenAmount is what is still open
// of its posted incoming invoices (gross less paid).
type Vendor struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	TaxID          *string      `json:"tax_id"`
	VATID          *string      `json:"vat_id"`
	IBAN           *string      `json:"iban"`
	BIC            *string      `json:"bic"`
	Address        *Address     `json:"address"`
	DefaultAccount *string      `json:"default_account"`
	Notes          *string      `json:"notes"`
	IsActive       bool         `json:"is_active"`
	OpenAmount     money.Amount `json:"open_amount"`
	CreatedAt      time.Time    `json:"created_at"`
	UpdatedAt      time.Time    `json:"updated_at"`
}

// VendorList is the reply of SubjectVendorsList.
type VendorList struct {
	Vendors []Vendor `json:"vendors"`
}

// AddressInput is an address as a request gives it; every part is
// optional. On a change each given part replaces the current one and an
// empty part removes it.
type AddressInput struct {
	Street  *string `json:"street,omitempty"`
	Zip     *string `json:"zip,omitempty"`
	City    *string `json:"city,omitempty"`
	Country *string `json:"country,omitempty"`
}

// VendorInput is the body of SubjectVendorsCreate (POST /v1/vendors).
type VendorInput struct {
	Name           string        `json:"name"`
	TaxID          *string       `json:"tax_id,omitempty"`
	VATID          *string       `json:"vat_id,omitempty"`
	IBAN           *string       `json:"iban,omitempty"`
	BIC            *string       `json:"bic,omitempty"`
	Address        *AddressInput `json:"address,omitempty"`
	DefaultAccount *string       `json:"default_account,omitempty"`
	Notes          *string       `json:"notes,omitempty"`
}

// VendorUpdate is the body of SubjectVendorsUpdate (PATCH
// /v1/vendors/:id): each given field replaces the current value; an empty
// text removes an optional field. A vendor is never deleted, only
// deactivated (is_active false).
type VendorUpdate struct {
	Name           *string       `json:"name,omitempty"`
	TaxID          *string       `json:"tax_id,omitempty"`
	VATID          *string       `json:"vat_id,omitempty"`
	IBAN           *string       `json:"iban,omitempty"`
	BIC            *string       `json:"bic,omitempty"`
	Address        *AddressInput `json:"address,omitempty"`
	DefaultAccount *string       `json:"default_account,omitempty"`
	Notes          *string       `json:"notes,omitempty"`
	IsActive       *bool         `json:"is_active,omitempty"`
}

// VendorFilter is the query of SubjectVendorsList.
type VendorFilter struct {
	Search   string // case-blind part of the name or VAT ID
	IsActive *bool
	Limit    int
	Offset   int
}
