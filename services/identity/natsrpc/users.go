package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

type userList struct {
	Users []identity.User `json:"users"`
}

func (h handlers) listUsers(ctx context.Context, _ *natsx.Request, c *auth.Claims) (any, error) {
	us, err := h.svc.ListUsers(ctx, c)
	if err != nil {
		return nil, err
	}
	return userList{Users: us}, nil
}

func (h handlers) inviteUser(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	in, err := decode[identity.InviteInput](r)
	if err != nil {
		return nil, err
	}
	inv, err := h.svc.InviteUser(ctx, c, in)
	if err != nil {
		return nil, err
	}
	return natsx.Created(inv), nil
}

func (h handlers) updateUser(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	in, err := decode[identity.UserPatch](r)
	if err != nil {
		return nil, err
	}
	return h.svc.UpdateUser(ctx, c, r.Param("id"), in)
}

func (h handlers) deleteUser(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	return done(h.svc.DeleteUser(ctx, c, r.Param("id")))
}
