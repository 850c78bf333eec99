package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

func (h handlers) tenant(ctx context.Context, _ *natsx.Request, c *auth.Claims) (any, error) {
	return h.svc.Tenant(ctx, c)
}

func (h handlers) updateTenant(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	in, err := decode[identity.TenantPatch](r)
	if err != nil {
		return nil, err
	}
	return h.svc.UpdateTenant(ctx, c, in)
}
