package receivablesd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// CancelRoutes are the routes of cancellation and credit notes.
func CancelRoutes(cn *receivables.CreditNotes) []natsx.Route {
	return []natsx.Route{
		// The credit note's id and the reversal's key derive from the
		// invoice, so a repeat resumes or answers the cancellation made;
		// the middleware replays a keyed repeat's first answer.
		{Subject: receivablesv1.SubjectSalesInvoiceCancel, Idempotent: true, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (receivablesv1.Cancelled, error) {
			return cn.Cancel(ctx, natsx.Claims(ctx).TenantID, id)
		})},
		// As creating an invoice: the key derives the credit note's id, so
		// a retry after an outage resumes it.
		{Subject: receivablesv1.SubjectSalesInvoiceCredit, Idempotent: true, Decode: natsx.DecodeWithID[receivablesv1.CreditNoteInput], Endpoint: natsx.Typed(func(ctx context.Context, r natsx.WithID[receivablesv1.CreditNoteInput]) (*natsx.Response, error) {
			idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
			c := natsx.Claims(ctx)
			out, err := cn.CreditNote(ctx, c.TenantID, r.ID, receivables.Request{Actor: c.Actor(), IdempotencyKey: natsx.IdempotencyKey(ctx)}, r.Body)
			if err != nil {
				return nil, err
			}
			return natsx.Created(out), nil
		})},
	}
}

// creditLedger is receivables.CreditLedger over NATS, under the
// receivables service's own principal for the tenant.
type creditLedger struct{ invoiceLedger }

func (l creditLedger) Reverse(ctx context.Context, tenantID, key string, r ledgerv1.ReverseRequest) (ledgerv1.Reversed, error) {
	return ledgerv1.Client{C: l.c}.Reverse(natsx.WithIdempotencyKey(ctx, key), tenantID, r)
}

func (l creditLedger) ReversedBy(ctx context.Context, tenantID, intentID string) (string, error) {
	return ledgerv1.Client{C: l.c}.ReversedBy(ctx, tenantID, intentID)
}
