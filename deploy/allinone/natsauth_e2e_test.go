package allinone_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/deploy/allinone"
	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	identitypg "github.com/ledgerplatform/ledger/services/identity/postgres"
	ledgerpg "github.com/ledgerplatform/ledger/services/ledger/postgres"
	periodspg "github.com/ledgerplatform/ledger/services/periods/postgres"
	reportingpg "github.com/ledgerplatform/ledger/services/reporting/postgres"
)

// make run's own NATS: the keys are made on the first start under
// DATA_DIR/keys (0600) and reused on the next; every part logs in with its
// own, and the platform answers through the gateway.
func TestMakeRunKeepsItsNATSKeys(t *testing.T) {
	dbURL := testkit.Postgres(t, identitypg.Migrations, ledgerpg.Migrations, periodspg.Migrations, reportingpg.Migrations)
	rdb, prefix := testkit.Redis(t)
	dir := t.TempDir()
	key := "bootstrap-" + testkit.RandomID() + testkit.RandomID() + testkit.RandomID()
	vars := env{"DATA_DIR": dir, "NATS_PORT": "-1", "BOOTSTRAP_API_KEY": key, "GATEWAY_ADDR": "127.0.0.1:0", "REDIS_KEY_PREFIX": prefix}
	run := func() {
		t.Helper()
		cfg, err := allinone.LoadConfig(func(k string) string { return vars[k] })
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		addr, done := make(chan string, 1), make(chan error, 1)
		go func() {
			done <- allinone.Run(ctx, cfg, allinone.Deps{DatabaseURL: dbURL, Deps: gatewayd.Deps{Redis: rdb, Log: testLogger(t), Ready: func(a string) { addr <- a }}})
		}()
		defer func() {
			cancel()
			if err, ok := receiveWithin(done, 20*time.Second); !ok || err != nil {
				t.Errorf("platform stopped: %v (in time: %v)", err, ok)
			}
		}()
		var base string
		select {
		case a := <-addr:
			base = "http://" + a
		case err := <-done:
			t.Fatalf("platform failed to start: %v", err)
		case <-time.After(60 * time.Second):
			t.Fatal("platform not ready within 60s")
		}
		req, _ := http.NewRequest("GET", base+"/v1/auth/me", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("GET /v1/auth/me: %d", res.StatusCode)
		}
	}
	seeds := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, n := range natsauth.Names() {
			f := filepath.Join(dir, "keys", n+".nk")
			fi, err := os.Stat(f)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("%s.nk: %v %v", n, fi, err)
			}
			b, _ := os.ReadFile(f)
			out[n] = string(b)
		}
		return out
	}
	run()
	first := seeds()
	run()
	if diff := cmp.Diff(first, seeds()); diff != "" {
		t.Fatalf("the keys changed between starts:\n%s", diff)
	}
}
