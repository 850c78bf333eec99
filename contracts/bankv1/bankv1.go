// Package bankv1 is the contract of the bank service: bank accounts,
// statement import, matching and reconciliation.
package bankv1

import "time"

// Request/reply subjects of the REST routes; path parameters travel in the
// Path-Params header under the names noted.
const (
	SubjectAccountsList   = "bank.v1.accounts.list"
	SubjectAccountsCreate = "bank.v1.accounts.create"
	SubjectAccountsGet    = "bank.v1.accounts.get"    // param id
	SubjectAccountsUpdate = "bank.v1.accounts.update" // param id
)

// Events of the bank service, published through its outbox.
const (
	StreamEvents = "BANK"
	EventsFilter = "evt.bank.v1.>"
)

// Account is a bank account linked to an SKR04 asset account.
type Account struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	IBAN          string    `json:"iban"`
	BIC           *string   `json:"bic"`
	AccountNumber string    `json:"account_number"`
	Currency      string    `json:"currency"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// AccountList is the reply of SubjectAccountsList.
type AccountList struct {
	BankAccounts []Account `json:"bank_accounts"`
}

// AccountInput is the body of SubjectAccountsCreate (POST
// /v1/bank-accounts). IBAN and BIC may come with spaces and in lower case;
// the account stores them normalised. Currency defaults to EUR.
type AccountInput struct {
	Name          string  `json:"name"`
	IBAN          string  `json:"iban"`
	BIC           *string `json:"bic,omitempty"`
	AccountNumber string  `json:"account_number"`
	Currency      string  `json:"currency,omitempty"`
}

// AccountUpdate is the body of SubjectAccountsUpdate (PUT
// /v1/bank-accounts/:id): the name is all that changes; the IBAN and the
// linked ledger account are what the statements and bookings refer to.
type AccountUpdate struct {
	Name *string `json:"name"`
}
