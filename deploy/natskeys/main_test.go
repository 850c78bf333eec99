package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// The committed auth.conf is the table's rendering: change the table, run
// `go run ./deploy/natskeys`.
func TestAuthConfIsTheTable(t *testing.T) {
	b, err := os.ReadFile("../nats/auth.conf")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(natsauth.Conf(), string(b)); diff != "" {
		t.Fatalf("deploy/nats/auth.conf is stale; run go run ./deploy/natskeys (-table +file):\n%s", diff)
	}
}

// nats-server reads the compose and Kubernetes configurations into exactly
// the users and permissions of the table, with the public keys of its
// environment; without them it refuses to start.
func TestServerReadsTheTable(t *testing.T) {
	keys, err := natsauth.Generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seeds, public := envFiles(keys)
	for _, line := range strings.Split(strings.TrimSpace(public), "\n") {
		k, v, _ := strings.Cut(line, "=")
		t.Setenv(k, v)
	}
	if strings.Count(seeds, "_NATS_NKEY_SEED=SU") != len(natsauth.Table) {
		t.Fatalf("seeds.env:\n%s", seeds)
	}
	t.Setenv("POD_NAME", "nats-0")
	want := map[string]natsauth.Permissions{}
	for n, p := range natsauth.Table {
		want[keys[n].Public()] = p
	}
	for _, conf := range []string{"compose.conf", "nats.conf"} {
		// The two files sit together, as compose and the ConfigMap mount them.
		for _, f := range []string{conf, "auth.conf"} {
			b, err := os.ReadFile(filepath.Join("../nats", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		opts, err := server.ProcessConfigFile(filepath.Join(dir, conf))
		if err != nil {
			t.Fatalf("%s: %v", conf, err)
		}
		got := map[string]natsauth.Permissions{}
		for _, u := range opts.Nkeys {
			got[u.Nkey] = natsauth.Permissions{Publish: u.Permissions.Publish.Allow, PublishDeny: u.Permissions.Publish.Deny, Subscribe: u.Permissions.Subscribe.Allow}
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || len(opts.Users) != 0 || opts.NoAuthUser != "" {
			t.Errorf("%s: users (-table +conf):\n%s", conf, diff)
		}
	}
	t.Setenv(natsauth.EnvPublicKey("ledger"), "")
	if _, err := server.ProcessConfigFile(filepath.Join(dir, "compose.conf")); err == nil {
		t.Error("a configuration without the ledger's public key was accepted")
	}
}
