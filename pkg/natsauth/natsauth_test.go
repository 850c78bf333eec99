package natsauth_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// NATS admits only the platform's NKEYs: an anonymous connection and a key
// it does not know are refused.
func TestNATSRefusesStrangers(t *testing.T) {
	t.Parallel()
	bus := testkit.NewBus(t)
	if nc, err := nats.Connect(bus.URL, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("an anonymous connection was admitted")
	} else if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("anonymous: %v, want an authorization violation", err)
	}
	foreign, err := natsauth.NewKey("ledger")
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := foreign.Connect(bus.URL, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a foreign NKEY was admitted")
	}
	nc, err := bus.Keys["ledger"].Connect(bus.URL)
	if err != nil {
		t.Fatalf("the ledger's own key: %v", err)
	}
	nc.Close()
}

// violations connects as name and collects the permission violations the
// server reports (they arrive asynchronously, not as a publish's error).
func violations(t *testing.T, bus *testkit.Bus, name string) (*nats.Conn, chan error) {
	t.Helper()
	errc := make(chan error, 16)
	nc, err := bus.Keys[name].Connect(bus.URL, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errc <- err }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, errc
}

func wantViolation(t *testing.T, errc chan error, what string) {
	t.Helper()
	select {
	case err := <-errc:
		if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), what) {
			t.Fatalf("got %v, want a permission violation for %s", err, what)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no permission violation for %s", what)
	}
}

// A service's key is confined to its own subjects and the ones it calls:
// the bank's key cannot ask the ledger to lock a period, the periods
// service's can; nobody reads another service's requests or replies; the
// gateway cannot send internal commands.
func TestPermissions(t *testing.T) {
	t.Parallel()
	bus := testkit.NewBus(t)
	received := make(chan *nats.Msg, 4)
	ledger, _ := violations(t, bus, "ledger")
	if _, err := ledger.Subscribe(ledgerv1.SubjectSetPeriodLock, func(m *nats.Msg) { received <- m; _ = m.Respond([]byte("{}")) }); err != nil {
		t.Fatal(err)
	}
	if err := ledger.Flush(); err != nil {
		t.Fatal(err)
	}

	bank, bankErrs := violations(t, bus, "bank")
	if _, err := bank.Request(ledgerv1.SubjectSetPeriodLock, []byte(`{}`), time.Second); err == nil {
		t.Fatal("the bank's key locked a period")
	}
	wantViolation(t, bankErrs, `Publish to "`+ledgerv1.SubjectSetPeriodLock+`"`)
	gateway, gatewayErrs := violations(t, bus, natsauth.Gateway)
	if _, err := gateway.Request(ledgerv1.SubjectSetPeriodLock, []byte(`{}`), time.Second); err == nil {
		t.Fatal("the gateway's key sent an internal command")
	}
	wantViolation(t, gatewayErrs, `Publish to "`+ledgerv1.SubjectSetPeriodLock+`"`)
	if len(received) != 0 {
		t.Fatalf("the ledger received %d refused commands", len(received))
	}

	periods, _ := violations(t, bus, "periods")
	if _, err := periods.Request(ledgerv1.SubjectSetPeriodLock, []byte(`{}`), 5*time.Second); err != nil {
		t.Fatalf("the periods service's key: %v", err)
	}

	// Subscribing to the ledger's subjects or to the gateway's replies.
	if _, err := bank.SubscribeSync("ledger.v1.>"); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, bankErrs, `Subscription to "ledger.v1.>"`)
	if _, err := bank.SubscribeSync(natsauth.InboxPrefix(natsauth.Gateway) + ".>"); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, bankErrs, `Subscription to "_INBOX.gateway.>"`)
	// The JetStream API of another service's stream: deleting one it
	// consumes, or reading one it does not consume through a consumer of
	// its own.
	for _, api := range []string{"$JS.API.STREAM.DELETE." + ledgerv1.StreamEvents, "$JS.API.CONSUMER.CREATE." + identityv1.StreamEvents + ".spy"} {
		if _, err := bank.Request(api, []byte(`{}`), time.Second); err == nil {
			t.Fatalf("the bank's key used %s", api)
		}
		wantViolation(t, bankErrs, `Publish to "`+api+`"`)
	}
	// Publishing another service's events.
	if err := bank.Publish(ledgerv1.EventIntentPosted, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, bankErrs, `Publish to "`+ledgerv1.EventIntentPosted+`"`)
}

// Every service's table entry lets it serve its own subjects and no other
// service's.
func TestTableServesOwnSubjectsOnly(t *testing.T) {
	for _, name := range natsauth.Names() {
		p := natsauth.Table[name]
		for _, other := range natsauth.Names() {
			if other == natsauth.Gateway {
				continue
			}
			serves := false
			for _, s := range p.Subscribe {
				if s == other+".v1.>" {
					serves = true
				}
			}
			if serves != (other == name) {
				t.Errorf("%s subscribes to %s.v1.>: %v", name, other, serves)
			}
		}
	}
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	ks, err := natsauth.Generate()
	if err != nil {
		t.Fatal(err)
	}
	trust, err := natsauth.ParseTrust(ks.Signers())
	if err != nil {
		t.Fatal(err)
	}
	claims := []byte(`{"tenant_id":"t"}`)
	now := time.Now()
	sig, err := ks["ledger"].Sign(claims, "r", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if who, err := trust.Verify(claims, "r", sig, now); err != nil || who != "ledger" {
		t.Fatalf("verify = %q, %v", who, err)
	}
	// The expiry is capped: a far deadline is valid for MaxLifetime only.
	far, _ := ks[natsauth.Gateway].Sign(claims, "r", now.Add(time.Hour))
	if _, err := trust.Verify(claims, "r", far, now.Add(natsauth.MaxLifetime+time.Minute)); !errors.Is(err, natsauth.ErrExpired) {
		t.Fatalf("after MaxLifetime: %v", err)
	}
	tests := []struct {
		name   string
		claims string
		id     string
		sig    string
		want   error
	}{
		{"missing", `{"tenant_id":"t"}`, "r", "", natsauth.ErrMissing},
		{"other claims", `{"tenant_id":"u"}`, "r", sig, natsauth.ErrForged},
		{"other request", `{"tenant_id":"t"}`, "s", sig, natsauth.ErrForged},
		{"unknown signer", `{"tenant_id":"t"}`, "r", "nobody" + sig[len("ledger"):], natsauth.ErrSigner},
		{"other signer's name", `{"tenant_id":"t"}`, "r", "bank" + sig[len("ledger"):], natsauth.ErrForged},
		{"malformed", `{"tenant_id":"t"}`, "r", "ledger.soon.sig", natsauth.ErrInvalid},
	}
	for _, tt := range tests {
		if _, err := trust.Verify([]byte(tt.claims), tt.id, tt.sig, now); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	for _, bad := range []string{"", "ledger=" + ks["ledger"].Public(), "gateway=SUxyz", "gateway"} {
		if _, err := natsauth.ParseTrust(bad); err == nil {
			t.Errorf("ParseTrust(%q) accepted", bad)
		}
	}
}

// make run keeps its keys: created 0600 once, the same on the next start.
func TestLoadOrCreate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "keys")
	first, err := natsauth.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := natsauth.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if first.Signers() != again.Signers() || len(first) != len(natsauth.Table) {
		t.Fatalf("keys changed between starts: %s / %s", first.Signers(), again.Signers())
	}
	fi, err := os.Stat(filepath.Join(dir, "ledger.nk"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ledger.nk: %v %v", fi.Mode(), err)
	}
}
