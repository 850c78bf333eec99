package bankd

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/bank"
)

// ReconcileRoutes serve reconciliation and evidence. The mutating ones are
// Idempotent: their effects span the ledger and the bank's store, so the
// middleware stores the first answer after them; a retry without a key
// is safe anyway (the ledger posting's intent id is derived).
func ReconcileRoutes(r *bank.Reconciler) []natsx.Route {
	tenant := func(ctx context.Context) string { return natsx.Claims(ctx).TenantID }
	return []natsx.Route{
		{Subject: bankv1.SubjectTransactionsReconcile, Idempotent: true, Decode: natsx.DecodeWithID[bankv1.ReconcileInput], Endpoint: natsx.Typed(
			func(ctx context.Context, in natsx.WithID[bankv1.ReconcileInput]) (bankv1.Reconciled, error) {
				return r.Reconcile(ctx, tenant(ctx), in.ID, in.Body)
			})},
		{Subject: bankv1.SubjectTransactionsUnmatch, Idempotent: true, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(
			func(ctx context.Context, id string) (bankv1.Unmatched, error) {
				return r.Unmatch(ctx, tenant(ctx), id)
			})},
		{Subject: bankv1.SubjectTransactionsBatchReconcile, Idempotent: true, Decode: natsx.JSON[bankv1.BatchReconcileInput], Endpoint: natsx.Typed(
			func(ctx context.Context, in bankv1.BatchReconcileInput) (bankv1.BatchReconciled, error) {
				return r.BatchReconcile(ctx, tenant(ctx), in)
			})},
		{Subject: bankv1.SubjectMatchGroupsCreate, Idempotent: true, Decode: natsx.JSON[bankv1.MatchGroupInput], Endpoint: natsx.Typed(
			func(ctx context.Context, in bankv1.MatchGroupInput) (*natsx.Response, error) {
				idem.Reply(ctx, func(v any) any { return natsx.Created(v) })
				g, err := r.CreateMatchGroup(ctx, tenant(ctx), in)
				if err != nil {
					return nil, err
				}
				return natsx.Created(g), nil
			})},
		{Subject: bankv1.SubjectEvidencePut, Idempotent: true, Decode: natsx.DecodeWithID[bankv1.EvidenceInput], Endpoint: natsx.Typed(
			func(ctx context.Context, in natsx.WithID[bankv1.EvidenceInput]) (bankv1.EvidenceReply, error) {
				return r.PutEvidence(ctx, tenant(ctx), in.ID, in.Body)
			})},
		{Subject: bankv1.SubjectEvidenceGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(
			func(ctx context.Context, id string) (bankv1.EvidenceReply, error) {
				return r.Evidence(ctx, tenant(ctx), id)
			})},
	}
}

// Ledger is the ledger as reconciliation uses it: the typed client, with
// the command's own idempotency key on a reversal (never the client's
// key of the request being served).
type Ledger struct{ C ledgerv1.Client }

// Post implements bank.Ledger.
func (l Ledger) Post(ctx context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error) {
	return l.C.Post(natsx.WithIdempotencyKey(ctx, ""), r)
}

// Reverse implements bank.Ledger.
func (l Ledger) Reverse(ctx context.Context, tenantID, key string, r ledgerv1.ReverseRequest) (ledgerv1.Reversed, error) {
	return l.C.Reverse(natsx.WithIdempotencyKey(ctx, key), tenantID, r)
}
