package natsrpc_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// The ledger acts only for a principal it can verify: a forged, expired
// or wrongly signed one, the wrong service, or a body naming another
// tenant are refused, and no lock changes. The periods service's own
// principal locks its tenant's month.
func TestInternalCommandsNeedTheirSignedCaller(t *testing.T) {
	t.Parallel()
	h := newDRHarness(t)
	_, other := drClaims()
	// Both tenants exist in the ledger.
	h.ok(t, ledgerv1.SubjectAccountsList, drRq{}, 200, nil)
	h.ok(t, ledgerv1.SubjectAccountsList, drRq{as: other}, 200, nil)
	count := func(sql string, args ...any) int {
		t.Helper()
		return testkit.Count(t, h.rpc.Pool, sql, args...)
	}
	locks := func() int { return count("SELECT count(*) FROM ledger.period_locks") }
	cmd := ledgerv1.SetPeriodLock{Period: "2025-03", Status: ledgerv1.PeriodSoftLocked, LockedBy: "ops"}
	body, _ := json.Marshal(cmd)

	// send publishes the command from the harness's connection (which may
	// publish anywhere) with the principal headers given.
	send := func(name string, claims []byte, id string, deadline time.Time, tamper func(nats.Header)) (int, string) {
		t.Helper()
		sig, err := h.rpc.Bus.Key(t, name).Sign(claims, id, deadline)
		if err != nil {
			t.Fatal(err)
		}
		hdr := nats.Header{natsx.HdrClaims: {string(claims)}, natsx.HdrClaimsSig: {sig}, natsx.HdrRequestID: {id}}
		if tamper != nil {
			tamper(hdr)
		}
		resp, err := h.rpc.NC.RequestMsg(&nats.Msg{Subject: ledgerv1.SubjectSetPeriodLock, Header: hdr, Data: body}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		code := resp.Header.Get(natsx.HdrErrorCode)
		if code == "" {
			return http.StatusOK, ""
		}
		return errs.Status(code), code
	}
	own := []byte(`{"tenant_id":"` + h.tenant + `","scopes":null,"service":"periods"}`)
	stranger, err := natsauth.NewKey("periods")
	if err != nil {
		t.Fatal(err)
	}
	forge := func(hdr nats.Header) {
		hdr.Set(natsx.HdrClaims, `{"tenant_id":"`+other.TenantID+`","scopes":null,"service":"periods"}`)
	}
	refused := []struct {
		name   string
		status int
		code   string
		send   func() (int, string)
	}{
		{"forged: claims changed after signing", 401, errs.Unauthenticated, func() (int, string) { return send("periods", own, "r1", time.Time{}, forge) }},
		{"expired", 401, errs.Unauthenticated, func() (int, string) { return send("periods", own, "r2", time.Now().Add(-time.Minute), nil) }},
		{"signed by a key nobody trusts", 401, errs.Unauthenticated, func() (int, string) {
			sig, _ := stranger.Sign(own, "r3", time.Time{})
			return send("periods", own, "r3", time.Time{}, func(h nats.Header) { h.Set(natsx.HdrClaimsSig, sig) })
		}},
		{"no principal", 401, errs.Unauthenticated, func() (int, string) {
			return send("periods", own, "r4", time.Time{}, func(h nats.Header) { h.Del(natsx.HdrClaims); h.Del(natsx.HdrClaimsSig) })
		}},
		{"the bank's own principal", 403, errs.Forbidden, func() (int, string) {
			return send("bank", []byte(`{"tenant_id":"`+h.tenant+`","scopes":null,"service":"bank"}`), "r5", time.Time{}, nil)
		}},
		{"a caller's principal from the gateway", 403, errs.Forbidden, func() (int, string) {
			c, _ := json.Marshal(h.claims)
			return send(natsauth.Gateway, c, "r6", time.Time{}, nil)
		}},
	}
	for _, tt := range refused {
		if status, code := tt.send(); status != tt.status || code != tt.code {
			t.Errorf("%s: %d %s, want %d %s", tt.name, status, code, tt.status, tt.code)
		}
	}
	// A body naming another tenant acts for nobody.
	h.rpc.Fails(ledgerv1.SubjectSetPeriodLock, testkit.Rq{Service: "periods", As: &auth.Claims{TenantID: h.tenant},
		Body: ledgerv1.SetPeriodLock{TenantID: other.TenantID, Period: "2025-03", Status: ledgerv1.PeriodSoftLocked}}, 400, errs.InvalidInput)
	if n := locks(); n != 0 {
		t.Fatalf("%d period locks after refused commands, want none", n)
	}

	// The periods service's own principal locks the month of its tenant only.
	if status, code := send("periods", own, "r7", time.Time{}, nil); status != 200 {
		t.Fatalf("signed by periods: %d %s", status, code)
	}
	if n := count("SELECT count(*) FROM ledger.period_locks WHERE tenant_id = $1 AND period = '2025-03'", h.tenant); n != 1 || locks() != 1 {
		t.Fatalf("locks of the tenant %d, all %d; want 1 and 1", n, locks())
	}
}
