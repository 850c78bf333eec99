package ledger

import (
	"context"
	"sync"
	"time"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Store is everything the ledger persists. Each feature declares the part
// it needs next to its own code.
type Store interface {
	TenantStore
	JournalStore
	ChartStore
	DocumentStore
	ReviewStore
}

// TenantStore seeds a tenant's chart and journal head once.
type TenantStore interface {
	// EnsureTenant creates the tenant's chart, tax codes and journal head if
	// they do not exist yet; it is idempotent and safe to race.
	EnsureTenant(ctx context.Context, tenant string, accounts []Account, codes []TaxCode) error
	// LoadChart returns the tenant's accounts and tax codes.
	LoadChart(ctx context.Context, tenant string) ([]Account, []TaxCode, error)
}

// Seed supplies the chart and tax codes of a new tenant (SKR04 in production).
type Seed func() ([]Account, []TaxCode)

// Service is the ledger's business logic.
type Service struct {
	store Store
	seed  Seed
	keys  CheckpointKeys
	now   func() time.Time

	mu     sync.Mutex
	seeded map[string]bool
	charts map[string]*chartCache
}

// New returns a Service signing its chain checkpoints with keys.
func New(store Store, seed Seed, keys CheckpointKeys) *Service {
	return &Service{store: store, seed: seed, keys: keys, now: time.Now, seeded: map[string]bool{}, charts: map[string]*chartCache{}}
}

// ensureTenant seeds a tenant on first use; identity's tenant_created event
// usually got there first.
func (s *Service) ensureTenant(ctx context.Context, tenant string) error {
	if tenant == "" {
		return errs.E(errs.Unauthenticated, "no tenant")
	}
	s.mu.Lock()
	done := s.seeded[tenant]
	s.mu.Unlock()
	if done {
		return nil
	}
	accounts, codes := s.seed()
	if err := s.store.EnsureTenant(ctx, tenant, accounts, codes); err != nil {
		return errs.Wrap("ledger.ensureTenant", err)
	}
	s.mu.Lock()
	s.seeded[tenant] = true
	s.mu.Unlock()
	return nil
}

// EnsureTenant is ensureTenant for the tenant_created consumer.
func (s *Service) EnsureTenant(ctx context.Context, tenant string) error {
	return s.ensureTenant(ctx, tenant)
}

// chartTTL bounds how long another replica's chart change can stay unseen
// by validation; the foreign keys of the journal hold regardless.
const chartTTL = 10 * time.Second

type chartCache struct {
	accounts map[string]Account
	codes    map[string]TaxCode
	loaded   time.Time
}

func (c *chartCache) Account(n string) (Account, bool) { a, ok := c.accounts[n]; return a, ok }
func (c *chartCache) TaxCode(n string) (TaxCode, bool) { t, ok := c.codes[n]; return t, ok }

// chart returns the tenant's cached chart, loading it when stale.
func (s *Service) chart(ctx context.Context, tenant string) (*chartCache, error) {
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return nil, err
	}
	s.mu.Lock()
	c := s.charts[tenant]
	s.mu.Unlock()
	if c != nil && s.now().Sub(c.loaded) < chartTTL {
		return c, nil
	}
	accounts, codes, err := s.store.LoadChart(ctx, tenant)
	if err != nil {
		return nil, errs.Wrap("ledger.chart", err)
	}
	c = &chartCache{accounts: make(map[string]Account, len(accounts)), codes: make(map[string]TaxCode, len(codes)), loaded: s.now()}
	for _, a := range accounts {
		c.accounts[a.Number] = a
	}
	for _, t := range codes {
		c.codes[t.Code] = t
	}
	s.mu.Lock()
	s.charts[tenant] = c
	s.mu.Unlock()
	return c, nil
}

// invalidateChart drops the cached chart after a change in this process.
func (s *Service) invalidateChart(tenant string) {
	s.mu.Lock()
	delete(s.charts, tenant)
	s.mu.Unlock()
}
