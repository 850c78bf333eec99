// Package bankv1 is the contract of the bank service: bank accounts,
// statement import, matching and reconciliation.
package bankv1

import "time"

// Request/reply subjects of the REST routes.
const (
	SubjectAccountsList = "bank.v1.accounts.list"
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
}

// AccountList is the reply of SubjectAccountsList.
type AccountList struct {
	BankAccounts []Account `json:"bank_accounts"`
}
