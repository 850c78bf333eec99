package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/nats-io/nats.go/micro"

	"github.com/ledgerplatform/ledger/pkg/testkit"
)

func TestHTTP(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	if err := run([]string{"http", ok.URL}); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"http", bad.URL}); err == nil {
		t.Fatal("503 reported healthy")
	}
}

func TestNATS(t *testing.T) {
	url, nc := testkit.NATS(t)
	svc, err := micro.AddService(nc, micro.Config{Name: "identity", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	if err := run([]string{"nats", url, "identity"}); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"nats", url, "ledger"}); err == nil {
		t.Fatal("a missing service reported healthy")
	}
	if err := run([]string{"bogus"}); err == nil {
		t.Fatal("bad usage accepted")
	}
}
