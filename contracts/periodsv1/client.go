package periodsv1

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/rpc"
)

// Client is the typed client of the periods service for other services.
type Client struct{ C rpc.Caller }

// Status reads the lock status of a tenant's periods in a range
// (SubjectStatus); a period not listed is open.
func (c Client) Status(ctx context.Context, r StatusRequest) (StatusReply, error) {
	return rpc.Send[StatusReply](ctx, c.C, SubjectStatus, r)
}
