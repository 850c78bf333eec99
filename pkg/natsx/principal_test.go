package natsx_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/rpc"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// seen is what an endpoint saw of its caller.
type seen struct {
	Caller  string `json:"caller"`
	Tenant  string `json:"tenant"`
	Service string `json:"service"`
	KeyID   string `json:"key_id"`
}

// serve mounts endpoint e on subject in a server logged in as name, with
// the bus's trusted signers; calls counts the times e ran.
func serve(t *testing.T, bus *testkit.Bus, name, subject string, e endpoint.Endpoint, mw ...endpoint.Middleware) {
	t.Helper()
	srv, err := natsx.NewServer(bus.Connect(t, name), natsx.ServerConfig{Name: name, Workers: 2, Logger: testkit.QuietLog(), Trust: bus.Trust})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Mount(natsx.Route{Subject: subject, Endpoint: e}, mw...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- srv.Serve(ctx, func() { close(ready) }) }()
	t.Cleanup(func() { cancel(); <-done })
	<-ready
}

func observe(calls *atomic.Int32) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		calls.Add(1)
		s := seen{Caller: natsx.Caller(ctx)}
		if c := natsx.Claims(ctx); c != nil {
			s.Tenant, s.Service, s.KeyID = c.TenantID, c.Service, c.KeyID
		}
		return s, nil
	}
}

// send publishes a request with exactly the headers given, as anything
// that reaches NATS could.
func send(t *testing.T, nc *nats.Conn, subject string, h nats.Header) (*nats.Msg, seen) {
	t.Helper()
	msg := &nats.Msg{Subject: subject, Header: h}
	resp, err := nc.RequestMsg(msg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var s seen
	if resp.Header.Get(natsx.HdrErrorCode) == "" {
		if err := json.Unmarshal(resp.Data, &s); err != nil {
			t.Fatal(err)
		}
	}
	return resp, s
}

// Every request must carry a principal signed by a trusted key, for its
// request id and not expired; a service's key signs only a principal of
// that service. Anything else is UNAUTHENTICATED and the endpoint never
// runs.
func TestSignedPrincipal(t *testing.T) {
	t.Parallel()
	bus := testkit.NewBus(t)
	const subject = "ledger.v1.journal.list"
	var calls atomic.Int32
	serve(t, bus, "ledger", subject, observe(&calls))

	gw := bus.Keys[natsauth.Gateway]
	claims := []byte(`{"tenant_id":"t-1","key_id":"k-1","scopes":["journal:read"]}`)
	sign := func(k *natsauth.Key, claims []byte, id string, dl time.Time) nats.Header {
		sig, err := k.Sign(claims, id, dl)
		if err != nil {
			t.Fatal(err)
		}
		return nats.Header{natsx.HdrClaims: {string(claims)}, natsx.HdrClaimsSig: {sig}, natsx.HdrRequestID: {id}}
	}
	stranger, err := natsauth.NewKey(natsauth.Gateway) // a key named gateway that nobody trusts
	if err != nil {
		t.Fatal(err)
	}

	// The gateway's signature is accepted, with its claims.
	resp, got := send(t, bus.NC, subject, sign(gw, claims, "r-1", time.Now().Add(time.Minute)))
	if code := resp.Header.Get(natsx.HdrErrorCode); code != "" || got != (seen{Caller: "gateway", Tenant: "t-1", KeyID: "k-1"}) {
		t.Fatalf("signed by the gateway: %s %+v", code, got)
	}

	forged := sign(gw, claims, "r-2", time.Time{})
	forged.Set(natsx.HdrClaims, `{"tenant_id":"t-2","key_id":"k-1","scopes":["journal:read"]}`)
	otherID := sign(gw, claims, "r-3", time.Time{})
	otherID.Set(natsx.HdrRequestID, "r-4")
	unsigned := nats.Header{natsx.HdrClaims: {string(claims)}}
	unknownSigner := sign(gw, claims, "r-5", time.Time{})
	unknownSigner.Set(natsx.HdrClaimsSig, "mallory"+unknownSigner.Get(natsx.HdrClaimsSig)[len("gateway"):])
	cases := map[string]nats.Header{
		"no principal":                 {},
		"unsigned claims":              unsigned,
		"forged claims":                forged,
		"signature of another request": otherID,
		"expired":                      sign(gw, claims, "r-6", time.Now().Add(-time.Minute)),
		"signed by an untrusted key":   sign(stranger, claims, "r-7", time.Time{}),
		"unknown signer":               unknownSigner,
		"malformed signature":          {natsx.HdrClaims: {string(claims)}, natsx.HdrClaimsSig: {"gateway.x.y"}},
		// A service's key cannot mint a user, scopes or the operator, nor
		// pass as the gateway or another service.
		"service key with scopes": sign(bus.Keys["bank"], []byte(`{"tenant_id":"t-1","scopes":["admin"],"service":"bank"}`), "r-8", time.Time{}),
		"service key as gateway":  sign(bus.Keys["bank"], []byte(`{"tenant_id":"t-1","operator":true,"scopes":null}`), "r-9", time.Time{}),
		"service key as another":  sign(bus.Keys["bank"], []byte(`{"tenant_id":"t-1","scopes":null,"service":"periods"}`), "r-10", time.Time{}),
	}
	for name, h := range cases {
		resp, _ := send(t, bus.NC, subject, h)
		if code := resp.Header.Get(natsx.HdrErrorCode); code != errs.Unauthenticated {
			t.Errorf("%s: code %q, want %s", name, code, errs.Unauthenticated)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("the endpoint ran %d times, want once (the signed request only)", calls.Load())
	}
}

// A service forwards the principal it serves unchanged; on its own it
// signs a principal naming itself and the tenant it acts for. Callers of
// a route are checked on the verified signer.
func TestForwardedAndServicePrincipals(t *testing.T) {
	t.Parallel()
	bus := testkit.NewBus(t)
	var tenantCalls, lockCalls atomic.Int32
	serve(t, bus, "identity", "identity.v1.tenant.get", observe(&tenantCalls))
	serve(t, bus, "ledger", "ledger.v1.periods.set_lock", observe(&lockCalls), natsx.RequireCaller("periods"))

	// periods, serving a gateway request, calls identity with the caller's
	// principal and the ledger on its own for a tenant.
	periods := &natsx.Client{NC: bus.Connect(t, "periods"), Signer: bus.Keys["periods"], Timeout: 5 * time.Second}
	type both struct{ Forwarded, Own seen }
	serve(t, bus, "periods", "periods.v1.list", func(ctx context.Context, _ any) (any, error) {
		var out both
		if err := periods.Call(ctx, "identity.v1.tenant.get", nil, nil, &out.Forwarded); err != nil {
			return nil, err
		}
		err := periods.Call(rpc.ForTenant(ctx, "t-9"), "ledger.v1.periods.set_lock", nil, nil, &out.Own)
		return out, err
	})
	gateway := bus.Client(t, natsauth.Gateway)
	ctx := natsx.WithRequestID(auth.WithClaims(context.Background(), &auth.Claims{TenantID: "t-1", KeyID: "k-1"}), "req-1")
	var got both
	if err := gateway.Call(ctx, "periods.v1.list", nil, nil, &got); err != nil {
		t.Fatal(err)
	}
	want := both{Forwarded: seen{Caller: "gateway", Tenant: "t-1", KeyID: "k-1"}, Own: seen{Caller: "periods", Tenant: "t-9", Service: "periods"}}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}

	// The gateway's principal is not the periods service's.
	err := gateway.Call(ctx, "ledger.v1.periods.set_lock", nil, nil, nil)
	if !errs.Is(err, errs.Forbidden) || lockCalls.Load() != 1 {
		t.Fatalf("set_lock as the gateway: %v, %d calls", err, lockCalls.Load())
	}
	// A client without a key sends what every service refuses.
	err = (&natsx.Client{NC: bus.NC}).Call(ctx, "identity.v1.tenant.get", nil, nil, nil)
	if !errs.Is(err, errs.Unauthenticated) || tenantCalls.Load() != 1 {
		t.Fatalf("unsigned: %v, %d calls", err, tenantCalls.Load())
	}
}
