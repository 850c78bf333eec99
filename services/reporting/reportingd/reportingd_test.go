package reportingd_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/natsrpc"
	"github.com/ledgerplatform/ledger/services/reporting/postgres"
	"github.com/ledgerplatform/ledger/services/reporting/reportingd"
)

// The declared service migrates, owns the job queue, consumes the ledger's
// events and answers reports, with the ledger and identity faked over NATS;
// testkit stops it at the end and fails the test if it does not stop cleanly.
func TestService(t *testing.T) {
	ctx := context.Background()
	h := testkit.NewRPC(t)
	tenant := uuid.NewString()
	line := ledgerv1.JournalLine{EventLine: ledgerv1.EventLine{JournalNumber: 1, AccountDebit: "1800", AccountCredit: "2900", Amount: "25000.00"},
		BookingDate: "2025-01-02", Period: "2025-01"}
	fake := func(subject string, f func(context.Context, *natsx.Request) (any, error)) natsx.Route {
		return natsx.Route{Subject: subject, Internal: true, Endpoint: natsx.Typed(f)}
	}
	peers := []natsx.Route{
		fake(ledgerv1.SubjectJournalFeed, func(ctx context.Context, r *natsx.Request) (any, error) {
			var in ledgerv1.JournalFeedRequest
			// The tenant is the one of reporting's signed principal.
			if err := json.Unmarshal(r.Body, &in); err != nil || in.TenantID != "" || natsx.Claims(ctx) == nil || natsx.Claims(ctx).TenantID != tenant {
				return nil, errs.NotFoundf("tenant has no journal")
			}
			feed := ledgerv1.JournalFeed{Lines: []ledgerv1.JournalLine{}, Last: in.After, Head: 1}
			if in.After < 1 {
				feed.Lines, feed.Last = append(feed.Lines, line), 1
			}
			return feed, nil
		}),
		fake(ledgerv1.SubjectAccountsList, func(context.Context, *natsx.Request) (any, error) {
			return map[string]any{"accounts": []reporting.Account{{Number: "1800", Name: "Bank", Type: "asset"}, {Number: "2900", Name: "Gezeichnetes Kapital", Type: "equity"}}, "total": 2}, nil
		}),
		fake(identityv1.SubjectTenantGet, func(ctx context.Context, _ *natsx.Request) (any, error) {
			return identityv1.Tenant{ID: auth.FromContext(ctx).TenantID, FiscalYearStartMonth: 1}, nil
		}),
	}
	h.Start(daemon.Service{Name: "fake-peers", Build: func(context.Context, daemon.Env) (daemon.Parts, error) {
		return daemon.Parts{Routes: peers}, nil
	}}, nil)

	// Started before the ledger, the service waits for the ledger's
	// stream instead of creating it.
	// The service's environment is the shared daemon's
	// (daemon.TestLoadConfig), under its name.
	svc, err := reportingd.Service(func(string) string { return "" })
	if err != nil || svc.Name != "reporting" || svc.DB.Schema != "reporting" {
		t.Fatalf("declared %q on schema %q, %v", svc.Name, svc.DB.Schema, err)
	}
	url := testkit.Postgres(t) // empty: the daemon migrates
	h.Start(svc, map[string]string{"DATABASE_URL": url, "REPORTING_DB_MAX_CONNS": "4"})
	owner, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := h.JS.Stream(ctx, ledgerv1.StreamEvents); err == nil {
		t.Fatal("reporting created the ledger's stream")
	}
	if info, err := h.JS.Stream(ctx, reportingv1.StreamJobs); err != nil {
		t.Errorf("job stream: %v", err)
	} else if c, _ := info.Info(ctx); c.Config.Retention.String() != "WorkQueue" {
		t.Errorf("job stream retention %s", c.Config.Retention)
	}
	if err := (natsx.Stream{Name: ledgerv1.StreamEvents, Subjects: []string{ledgerv1.EventsFilter}}).Ensure(ctx, h.JS); err != nil {
		t.Fatal(err)
	}

	// The first event of the tenant arrives after its journal began (the
	// stream lost the start): the projection catches up from the feed.
	ev := ledgerv1.IntentPosted{TenantID: tenant, BookingDate: "2025-01-02", Period: "2025-01", FirstNumber: 1, LastNumber: 1,
		Events: []ledgerv1.EventLine{line.EventLine}}
	b, _ := json.Marshal(ev)
	if _, err := h.JS.Publish(ctx, ledgerv1.EventIntentPosted, b); err != nil {
		t.Fatal(err)
	}
	claims := &auth.Claims{TenantID: tenant, Scopes: []string{"auswertungen:read"}}
	var last testkit.Reply
	testkit.Eventually(t, "a report with the posting", func() bool {
		var bil reporting.Bilanz
		last = h.Call(reportingv1.SubjectReport, testkit.Rq{As: claims, Query: map[string][]string{"type": {"bilanz"}, "period": {"2025"}}})
		if last.Code == "" && json.Unmarshal(last.Body, &bil) == nil && bil.TotalAktiva.String() == "25000" {
			if !bil.Balanced {
				t.Errorf("unbalanced: %s", last.Body)
			}
			return true
		}
		return false
	})
	var res reporting.RebuildResult
	h.OK(reportingv1.SubjectRebuild, testkit.Rq{Service: "reporting", As: &auth.Claims{TenantID: tenant}}, 200, &res)
	if res.LastNumber != 1 {
		t.Errorf("rebuild: %+v", res)
	}
	// The consumer attaches once the ledger's stream is there.
	testkit.Eventually(t, "consumer "+natsrpc.BalancesConsumer, func() bool {
		_, err := h.JS.Consumer(ctx, ledgerv1.StreamEvents, natsrpc.BalancesConsumer)
		return err == nil
	})
	var migrated bool
	if err := owner.QueryRow(ctx, "SELECT to_regclass('reporting.idempotency_keys') IS NOT NULL AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", postgres.Migrations.Role).Scan(&migrated); err != nil || !migrated {
		t.Errorf("schema migrated: %v %v", migrated, err)
	}

}
