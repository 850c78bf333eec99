// Package ledgerd declares the ledger service for the shared daemon: its
// schema, the stream it owns, its route table, the consumer that seeds
// the chart of new tenants and the loop that signs chain checkpoints.
package ledgerd

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
	"github.com/ledgerplatform/ledger/services/ledger/natsrpc"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
	"github.com/ledgerplatform/ledger/services/ledger/skr04"
)

// Seed is the chart every new tenant starts with.
func Seed() ([]ledger.Account, []ledger.TaxCode) { return skr04.Accounts(), skr04.TaxCodes() }

// Config is the ledger's own settings.
type Config struct {
	// Keys sign and verify chain checkpoints: LEDGER_CHECKPOINT_KEY (or
	// LEDGER_CHECKPOINT_KEY_FILE, a file holding it), the Ed25519 seed,
	// hex or base64; LEDGER_CHECKPOINT_PUBKEYS, the public keys of earlier
	// signing keys, so their checkpoints keep verifying after a rotation.
	Keys ledger.CheckpointKeys
	// CheckpointEvery is how often tenants whose head moved get a
	// checkpoint: LEDGER_CHECKPOINT_INTERVAL, default 10m.
	CheckpointEvery time.Duration
}

// DefaultCheckpointEvery is the checkpoint schedule's default interval.
const DefaultCheckpointEvery = 10 * time.Minute

// LoadConfig reads the ledger's settings. It refuses to go without a
// checkpoint key: without one, whoever can write the database could
// rewrite the journal unnoticed.
func LoadConfig(getenv func(string) string) (Config, error) {
	cfg := Config{CheckpointEvery: DefaultCheckpointEvery}
	key, file := getenv("LEDGER_CHECKPOINT_KEY"), getenv("LEDGER_CHECKPOINT_KEY_FILE")
	switch {
	case key != "" && file != "":
		return cfg, errors.New("ledger: set LEDGER_CHECKPOINT_KEY or LEDGER_CHECKPOINT_KEY_FILE, not both")
	case key == "" && file == "":
		return cfg, errors.New("ledger: LEDGER_CHECKPOINT_KEY or LEDGER_CHECKPOINT_KEY_FILE is required: the Ed25519 seed (32 bytes, hex or base64) that signs the journal's chain checkpoints, kept out of the database")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return cfg, fmt.Errorf("ledger: LEDGER_CHECKPOINT_KEY_FILE: %w", err)
		}
		key = strings.TrimSpace(string(b))
	}
	seed, err := ledger.ParseSeed(key)
	if err != nil {
		return cfg, err
	}
	signer, err := ledger.NewSigner(seed)
	if err != nil {
		return cfg, err
	}
	pubs, err := ledger.ParseKeyring(getenv("LEDGER_CHECKPOINT_PUBKEYS"))
	if err != nil {
		return cfg, fmt.Errorf("LEDGER_CHECKPOINT_PUBKEYS: %w", err)
	}
	cfg.Keys = ledger.NewCheckpointKeys(signer, pubs)
	if s := getenv("LEDGER_CHECKPOINT_INTERVAL"); s != "" {
		if cfg.CheckpointEvery, err = time.ParseDuration(s); err != nil || cfg.CheckpointEvery <= 0 {
			return cfg, fmt.Errorf("ledger: LEDGER_CHECKPOINT_INTERVAL %q: want a positive duration such as 10m", s)
		}
	}
	return cfg, nil
}

// EnsureKeyFile creates a checkpoint key at path (mode 0600, its directory
// 0700) unless one is there; make run and the all-in-one use it, a
// deployment provides its key as a secret.
func EnsureKeyFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("ledger: checkpoint key: %w", err)
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ledger: checkpoint key: %w", err)
	}
	_, err = f.WriteString(hex.EncodeToString(seed) + "\n")
	return errors.Join(err, f.Close())
}

// Service declares the ledger from the environment (see LoadConfig).
func Service(getenv func(string) string) (daemon.Service, error) {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return daemon.Service{}, err
	}
	return WithSeed(Seed, cfg), nil
}

// WithSeed declares the ledger seeding new tenants with seed. It owns the
// LEDGER stream; identity's stream is its owner's, the tenant consumer
// only attaches to it.
func WithSeed(seed ledger.Seed, cfg Config) daemon.Service {
	every := cfg.CheckpointEvery
	if every <= 0 {
		every = DefaultCheckpointEvery
	}
	return daemon.Service{
		Name:    "ledger",
		DB:      postgres.Migrations,
		Streams: []natsx.Stream{{Name: ledgerv1.StreamEvents, Subjects: []string{ledgerv1.EventsFilter}}},
		Build: func(_ context.Context, env daemon.Env) (daemon.Parts, error) {
			if cfg.Keys.Signer == nil {
				return daemon.Parts{}, errors.New("ledger: no checkpoint key (see LoadConfig)")
			}
			svc := ledger.New(postgres.New(env.Pool, env.Log), seed, cfg.Keys)
			// The public key is what an operator lists in
			// LEDGER_CHECKPOINT_PUBKEYS when this key is rotated out.
			pub := cfg.Keys.Signer.Public()
			env.Log.Info("signing chain checkpoints", "key_id", ledger.KeyID(pub), "public_key", hex.EncodeToString(pub), "every", every)
			return daemon.Parts{
				Routes: natsrpc.Routes(svc),
				// New tenants get their chart as soon as identity announces them.
				Consumers: []natsx.Consumer{{Stream: identityv1.StreamEvents, Durable: "ledger-tenants", Filter: identityv1.EventTenantCreated,
					Handle: natsx.Each(func(ctx context.Context, msg jetstream.Msg) error {
						var ev identityv1.TenantEvent
						if err := json.Unmarshal(msg.Data(), &ev); err != nil || ev.TenantID == "" {
							return natsx.ErrPoison
						}
						return svc.EnsureTenant(ctx, ev.TenantID)
					})}},
				// Every replica may run it: a checkpoint more is harmless.
				Loops: []daemon.Loop{{Name: "chain checkpoints", Every: every, Run: svc.CheckpointMoved}},
			}, nil
		},
	}
}
