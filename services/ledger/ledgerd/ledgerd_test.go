package ledgerd_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/ledgerd"
)

func TestLoadConfigCheckpointKeys(t *testing.T) {
	seed := strings.Repeat("ab", 32)
	signer, _ := ledger.NewSigner(mustHex(seed))
	oldPub := ed25519.NewKeyFromSeed(mustHex(strings.Repeat("cd", 32))).Public().(ed25519.PublicKey)
	file := filepath.Join(t.TempDir(), "keys", "ledger-checkpoint.key")
	if err := ledgerd.EnsureKeyFile(file); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(file)
	if err := ledgerd.EnsureKeyFile(file); err != nil { // kept, not replaced
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(file); string(again) != string(written) {
		t.Error("EnsureKeyFile replaced an existing key")
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v %v, want 0600", fi.Mode(), err)
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		err  string
		keys int
	}{
		{"no key", nil, "LEDGER_CHECKPOINT_KEY or LEDGER_CHECKPOINT_KEY_FILE is required", 0},
		{"placeholder", map[string]string{"LEDGER_CHECKPOINT_KEY": "CHANGE-ME-to-openssl-rand-hex-32"}, "32 bytes", 0},
		{"both", map[string]string{"LEDGER_CHECKPOINT_KEY": seed, "LEDGER_CHECKPOINT_KEY_FILE": file}, "not both", 0},
		{"hex seed", map[string]string{"LEDGER_CHECKPOINT_KEY": seed}, "", 1},
		{"file", map[string]string{"LEDGER_CHECKPOINT_KEY_FILE": file}, "", 1},
		{"missing file", map[string]string{"LEDGER_CHECKPOINT_KEY_FILE": file + ".gone"}, "no such file", 0},
		{"rotated", map[string]string{"LEDGER_CHECKPOINT_KEY": seed, "LEDGER_CHECKPOINT_PUBKEYS": hex.EncodeToString(oldPub) + ", " + hex.EncodeToString(signer.Public())}, "", 2},
		{"bad public key", map[string]string{"LEDGER_CHECKPOINT_KEY": seed, "LEDGER_CHECKPOINT_PUBKEYS": "abc"}, "LEDGER_CHECKPOINT_PUBKEYS", 0},
		{"bad interval", map[string]string{"LEDGER_CHECKPOINT_KEY": seed, "LEDGER_CHECKPOINT_INTERVAL": "-1m"}, "LEDGER_CHECKPOINT_INTERVAL", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ledgerd.LoadConfig(func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				if _, err := ledgerd.Service(func(k string) string { return tc.env[k] }); err == nil {
					t.Error("the service starts without a valid key")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Keys.Signer == nil || len(cfg.Keys.Verify) != tc.keys || cfg.CheckpointEvery != ledgerd.DefaultCheckpointEvery {
				t.Errorf("config %+v, want %d verifying keys", cfg, tc.keys)
			}
		})
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
