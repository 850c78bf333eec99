package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/nats-io/nats.go/micro"

	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

func TestHTTP(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	if err := run([]string{"http", ok.URL}, nil); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"http", bad.URL}, nil); err == nil {
		t.Fatal("503 reported healthy")
	}
}

func TestNATS(t *testing.T) {
	bus := testkit.NewBus(t)
	url := bus.URL
	nc := bus.Connect(t, "identity")
	svc, err := micro.AddService(nc, micro.Config{Name: "identity", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	// The service's subscriptions reach the server asynchronously; without a
	// flush a probe on another connection can arrive first (seen in CI).
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	env := func(name string) func(string) string {
		e := bus.Env(t, name)
		return func(k string) string { return e[k] }
	}
	if err := run([]string{"nats", url, "identity"}, env("identity")); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"nats", url, "ledger"}, env("ledger")); err == nil {
		t.Fatal("a missing service reported healthy")
	}
	// NATS admits no one without a key.
	if err := run([]string{"nats", url, "identity"}, func(string) string { return "" }); err == nil {
		t.Fatal("a probe without a key reported healthy")
	}
	if err := run([]string{"bogus"}, nil); err == nil {
		t.Fatal("bad usage accepted")
	}
}

// TestLive: the probe finds this host's instance among the replicas, fails
// when only others answer, and passes when NATS itself is unreachable.
func TestLive(t *testing.T) {
	bus := testkit.NewBus(t)
	url, nc := bus.URL, bus.NC
	env := bus.Env(t, "identity")
	getenv := func(k string) string { return env[k] }
	other, err := micro.AddService(nc, micro.Config{Name: "identity", Version: "1.0.0", Metadata: map[string]string{natsx.HostMetadata: "identity-other-pod"}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	if err := checkLive(url, "identity", "identity-this-pod", getenv); err == nil {
		t.Fatal("another pod's instance counted as this pod's")
	}
	if _, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "identity", Trust: bus.Trust}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"live", url, "identity"}, getenv); err != nil {
		t.Fatalf("this host's instance not found: %v", err)
	}
	if err := checkLive(url, "ledger", host, getenv); err == nil {
		t.Fatal("a missing service reported alive")
	}
	closed := "nats://" + testkit.ClosedAddr(t)
	if err := checkLive(closed, "identity", host, getenv); err != nil {
		t.Fatalf("NATS unreachable failed the liveness probe: %v", err)
	}
	if err := checkLive(url, "identity", host, func(string) string { return "" }); err == nil {
		t.Fatal("a probe without a key reported alive")
	}
}
