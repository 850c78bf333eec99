// Package reporting answers reports from a projection of the ledger's
// postings (balances per account and month, fed by intent_posted events)
// and produces the DATEV and GoBD exports from the ledger's journal feed.
package reporting

import (
	"context"
	"sync"
	"time"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
)

// Store is what reporting persists; each feature declares its part.
type Store interface {
	ProjectionStore
	ExportStore
}

// Account is a ledger account as reports read it.
type Account = ledgerv1.Account

// TaxCode is what exports need of a ledger tax code: its rate is kept as
// the exact decimal text the ledger sent (19.00 stays "19.00").
type TaxCode struct {
	Code     string `json:"code"`
	Rate     string `json:"rate"`
	Kind     string `json:"kind"`
	DATEVKey string `json:"datev_bu_key"`
	Label    string `json:"label"`
}

// Ledger is what reporting asks of the ledger service. Calls carry the
// caller's claims in ctx, except Feed, which names its tenant.
type Ledger interface {
	Feed(ctx context.Context, r ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error)
	Accounts(ctx context.Context) ([]Account, error)
	TaxCodes(ctx context.Context) ([]TaxCode, error)
}

// Tenants gives the caller's tenant master data (fiscal year, DATEV numbers).
type Tenants interface {
	Tenant(ctx context.Context) (identityv1.Tenant, error)
}

// Periods gives lock statuses (YYYY-MM → status) between two months.
type Periods interface {
	Statuses(ctx context.Context, tenant, from, to string) (map[string]string, error)
}

// Service is the reporting service.
type Service struct {
	store   Store
	ledger  Ledger
	tenants Tenants
	periods Periods
	now     func() time.Time
	// checked holds the tenants whose projection this process has
	// compared with the ledger's head (see caughtUp).
	checked sync.Map
	export  exportConfig // export settings and peers beyond New (exports.go)
	reports reportCaches // per-tenant chart and master data for reports (reports.go)
	jobs    jobConfig    // export jobs (jobs.go)
}

// New returns a Service.
func New(store Store, ledger Ledger, tenants Tenants, periods Periods) *Service {
	return &Service{store: store, ledger: ledger, tenants: tenants, periods: periods, now: time.Now}
}
