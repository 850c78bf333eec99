package daemon_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/pkg/daemon"
)

// Every service reads the same settings under its own name; each
// service's test checks the name it declares.
func TestLoadConfig(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"identity", "ledger", "periods", "reporting", "bank"} {
		p := strings.ToUpper(name) + "_"
		tests := []struct {
			name    string
			env     map[string]string
			want    daemon.Config
			wantErr string
		}{
			{"defaults", nil, daemon.Config{DatabaseURL: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", NATSURL: nats.DefaultURL, DBMaxConns: 20, Workers: 128, StreamReplicas: 1}, ""},
			{"everything", map[string]string{"DATABASE_URL": "postgres://db/ledger", "NATS_URL": "nats://nats:4222", p + "DB_MAX_CONNS": "25", p + "MAX_CONCURRENT": "512", "NATS_STREAM_REPLICAS": "3"},
				daemon.Config{DatabaseURL: "postgres://db/ledger", NATSURL: "nats://nats:4222", DBMaxConns: 25, Workers: 512, StreamReplicas: 3}, ""},
			{"another service's settings", map[string]string{"OTHER_DB_MAX_CONNS": "2"},
				daemon.Config{DatabaseURL: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", NATSURL: nats.DefaultURL, DBMaxConns: 20, Workers: 128, StreamReplicas: 1}, ""},
			{"pool too small", map[string]string{p + "DB_MAX_CONNS": "2"}, daemon.Config{}, p + "DB_MAX_CONNS"},
			{"pool not a number", map[string]string{p + "DB_MAX_CONNS": "many"}, daemon.Config{}, p + "DB_MAX_CONNS"},
			{"no workers", map[string]string{p + "MAX_CONCURRENT": "0"}, daemon.Config{}, p + "MAX_CONCURRENT"},
			{"placeholder database URL", map[string]string{"DATABASE_URL": "postgres://ledger:CHANGE-ME@postgres.example.internal:5432/ledger"}, daemon.Config{}, "DATABASE_URL"},
			{"replicas beyond JetStream's", map[string]string{"NATS_STREAM_REPLICAS": "7"}, daemon.Config{}, "NATS_STREAM_REPLICAS"},
			{"replicas not a number", map[string]string{"NATS_STREAM_REPLICAS": "three"}, daemon.Config{}, "NATS_STREAM_REPLICAS"},
		}
		for _, tt := range tests {
			got, err := daemon.LoadConfig(name, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s %s: error = %v, want one naming %s", name, tt.name, err, tt.wantErr)
				}
				continue
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(daemon.Config{}, "Getenv")); err != nil || diff != "" {
				t.Errorf("%s %s: %v; config (-want +got):\n%s", name, tt.name, err, diff)
			}
		}
	}
}
