// Package periodsd runs the periods service: migrations, the NATS
// endpoints, the outbox relay and the consumers of the ledger's events.
package periodsd

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
)

// Defaults for a platform running on one machine.
const (
	DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultNATSURL     = nats.DefaultURL
	DefaultDBMaxConns  = 10
)

// Config configures Run. LoadConfig reads it from the environment variables
// named on each field.
type Config struct {
	// DatabaseURL (DATABASE_URL) connects as a role that owns the periods
	// schema, or may create it; the service itself then runs as
	// periods_svc. Used when Deps.Pool is nil.
	DatabaseURL string
	// NATSURL (NATS_URL) is used when Deps.NC is nil.
	NATSURL string
	// DBMaxConns (PERIODS_DB_MAX_CONNS) bounds the service pool; at least 3
	// (the outbox relay listens on one connection, and a lock change holds
	// one while the ledger answers).
	DBMaxConns int32
}

// LoadConfig reads the configuration through getenv (os.Getenv in main).
func LoadConfig(getenv func(string) string) (Config, error) {
	cfg := Config{
		DatabaseURL: or(getenv("DATABASE_URL"), DefaultDatabaseURL),
		NATSURL:     or(getenv("NATS_URL"), DefaultNATSURL),
		DBMaxConns:  DefaultDBMaxConns,
	}
	if s := getenv("PERIODS_DB_MAX_CONNS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return Config{}, fmt.Errorf("periodsd: PERIODS_DB_MAX_CONNS must be an integer of at least 3, got %q", s)
		}
		cfg.DBMaxConns = int32(n)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports a configuration Run cannot start with.
func (c Config) Validate() error {
	if c.DBMaxConns != 0 && c.DBMaxConns < 3 {
		return errors.New("periodsd: invalid config: PERIODS_DB_MAX_CONNS (DBMaxConns) must be at least 3")
	}
	return nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
