package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

func (h handlers) login(ctx context.Context, r *natsx.Request) (any, error) {
	in, err := decode[identity.LoginInput](r)
	if err != nil {
		return nil, err
	}
	return h.svc.Login(ctx, in)
}

func (h handlers) forgotPassword(ctx context.Context, r *natsx.Request) (any, error) {
	in, err := decode[identity.ForgotPasswordInput](r)
	if err != nil {
		return nil, err
	}
	return done(h.svc.ForgotPassword(ctx, in))
}

func (h handlers) setupPassword(ctx context.Context, r *natsx.Request) (any, error) {
	in, err := decode[identity.SetupPasswordInput](r)
	if err != nil {
		return nil, err
	}
	return done(h.svc.SetupPassword(ctx, in))
}

// verify answers the gateway with the caller's auth.Claims.
func (h handlers) verify(ctx context.Context, r *natsx.Request) (any, error) {
	in, err := decode[identityv1.VerifyRequest](r)
	if err != nil {
		return nil, err
	}
	return h.svc.Verify(ctx, in.Token)
}

func (h handlers) logout(ctx context.Context, _ *natsx.Request, c *auth.Claims) (any, error) {
	return done(h.svc.Logout(ctx, c))
}

func (h handlers) me(ctx context.Context, _ *natsx.Request, c *auth.Claims) (any, error) {
	return h.svc.Me(ctx, c)
}

func (h handlers) verifyToken(ctx context.Context, r *natsx.Request, c *auth.Claims) (any, error) {
	in, err := decode[identity.VerifyTokenInput](r)
	if err != nil {
		return nil, err
	}
	return h.svc.VerifyToken(ctx, c, in)
}
