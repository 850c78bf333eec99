package deploy

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"gopkg.in/yaml.v2"

	"github.com/ledgerplatform/ledger/pkg/natsauth"
)

// TestYAMLParses parses every YAML file under deploy/ and the compose file,
// every document of each.
func TestYAMLParses(t *testing.T) {
	files := []string{"../docker-compose.yml"}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for i := 0; ; i++ {
			var doc map[string]any
			err := dec.Decode(&doc)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: document %d: %v", f, i, err)
				break
			}
			if strings.HasPrefix(f, "k8s/") && f != "k8s/kustomization.yaml" && (doc["apiVersion"] == nil || doc["kind"] == nil) {
				t.Errorf("%s: document %d has no apiVersion or kind", f, i)
			}
		}
	}
}

// TestNATSConfigs loads the NATS configurations with the server's own
// parser and checks the storage guarantees DESIGN.md §3.1 asks for.
func TestNATSConfigs(t *testing.T) {
	t.Setenv("POD_NAME", "nats-0")
	keys, err := natsauth.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for n, k := range keys {
		t.Setenv(natsauth.EnvPublicKey(n), k.Public())
	}
	for _, f := range []string{"nats/nats.conf", "nats/compose.conf"} {
		o, err := server.ProcessConfigFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !o.JetStream || !o.SyncAlways {
			t.Errorf("%s: jetstream=%v sync always=%v, want both", f, o.JetStream, o.SyncAlways)
		}
		if o.MaxPayload < 16<<20 {
			t.Errorf("%s: max_payload %d, want 16MB like pkg/natsembed", f, o.MaxPayload)
		}
		// deploy/natskeys tests the users against the table.
		if len(o.Nkeys) != len(natsauth.Table) || len(o.Users) != 0 || o.NoAuthUser != "" {
			t.Errorf("%s: %d NKEY users, %d other users, no_auth_user %q; want only the %d of the table", f, len(o.Nkeys), len(o.Users), o.NoAuthUser, len(natsauth.Table))
		}
	}
}

// k8sDocs reads every document of the kustomize base's files.
func k8sDocs(t *testing.T) []map[string]any {
	t.Helper()
	files, err := filepath.Glob("k8s/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if doc != nil {
				docs = append(docs, doc)
			}
		}
	}
	return docs
}

// get walks a parsed YAML document.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[any]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// Every process of the platform logs in to NATS with its own key, from the
// Secret nats-keys, and trusts the signers of the ConfigMap nats-users;
// NATS reads the public keys from there.
func TestK8sNATSKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, doc := range k8sDocs(t) {
		kind, name := doc["kind"], get(doc["metadata"], "name")
		if kind != "Deployment" && kind != "StatefulSet" {
			continue
		}
		c := get(doc["spec"], "template", "spec", "containers", 0)
		var envFrom []string
		for _, e := range get(c, "envFrom").([]any) {
			if n, ok := get(e, "configMapRef", "name").(string); ok {
				envFrom = append(envFrom, n)
			}
		}
		if !slices.Contains(envFrom, "nats-users") {
			t.Errorf("%s %s: no envFrom nats-users", kind, name)
		}
		if kind == "StatefulSet" {
			continue
		}
		var key string
		for _, e := range get(c, "env").([]any) {
			if get(e, "name") == "NATS_NKEY_SEED" && get(e, "valueFrom", "secretKeyRef", "name") == "nats-keys" {
				key, _ = get(e, "valueFrom", "secretKeyRef", "key").(string)
			}
		}
		if want := natsauth.EnvSeed(name.(string)); key != want {
			t.Errorf("Deployment %s: NATS_NKEY_SEED from %q, want nats-keys %s", name, key, want)
		}
		seen[name.(string)] = true
	}
	for _, n := range natsauth.Names() {
		if !seen[n] {
			t.Errorf("no Deployment %s with its NATS key", n)
		}
	}
}

// The namespace denies by default; NATS is reached only from the
// platform's pods, and only the gateway takes traffic from outside.
func TestK8sNetworkPolicy(t *testing.T) {
	policies := map[string]map[string]any{}
	for _, doc := range k8sDocs(t) {
		if doc["kind"] == "NetworkPolicy" {
			policies[get(doc["metadata"], "name").(string)] = doc
		}
	}
	deny := policies["default-deny"]
	if deny == nil || len(get(deny["spec"], "podSelector").(map[any]any)) != 0 || get(deny["spec"], "ingress") != nil || get(deny["spec"], "egress") != nil {
		t.Fatalf("no default-deny policy for every pod: %v", deny)
	}
	nats := policies["nats"]
	var clients []string
	values, _ := get(nats["spec"], "ingress", 0, "from", 0, "podSelector", "matchExpressions", 0, "values").([]any)
	for _, v := range values {
		clients = append(clients, v.(string))
	}
	slices.Sort(clients)
	if want := natsauth.Names(); !slices.Equal(clients, want) || get(nats["spec"], "ingress", 0, "ports", 0, "port") != 4222 {
		t.Errorf("NATS clients %v, want %v on 4222", clients, want)
	}
	for name, p := range policies {
		sel, _ := get(p["spec"], "podSelector", "matchLabels", "app.kubernetes.io/name").(string)
		if get(p["spec"], "ingress") != nil && sel != "nats" && sel != "gateway" {
			t.Errorf("policy %s admits traffic to %q: only NATS and the gateway take any", name, sel)
		}
	}
}
