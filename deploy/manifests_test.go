package deploy

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"gopkg.in/yaml.v2"
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
	t.Setenv("NODE_NAME", "nats-1")
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
	}
}
