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
	"github.com/ledgerplatform/ledger/pkg/secrets"
	"github.com/ledgerplatform/ledger/services/identity"
)

// TestYAMLParses parses every YAML file under deploy/ and the compose file,
// every document of each.
func TestYAMLParses(t *testing.T) {
	files := []string{"../docker-compose.yml"}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir // npm's packages, not ours
		}
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
	t.Setenv("NODE_NAME", "nats-1")
	keys, err := natsauth.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for n, k := range keys {
		t.Setenv(natsauth.EnvPublicKey(n), k.Public())
	}
	for _, f := range []string{"nats/nats.conf", "nats/compose.conf", "nats/compose-cluster.conf"} {
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

// Every process of the platform logs in to NATS with its own key, kept in
// its own Secret (secrets-<name>), and trusts the signers of the ConfigMap
// nats-users; NATS reads the public keys from there.
func TestK8sNATSKeys(t *testing.T) {
	seedIn := map[string]bool{} // Secret name → holds NATS_NKEY_SEED
	for _, doc := range k8sDocs(t) {
		if doc["kind"] == "Secret" {
			if _, ok := get(doc["stringData"], "NATS_NKEY_SEED").(string); ok {
				seedIn[get(doc["metadata"], "name").(string)] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, doc := range k8sDocs(t) {
		kind, name := doc["kind"], get(doc["metadata"], "name")
		if kind != "Deployment" && kind != "StatefulSet" {
			continue
		}
		c := get(doc["spec"], "template", "spec", "containers", 0)
		var configs, secrets []string
		for _, e := range get(c, "envFrom").([]any) {
			if n, ok := get(e, "configMapRef", "name").(string); ok {
				configs = append(configs, n)
			}
			if n, ok := get(e, "secretRef", "name").(string); ok {
				secrets = append(secrets, n)
			}
		}
		if !slices.Contains(configs, "nats-users") {
			t.Errorf("%s %s: no envFrom nats-users", kind, name)
		}
		if kind == "StatefulSet" {
			continue
		}
		if own := "secrets-" + name.(string); !slices.Contains(secrets, own) || !seedIn[own] {
			t.Errorf("Deployment %s: no NATS_NKEY_SEED from its Secret %s", name, own)
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
	// Worker Deployments log in as their service (bank-import as bank,
	// payables-ocr as payables).
	want := append(natsauth.Names(), "bank-import", "payables-ocr")
	slices.Sort(want)
	if !slices.Equal(clients, want) || get(nats["spec"], "ingress", 0, "ports", 0, "port") != 4222 {
		t.Errorf("NATS clients %v, want %v on 4222", clients, want)
	}
	for name, p := range policies {
		sel, _ := get(p["spec"], "podSelector", "matchLabels", "app.kubernetes.io/name").(string)
		if get(p["spec"], "ingress") != nil && sel != "nats" && sel != "gateway" {
			t.Errorf("policy %s admits traffic to %q: only NATS and the gateway take any", name, sel)
		}
	}
}

// k8sDoc is what TestSecretsPerWorkload reads of a manifest.
type k8sDoc struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Env []struct {
						Name      string `yaml:"name"`
						ValueFrom struct {
							SecretKeyRef struct {
								Name string `yaml:"name"`
							} `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					EnvFrom []struct {
						SecretRef struct {
							Name string `yaml:"name"`
						} `yaml:"secretRef"`
					} `yaml:"envFrom"`
				} `yaml:"containers"`
				Volumes []struct {
					Secret struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func readDocs(t *testing.T, file string) []k8sDoc {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []k8sDoc
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var d k8sDoc
		if err := dec.Decode(&d); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, d)
	}
}

// TestSecretsPerWorkload: in deploy/k8s every workload gets only its own
// Secret (named after it), the gateway no database URL, only identity the
// bootstrap key; every value shipped is a placeholder the services refuse.
func TestSecretsPerWorkload(t *testing.T) {
	files, err := filepath.Glob("k8s/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	secretKeys := map[string][]string{} // Secret name → its keys
	refs := map[string][]string{}       // Deployment → Secrets it reads
	for _, f := range files {
		for _, d := range readDocs(t, f) {
			switch d.Kind {
			case "Secret":
				for k, v := range d.StringData {
					secretKeys[d.Metadata.Name] = append(secretKeys[d.Metadata.Name], k)
					if secrets.CheckNotPlaceholder(k, v) == nil {
						t.Errorf("%s: Secret %s ships %s with a value that is not refused as a placeholder", f, d.Metadata.Name, k)
					}
					if k == "BOOTSTRAP_API_KEY" && identity.CheckBootstrapKey(v) == nil {
						t.Errorf("%s: identity would accept the shipped BOOTSTRAP_API_KEY", f)
					}
				}
			case "Deployment":
				name := d.Metadata.Name
				refs[name] = []string{}
				ps := d.Spec.Template.Spec
				for _, c := range ps.Containers {
					for _, e := range c.EnvFrom {
						if e.SecretRef.Name != "" {
							refs[name] = append(refs[name], e.SecretRef.Name)
						}
					}
					for _, e := range c.Env {
						if n := e.ValueFrom.SecretKeyRef.Name; n != "" {
							refs[name] = append(refs[name], n)
						}
					}
				}
				for _, v := range ps.Volumes {
					if v.Secret.SecretName != "" {
						refs[name] = append(refs[name], v.Secret.SecretName)
					}
				}
			}
		}
	}
	for _, w := range []string{"gateway", "identity", "ledger", "bank", "receivables", "payables", "periods", "reporting"} {
		if _, ok := refs[w]; !ok {
			t.Errorf("no Deployment %s in deploy/k8s", w)
		}
	}
	for w, names := range refs {
		var keys []string
		for _, n := range names {
			if !strings.HasSuffix(n, "-"+w) {
				t.Errorf("Deployment %s reads Secret %s, which is not its own (named …-%s)", w, n, w)
			}
			keys = append(keys, secretKeys[n]...)
		}
		if w == "gateway" && slices.Contains(keys, "DATABASE_URL") {
			t.Errorf("the gateway gets a DATABASE_URL")
		}
		if w != "identity" && slices.Contains(keys, "BOOTSTRAP_API_KEY") {
			t.Errorf("Deployment %s gets the BOOTSTRAP_API_KEY", w)
		}
		if w != "gateway" && !slices.Contains(keys, "DATABASE_URL") {
			t.Errorf("Deployment %s gets no DATABASE_URL from its Secret", w)
		}
	}
}

// TestComposeSecrets: in docker-compose.yml the gateway gets no database
// URL and only identity the bootstrap key.
func TestComposeSecrets(t *testing.T) {
	b, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"gateway", "identity", "ledger", "bank", "receivables", "payables", "periods", "reporting"} {
		env, ok := c.Services[w]
		if !ok {
			t.Errorf("no service %s in docker-compose.yml", w)
			continue
		}
		_, db := env.Environment["DATABASE_URL"]
		_, boot := env.Environment["BOOTSTRAP_API_KEY"]
		if db != (w != "gateway") || boot != (w == "identity") {
			t.Errorf("compose service %s: DATABASE_URL %v, BOOTSTRAP_API_KEY %v", w, db, boot)
		}
	}
}
