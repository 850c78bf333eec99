package payablesd

import (
	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/settle"
	"github.com/ledgerplatform/ledger/services/payables"
)

// PaymentsConsumer is the durable consumer of the bank's reconciliation
// events that marks incoming invoices paid.
const PaymentsConsumer = "payables-payments"

// Payments consumes the bank's transaction_reconciled and
// transaction_unmatched events into the incoming invoices' paid amounts
// (pkg/settle).
func Payments(store payables.PaymentStore) natsx.Consumer {
	return settle.Consumer(PaymentsConsumer, bankv1.CandidateOpenLiability, store)
}
