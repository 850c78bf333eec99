package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

type keyList struct {
	APIKeys []identity.APIKey `json:"api_keys"`
}

func (h handlers) listKeys(ctx context.Context, _ *natsx.Request, c *auth.Claims) (any, error) {
	keys, err := h.svc.ListKeys(ctx, c)
	if err != nil {
		return nil, err
	}
	return keyList{APIKeys: keys}, nil
}

func (h handlers) createKey(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	in, err := decode[identity.CreateKeyInput](r)
	if err != nil {
		return nil, err
	}
	k, err := h.svc.CreateKey(ctx, c, in)
	if err != nil {
		return nil, err
	}
	return natsx.Created(k), nil
}

func (h handlers) deleteKey(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	return done(h.svc.RevokeKey(ctx, c, r.Param("id")))
}
