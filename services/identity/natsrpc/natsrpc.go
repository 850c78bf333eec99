// Package natsrpc is the identity service's route table (the
// contracts/identityv1 request/reply surface) and its consumer of the
// gateway's audit records. Each route decodes a typed request and calls a
// method of identity.Service, which makes every decision.
package natsrpc

import (
	"context"
	"net/url"

	"github.com/go-kit/kit/endpoint"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/identity"
)

// Routes serves every request/reply subject of identityv1. Login,
// forgot-password, setup-password and the gateway's verify come before
// authentication (Internal: no tenant, and only the gateway may ask);
// every other route acts for the caller the gateway authenticated.
func Routes(svc *identity.Service) []natsx.Route {
	gateway := []string{natsauth.Gateway}
	return []natsx.Route{
		{Subject: identityv1.SubjectLogin, Decode: natsx.JSON[identity.LoginInput], Endpoint: natsx.Typed(svc.Login), Internal: true, Callers: gateway},
		{Subject: identityv1.SubjectForgotPassword, Decode: natsx.JSON[identity.ForgotPasswordInput], Endpoint: natsx.Typed(answered(svc.ForgotPassword)), Internal: true, Callers: gateway},
		{Subject: identityv1.SubjectSetupPassword, Decode: natsx.JSON[identity.SetupPasswordInput], Endpoint: natsx.Typed(answered(svc.SetupPassword)), Internal: true, Callers: gateway},
		{Subject: identityv1.SubjectVerify, Decode: natsx.JSON[identityv1.VerifyRequest], Internal: true, Callers: gateway,
			Endpoint: natsx.Typed(func(ctx context.Context, in identityv1.VerifyRequest) (*auth.Claims, error) {
				return svc.Verify(ctx, in.Token)
			})},

		{Subject: identityv1.SubjectLogout, Decode: natsx.Nothing, Endpoint: caller(done(func(ctx context.Context, c *auth.Claims, _ struct{}) error { return svc.Logout(ctx, c) }))},
		{Subject: identityv1.SubjectMe, Decode: natsx.Nothing, Endpoint: caller(nothing(svc.Me))},
		{Subject: identityv1.SubjectVerifyToken, Decode: natsx.JSON[identity.VerifyTokenInput], Endpoint: caller(svc.VerifyToken)},

		{Subject: identityv1.SubjectKeysList, Decode: natsx.Nothing, Endpoint: caller(listed(svc.ListKeys, func(ks []identity.APIKey) keyList { return keyList{ks} }))},
		{Subject: identityv1.SubjectKeysCreate, Decode: natsx.JSON[identity.CreateKeyInput], Endpoint: caller(created(svc.CreateKey))},
		{Subject: identityv1.SubjectKeysDelete, Decode: natsx.PathParam("id"), Endpoint: caller(done(svc.RevokeKey))},

		{Subject: identityv1.SubjectUsersList, Decode: natsx.Nothing, Endpoint: caller(listed(svc.ListUsers, func(us []identity.User) userList { return userList{us} }))},
		{Subject: identityv1.SubjectUsersInvite, Decode: natsx.JSON[identity.InviteInput], Endpoint: caller(created(svc.InviteUser))},
		{Subject: identityv1.SubjectUsersUpdate, Decode: paramAnd[identity.UserPatch]("id"), Endpoint: caller(func(ctx context.Context, c *auth.Claims, in withParam[identity.UserPatch]) (identity.User, error) {
			return svc.UpdateUser(ctx, c, in.Param, in.Body)
		})},
		{Subject: identityv1.SubjectUsersDelete, Decode: natsx.PathParam("id"), Endpoint: caller(done(svc.DeleteUser))},

		{Subject: identityv1.SubjectTenantGet, Decode: natsx.Nothing, Endpoint: caller(nothing(svc.Tenant))},
		{Subject: identityv1.SubjectTenantUpdate, Decode: natsx.JSON[identity.TenantPatch], Endpoint: caller(svc.UpdateTenant)},

		{Subject: identityv1.SubjectOAuthAppsList, Decode: natsx.Nothing, Endpoint: caller(listed(svc.ListApps, func(as []identity.App) appList { return appList{as} }))},
		{Subject: identityv1.SubjectOAuthAppsDelete, Decode: natsx.PathParam("clientId"), Endpoint: caller(done(svc.RevokeApp))},
		{Subject: identityv1.SubjectOAuthClientsList, Decode: natsx.Nothing, Endpoint: caller(listed(svc.ListClients, func(cs []identity.OAuthClient) clientList { return clientList{cs} }))},
		{Subject: identityv1.SubjectOAuthClientsPut, Decode: paramAnd[identity.ClientInput]("clientId"), Endpoint: caller(putClient(svc))},

		{Subject: identityv1.SubjectAdminTenantsList, Decode: pageQuery, Endpoint: caller(svc.ListTenants)},
		{Subject: identityv1.SubjectAdminTenantsCreate, Decode: natsx.JSON[identity.TenantPatch], Endpoint: caller(created(svc.CreateTenant))},
		{Subject: identityv1.SubjectAdminTenantsDelete, Decode: natsx.PathParam("id"), Endpoint: caller(done(svc.DeactivateTenant))},

		{Subject: identityv1.SubjectAuditList, Decode: auditQuery, Endpoint: caller(svc.ListAudit)},
	}
}

// The service's methods act for a caller: f(ctx, claims, request).
type callerFunc[Req, Resp any] func(context.Context, *auth.Claims, Req) (Resp, error)

// caller is the endpoint of a method acting for the caller the gateway
// authenticated (the daemon's RequireTenant refused requests without one).
func caller[Req, Resp any](f callerFunc[Req, Resp]) endpoint.Endpoint {
	return natsx.Typed(func(ctx context.Context, in Req) (Resp, error) { return f(ctx, natsx.Claims(ctx), in) })
}

// nothing adapts a method without input to the struct{} of natsx.Nothing.
func nothing[Resp any](f func(context.Context, *auth.Claims) (Resp, error)) callerFunc[struct{}, Resp] {
	return func(ctx context.Context, c *auth.Claims, _ struct{}) (Resp, error) { return f(ctx, c) }
}

// okBody is the {"ok": true} of actions without a result.
type okBody struct {
	OK bool `json:"ok"`
}

// done answers {"ok": true} for a caller's method without a result.
func done[Req any](f func(context.Context, *auth.Claims, Req) error) callerFunc[Req, okBody] {
	return func(ctx context.Context, c *auth.Claims, in Req) (okBody, error) {
		return okBody{OK: true}, f(ctx, c, in)
	}
}

// answered answers {"ok": true} for a public method without a result.
func answered[Req any](f func(context.Context, Req) error) func(context.Context, Req) (okBody, error) {
	return func(ctx context.Context, in Req) (okBody, error) { return okBody{OK: true}, f(ctx, in) }
}

// created answers 201 with what f created.
func created[Req, Resp any](f callerFunc[Req, Resp]) callerFunc[Req, *natsx.Response] {
	return func(ctx context.Context, c *auth.Claims, in Req) (*natsx.Response, error) {
		v, err := f(ctx, c, in)
		if err != nil {
			return nil, err
		}
		return natsx.Created(v), nil
	}
}

// listed wraps the list f returns in its named field ({"api_keys": [...]}).
func listed[T, L any](f func(context.Context, *auth.Claims) ([]T, error), wrap func([]T) L) callerFunc[struct{}, L] {
	return func(ctx context.Context, c *auth.Claims, _ struct{}) (L, error) {
		vs, err := f(ctx, c)
		return wrap(vs), err
	}
}

type (
	keyList struct {
		APIKeys []identity.APIKey `json:"api_keys"`
	}
	userList struct {
		Users []identity.User `json:"users"`
	}
	appList struct {
		Apps []identity.App `json:"apps"`
	}
	clientList struct {
		Clients []identity.OAuthClient `json:"clients"`
	}
)

// putClient answers 201 with the secret when it created the client, 200
// without one when it updated it.
func putClient(svc *identity.Service) callerFunc[withParam[identity.ClientInput], any] {
	return func(ctx context.Context, c *auth.Claims, in withParam[identity.ClientInput]) (any, error) {
		res, isNew, err := svc.PutClient(ctx, c, in.Param, in.Body)
		if err != nil || !isNew {
			return res, err
		}
		return natsx.Created(res), nil
	}
}

// withParam is a request with a path parameter and a JSON body.
type withParam[T any] struct {
	Param string
	Body  T
}

// paramAnd decodes the path parameter name and the body as a T.
func paramAnd[T any](name string) natsx.DecodeFunc {
	return func(_ context.Context, r *natsx.Request) (any, error) {
		in := withParam[T]{Param: r.Param(name)}
		return in, natsx.Decode(r.Body, &in.Body)
	}
}

func pageQuery(_ context.Context, r *natsx.Request) (any, error) { return page(r.Query), nil }

func auditQuery(_ context.Context, r *natsx.Request) (any, error) {
	q := r.Query
	return identity.AuditQuery{From: q.Get("from"), To: q.Get("to"), Status: q.Get("status"), Actor: q.Get("actor"), PageQuery: page(q)}, nil
}

func page(q url.Values) identity.PageQuery {
	return identity.PageQuery{Limit: q.Get("limit"), Offset: q.Get("offset")}
}
