package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

func (h handlers) listTenants(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	return h.svc.ListTenants(ctx, c, identity.PageQuery{Limit: r.Query.Get("limit"), Offset: r.Query.Get("offset")})
}

func (h handlers) createTenant(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	in, err := decode[identity.TenantPatch](r)
	if err != nil {
		return nil, err
	}
	t, err := h.svc.CreateTenant(ctx, c, in)
	if err != nil {
		return nil, err
	}
	return natsx.Created(t), nil
}

func (h handlers) deleteTenant(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	return done(h.svc.DeactivateTenant(ctx, c, r.Param("id")))
}
