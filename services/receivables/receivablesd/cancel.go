package receivablesd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// CancelRoutes are the routes of cancellation and credit notes.
func CancelRoutes(cn *receivables.CreditNotes) []natsx.Route {
	return []natsx.Route{
		// The credit note's id and the reversal's key derive from the
		// invoice, so a repeat resumes or answers the cancellation made;
		// the middleware replays a keyed repeat's first answer.
		{Subject: receivablesv1.SubjectSalesInvoiceCancel, Idempotent: true, Decode: param("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (receivablesv1.Cancelled, error) {
			return cn.Cancel(ctx, natsx.Claims(ctx).TenantID, id)
		})},
	}
}

// creditLedger is receivables.CreditLedger over NATS, under the
// receivables service's own principal for the tenant.
type creditLedger struct{ invoiceLedger }

func (l creditLedger) Reverse(ctx context.Context, tenantID, key string, r ledgerv1.ReverseRequest) (ledgerv1.Reversed, error) {
	return ledgerv1.Client{C: l.c}.Reverse(natsx.WithIdempotencyKey(ctx, key), tenantID, r)
}
