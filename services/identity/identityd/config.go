// Package identityd runs the identity service: migrations, bootstrap, the
// NATS endpoints, the outbox relay and the audit consumer.
package identityd

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/ledgerplatform/ledger/services/identity"
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
	// DatabaseURL (DATABASE_URL) connects as a role that owns the identity
	// schema, or may create it; the service itself then runs as
	// identity_svc. Used when Deps.Pool is nil.
	DatabaseURL string
	// NATSURL (NATS_URL) is used when Deps.NC is nil.
	NATSURL string
	// DBMaxConns (IDENTITY_DB_MAX_CONNS) bounds the service pool.
	DBMaxConns int32
	// BootstrapAPIKey (BOOTSTRAP_API_KEY), when set, is an admin key of the
	// operator tenant; at least 32 characters. When empty, the first start
	// generates one and prints it.
	BootstrapAPIKey string
	// BootstrapAdminEmail (BOOTSTRAP_ADMIN_EMAIL), when set, is invited as
	// an admin user of the operator tenant.
	BootstrapAdminEmail string
}

// LoadConfig reads the configuration through getenv (os.Getenv in main).
func LoadConfig(getenv func(string) string) (Config, error) {
	cfg := Config{
		DatabaseURL:         or(getenv("DATABASE_URL"), DefaultDatabaseURL),
		NATSURL:             or(getenv("NATS_URL"), DefaultNATSURL),
		DBMaxConns:          DefaultDBMaxConns,
		BootstrapAPIKey:     getenv("BOOTSTRAP_API_KEY"),
		BootstrapAdminEmail: getenv("BOOTSTRAP_ADMIN_EMAIL"),
	}
	if s := getenv("IDENTITY_DB_MAX_CONNS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 2 {
			return Config{}, fmt.Errorf("identityd: IDENTITY_DB_MAX_CONNS must be an integer of at least 2, got %q", s)
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
	var problems []error
	if c.BootstrapAPIKey != "" {
		if err := identity.CheckBootstrapKey(c.BootstrapAPIKey); err != nil {
			problems = append(problems, fmt.Errorf("BOOTSTRAP_API_KEY: %w", err))
		}
	}
	if c.DBMaxConns != 0 && c.DBMaxConns < 2 {
		// The outbox relay holds one connection for LISTEN.
		problems = append(problems, errors.New("DBMaxConns must be at least 2"))
	}
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("identityd: invalid config: %w", err)
	}
	return nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
