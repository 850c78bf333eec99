package identityv1

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/rpc"
)

// Client is the typed client of identity for other services. Calls act for
// the caller whose claims travel in ctx.
type Client struct{ C rpc.Caller }

// Tenant reads the caller's tenant master data (SubjectTenantGet).
func (c Client) Tenant(ctx context.Context) (Tenant, error) {
	return rpc.Send[Tenant](ctx, c.C, SubjectTenantGet, nil)
}
