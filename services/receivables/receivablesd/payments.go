package receivablesd

import (
	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/settle"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// PaymentsConsumer is the durable consumer of the bank's reconciliation
// events that marks sales invoices paid.
const PaymentsConsumer = "receivables-payments"

// Payments consumes the bank's transaction_reconciled and
// transaction_unmatched events into the sales invoices' paid amounts
// (pkg/settle).
func Payments(store receivables.PaymentStore) natsx.Consumer {
	return settle.Consumer(PaymentsConsumer, bankv1.CandidateOpenReceivable, store)
}
