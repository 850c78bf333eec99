package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/postgres"
)

// In-process peers: the benchmark measures the projection and the report
// code, not the network.
type benchLedger struct{ chart []reporting.Account }

func (l benchLedger) Feed(ctx context.Context, r ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error) {
	return ledgerv1.JournalFeed{}, nil
}
func (l benchLedger) Accounts(ctx context.Context) ([]reporting.Account, error) { return l.chart, nil }
func (l benchLedger) TaxCodes(ctx context.Context) ([]reporting.TaxCode, error) { return nil, nil }

type benchTenants struct{}

func (benchTenants) Tenant(ctx context.Context) (identityv1.Tenant, error) {
	return identityv1.Tenant{FiscalYearStartMonth: 1}, nil
}

// benchChart is 1,000 accounts spread over the SKR04 classes 0-7.
func benchChart() []reporting.Account {
	out := make([]reporting.Account, 1000)
	for i := range out {
		n := fmt.Sprintf("%04d", i*8+i%7) // 0000 ... 7998
		out[i] = reporting.Account{Number: n, Name: "Konto " + n, Type: reporting.TypeOf(n)}
	}
	return out
}

// seedBalances writes the balances that 1,000,000 journal events over the
// chart produce in the twelve months of 2025 (and, with years > 1, the
// years before): every event adds its amount to one account's debit and
// another's credit in its month, so the books balance. Rows go in directly,
// one statement per month, and the yearly sums are derived from them.
func seedBalances(b *testing.B, owner *pgxpool.Pool, tenant string, chart []reporting.Account, years int) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	const events = 1_000_000
	for y := 2025 - years + 1; y <= 2025; y++ {
		for m := 1; m <= 12; m++ {
			debit := make([]int64, len(chart)) // cents
			credit := make([]int64, len(chart))
			for range events / 12 {
				cents := 100 + rng.Int64N(1_000_000)
				debit[rng.IntN(len(chart))] += cents
				credit[rng.IntN(len(chart))] += cents
			}
			accounts := make([]string, len(chart))
			ds := make([]string, len(chart))
			cs := make([]string, len(chart))
			for i, a := range chart {
				accounts[i] = a.Number
				ds[i] = fmt.Sprintf("%d.%02d", debit[i]/100, debit[i]%100)
				cs[i] = fmt.Sprintf("%d.%02d", credit[i]/100, credit[i]%100)
			}
			_, err := owner.Exec(ctx, `INSERT INTO reporting.balances (tenant_id, account, period, debit, credit)
				SELECT $1, a, $2, d::numeric, c::numeric FROM unnest($3::text[], $4::text[], $5::text[]) AS u(a, d, c)`,
				tenant, fmt.Sprintf("%d-%02d", y, m), accounts, ds, cs)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := owner.Exec(ctx, `INSERT INTO reporting.balance_years (tenant_id, account, year, debit, credit)
		SELECT tenant_id, account, left(period, 4)::int, sum(debit), sum(credit) FROM reporting.balances
		WHERE tenant_id = $1 GROUP BY 1, 2, 3`, tenant); err != nil {
		b.Fatal(err)
	}
	if _, err := owner.Exec(ctx, "INSERT INTO reporting.tenant_heads (tenant_id, last_number) VALUES ($1, $2)", tenant, events*years); err != nil {
		b.Fatal(err)
	}
	if _, err := owner.Exec(ctx, "ANALYZE reporting.balances; ANALYZE reporting.balance_years"); err != nil {
		b.Fatal(err)
	}
}

func benchService(b *testing.B) (*reporting.Service, *pgxpool.Pool, []reporting.Account) {
	b.Helper()
	ctx := context.Background()
	url := testkit.Postgres(b, postgres.Migrations)
	owner, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(owner.Close)
	pool, err := db.Open(ctx, url, postgres.Migrations.Role, 8)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	chart := benchChart()
	svc := reporting.New(postgres.New(pool), benchLedger{chart}, benchTenants{}, nil)
	return svc, owner, chart
}

// BenchmarkReports measures each report on a tenant whose balances are
// those of 1,000,000 journal events over 1,000 accounts (1,000 × 12 month
// rows), and with two more such years before it (opening balances). SuSa
// and Bilanz must stay within 100 ms.
func BenchmarkReports(b *testing.B) {
	svc, owner, chart := benchService(b)
	for _, years := range []int{1, 3} {
		tenant := uuid.NewString()
		seedBalances(b, owner, tenant, chart, years)
		for _, typ := range reporting.ReportTypes {
			b.Run(fmt.Sprintf("%s/years=%d", typ, years), func(b *testing.B) {
				ctx := context.Background()
				// Warm the chart and tenant caches, as a running service has them.
				if _, err := svc.Report(ctx, tenant, typ, "2025-06"); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					r, err := svc.Report(ctx, tenant, typ, "2025-06")
					if err != nil {
						b.Fatal(err)
					}
					if bl, ok := r.(reporting.Bilanz); ok && !bl.Balanced {
						b.Fatalf("unbalanced: %s / %s", bl.TotalAktiva, bl.TotalPassiva)
					}
				}
				per := b.Elapsed() / time.Duration(b.N)
				b.ReportMetric(float64(per.Microseconds())/1000, "ms/report")
				if (typ == reporting.ReportSuSa || typ == reporting.ReportBilanz) && per > 100*time.Millisecond {
					b.Errorf("%s takes %v, more than 100 ms", typ, per)
				}
			})
		}
	}
}

// BenchmarkApplyPosted measures the consumer's transaction: one event of
// two lines (an invoice with VAT) per transaction, and batches of 64
// events of one tenant as the consumer folds them when they queue up.
func BenchmarkApplyPosted(b *testing.B) {
	svc, _, chart := benchService(b)
	for _, batch := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			tenant := uuid.NewString()
			rng := rand.New(rand.NewPCG(1, 2))
			var next int64 = 1
			evs := make([]ledgerv1.IntentPosted, batch)
			for b.Loop() {
				for i := range evs {
					month := fmt.Sprintf("2025-%02d", 1+rng.IntN(12))
					evs[i] = ledgerv1.IntentPosted{TenantID: tenant, Period: month, BookingDate: month + "-15", FirstNumber: next, LastNumber: next + 1,
						Events: []ledgerv1.EventLine{
							{JournalNumber: next, AccountDebit: chart[rng.IntN(len(chart))].Number, AccountCredit: "4400", Amount: "100.00"},
							{JournalNumber: next + 1, AccountDebit: chart[rng.IntN(len(chart))].Number, AccountCredit: "3806", Amount: "19.00"},
						}}
					next += 2
				}
				if err := svc.ApplyPosted(ctx, evs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
