package natsauth

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Key is one user's NKEY: it logs in to NATS and signs principals.
type Key struct {
	Name string
	kp   nkeys.KeyPair
	pub  string
}

// NewKey makes a fresh user NKEY for name.
func NewKey(name string) (*Key, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("natsauth.NewKey %s: %w", name, err)
	}
	return keyOf(name, kp)
}

// ParseKey reads a user seed ("SU…").
func ParseKey(name string, seed []byte) (*Key, error) {
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		return nil, fmt.Errorf("natsauth: the NKEY seed of %s: %w", name, err)
	}
	if p, _ := kp.PublicKey(); !nkeys.IsValidPublicUserKey(p) {
		return nil, fmt.Errorf("natsauth: the NKEY seed of %s is not a user seed (SU…)", name)
	}
	return keyOf(name, kp)
}

func keyOf(name string, kp nkeys.KeyPair) (*Key, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("natsauth: %s: %w", name, err)
	}
	return &Key{Name: name, kp: kp, pub: pub}, nil
}

// Public is the public NKEY ("U…").
func (k *Key) Public() string { return k.pub }

// Seed is the private seed, for writing it where a process reads it.
func (k *Key) Seed() ([]byte, error) { return k.kp.Seed() }

// Options are the nats.go options that log in as k, with k's inbox prefix.
func (k *Key) Options() []nats.Option {
	return []nats.Option{nats.Nkey(k.pub, k.kp.Sign), nats.CustomInboxPrefix(InboxPrefix(k.Name))}
}

// Connect opens a connection to url as k.
func (k *Key) Connect(url string, opts ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect(url, append(append([]nats.Option{nats.Name(k.Name)}, k.Options()...), opts...)...)
	if err != nil {
		return nil, fmt.Errorf("natsauth: connect as %s: %w", k.Name, err)
	}
	return nc, nil
}

// KeyFromEnv reads the key of the process called name from NATS_NKEY_SEED
// or the file named by NATS_NKEY_SEED_FILE.
func KeyFromEnv(name string, getenv func(string) string) (*Key, error) {
	seed := getenv("NATS_NKEY_SEED")
	if f := getenv("NATS_NKEY_SEED_FILE"); f != "" {
		if seed != "" {
			return nil, errors.New("natsauth: set NATS_NKEY_SEED or NATS_NKEY_SEED_FILE, not both")
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("natsauth: NATS_NKEY_SEED_FILE: %w", err)
		}
		seed = string(b)
	}
	if seed == "" {
		return nil, fmt.Errorf("natsauth: %s needs its NKEY seed in NATS_NKEY_SEED or NATS_NKEY_SEED_FILE", name)
	}
	return ParseKey(name, []byte(seed))
}

// Keys are the keys of every user of Table, by name.
type Keys map[string]*Key

// Generate makes a fresh key for every user of Table.
func Generate() (Keys, error) {
	ks := Keys{}
	for _, n := range Names() {
		k, err := NewKey(n)
		if err != nil {
			return nil, err
		}
		ks[n] = k
	}
	return ks, nil
}

// LoadOrCreate reads the seeds under dir (<name>.nk), creating the missing
// ones (0600, in a 0700 directory), so that restarts of `make run` reuse
// their keys.
func LoadOrCreate(dir string) (Keys, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsauth.LoadOrCreate: %w", err)
	}
	ks := Keys{}
	for _, n := range Names() {
		path := filepath.Join(dir, n+".nk")
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			if ks[n], err = ParseKey(n, b); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		case errors.Is(err, fs.ErrNotExist):
			k, err := NewKey(n)
			if err != nil {
				return nil, err
			}
			seed, _ := k.Seed()
			if err := os.WriteFile(path, seed, 0o600); err != nil {
				return nil, fmt.Errorf("natsauth.LoadOrCreate: %w", err)
			}
			ks[n] = k
		default:
			return nil, fmt.Errorf("natsauth.LoadOrCreate: %w", err)
		}
	}
	return ks, nil
}

// Signers renders the public keys as PLATFORM_SIGNERS reads them.
func (ks Keys) Signers() string {
	var parts []string
	for _, n := range Names() {
		if k := ks[n]; k != nil {
			parts = append(parts, n+"="+k.Public())
		}
	}
	return strings.Join(parts, ",")
}

// LogErrors logs the asynchronous errors of a connection: a permission
// violation arrives this way, not as the error of a publish.
func LogErrors(log *slog.Logger) nats.Option {
	return nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
		subject := ""
		if sub != nil {
			subject = sub.Subject
		}
		log.Error("NATS", "connection", nc.Opts.Name, "subscription", subject, "err", err)
	})
}
