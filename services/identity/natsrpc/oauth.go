package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

type appList struct {
	Apps []identity.App `json:"apps"`
}

type clientList struct {
	Clients []identity.OAuthClient `json:"clients"`
}

func (h handlers) listApps(ctx context.Context, _ *natsx.Request, c *auth.Claims) (any, error) {
	apps, err := h.svc.ListApps(ctx, c)
	if err != nil {
		return nil, err
	}
	return appList{Apps: apps}, nil
}

func (h handlers) deleteApp(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	return done(h.svc.RevokeApp(ctx, c, r.Param("clientId")))
}

func (h handlers) listClients(ctx context.Context, _ *natsx.Request, c *auth.Claims) (any, error) {
	cs, err := h.svc.ListClients(ctx, c)
	if err != nil {
		return nil, err
	}
	return clientList{Clients: cs}, nil
}

// putClient answers 201 with the secret when it created the client, 200
// without one when it updated it.
func (h handlers) putClient(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	in, err := decode[identity.ClientInput](r)
	if err != nil {
		return nil, err
	}
	res, created, err := h.svc.PutClient(ctx, c, r.Param("clientId"), in)
	if err != nil {
		return nil, err
	}
	if created {
		return natsx.Created(res), nil
	}
	return res, nil
}
