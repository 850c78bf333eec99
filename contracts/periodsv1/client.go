package periodsv1

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/rpc"
)

// Client is the typed client of the periods service for other services.
type Client struct{ C rpc.Caller }

// Status reads the lock status of a tenant's periods in a range
// (SubjectStatus); a period not listed is open. The tenant travels as the
// calling service's signed principal's, not in the body.
func (c Client) Status(ctx context.Context, r StatusRequest) (StatusReply, error) {
	ctx, r.TenantID = rpc.ForTenant(ctx, r.TenantID), ""
	return rpc.Send[StatusReply](ctx, c.C, SubjectStatus, r)
}
