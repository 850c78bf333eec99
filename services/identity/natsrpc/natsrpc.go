// Package natsrpc serves the identity service's NATS subjects (the
// contracts/identityv1 request/reply surface) and consumes the gateway's
// audit records from JetStream. It decodes requests, takes the principal
// from the context and leaves every decision to identity.Service.
package natsrpc

import (
	"context"
	"fmt"

	"github.com/go-kit/kit/endpoint"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Register serves every identity subject on s.
func Register(s *natsx.Server, svc *identity.Service) error {
	for subject, e := range Endpoints(svc) {
		if err := s.Handle(subject, e); err != nil {
			return fmt.Errorf("natsrpc.Register: %w", err)
		}
	}
	return nil
}

// Endpoints returns the endpoint of every request/reply subject of
// identityv1. Login, forgot-password, setup-password and the gateway's
// verify need no principal; every other subject answers UNAUTHENTICATED
// without one.
func Endpoints(svc *identity.Service) map[string]endpoint.Endpoint {
	h := handlers{svc: svc}
	return map[string]endpoint.Endpoint{
		identityv1.SubjectLogin:          public(h.login),
		identityv1.SubjectForgotPassword: public(h.forgotPassword),
		identityv1.SubjectSetupPassword:  public(h.setupPassword),
		identityv1.SubjectVerify:         public(h.verify),
		identityv1.SubjectLogout:         authenticated(h.logout),
		identityv1.SubjectMe:             authenticated(h.me),
		identityv1.SubjectVerifyToken:    authenticated(h.verifyToken),

		identityv1.SubjectKeysList:   authenticated(h.listKeys),
		identityv1.SubjectKeysCreate: authenticated(h.createKey),
		identityv1.SubjectKeysDelete: authenticated(h.deleteKey),

		identityv1.SubjectUsersList:   authenticated(h.listUsers),
		identityv1.SubjectUsersInvite: authenticated(h.inviteUser),
		identityv1.SubjectUsersUpdate: authenticated(h.updateUser),
		identityv1.SubjectUsersDelete: authenticated(h.deleteUser),

		identityv1.SubjectTenantGet:    authenticated(h.tenant),
		identityv1.SubjectTenantUpdate: authenticated(h.updateTenant),

		identityv1.SubjectOAuthAppsList:    authenticated(h.listApps),
		identityv1.SubjectOAuthAppsDelete:  authenticated(h.deleteApp),
		identityv1.SubjectOAuthClientsList: authenticated(h.listClients),
		identityv1.SubjectOAuthClientsPut:  authenticated(h.putClient),

		identityv1.SubjectAdminTenantsList:   authenticated(h.listTenants),
		identityv1.SubjectAdminTenantsCreate: authenticated(h.createTenant),
		identityv1.SubjectAdminTenantsDelete: authenticated(h.deleteTenant),

		identityv1.SubjectAuditList: authenticated(h.listAudit),
	}
}

type handlers struct {
	svc *identity.Service
}

type (
	publicFunc func(context.Context, *natsx.Request) (any, error)
	claimsFunc func(context.Context, *natsx.Request, *auth.Claims) (any, error)
)

// public adapts a handler that needs no principal.
func public(f publicFunc) endpoint.Endpoint {
	return func(ctx context.Context, req any) (any, error) {
		r, ok := req.(*natsx.Request)
		if !ok {
			return nil, fmt.Errorf("natsrpc: unexpected request type %T", req)
		}
		return f(ctx, r)
	}
}

// authenticated adapts a handler that acts for the caller in the claims the
// gateway attached.
func authenticated(f claimsFunc) endpoint.Endpoint {
	return public(func(ctx context.Context, r *natsx.Request) (any, error) {
		c := auth.FromContext(ctx)
		if c == nil || c.TenantID == "" {
			return nil, errs.E(errs.Unauthenticated, "authentication required")
		}
		return f(ctx, r, c)
	})
}

// decode strictly decodes the request body into a T.
func decode[T any](r *natsx.Request) (T, error) {
	var v T
	err := natsx.Decode(r.Body, &v)
	return v, err
}

// okBody is the {"ok": true} of actions without a result.
type okBody struct {
	OK bool `json:"ok"`
}

var ok = okBody{OK: true}

// done answers {"ok": true} unless err.
func done(err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return ok, nil
}
