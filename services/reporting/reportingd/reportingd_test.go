package reportingd_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/natsrpc"
	"github.com/ledgerplatform/ledger/services/reporting/reportingd"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    reportingd.Config
		wantErr string
	}{
		{"defaults", nil, reportingd.Config{DatabaseURL: reportingd.DefaultDatabaseURL, NATSURL: reportingd.DefaultNATSURL, DBMaxConns: 10}, ""},
		{"everything", map[string]string{"DATABASE_URL": "postgres://db/ledger", "NATS_URL": "nats://nats:4222", "REPORTING_DB_MAX_CONNS": "25"},
			reportingd.Config{DatabaseURL: "postgres://db/ledger", NATSURL: "nats://nats:4222", DBMaxConns: 25}, ""},
		{"bad pool size", map[string]string{"REPORTING_DB_MAX_CONNS": "two"}, reportingd.Config{}, "REPORTING_DB_MAX_CONNS"},
		{"small pool", map[string]string{"REPORTING_DB_MAX_CONNS": "2"}, reportingd.Config{}, "REPORTING_DB_MAX_CONNS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := reportingd.LoadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

// Run migrates, consumes the ledger's events and answers reports, with the
// ledger and identity faked over NATS; it stops when its context ends.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := testkit.Postgres(t) // empty: Run migrates
	owner, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	_, nc := testkit.NATS(t)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	peers, err := natsx.NewServer(nc, natsx.ServerConfig{Name: "fake-peers", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer peers.Stop()
	tenant := uuid.NewString()
	line := ledgerv1.JournalLine{EventLine: ledgerv1.EventLine{JournalNumber: 1, AccountDebit: "1800", AccountCredit: "2900", Amount: "25000.00"},
		BookingDate: "2025-01-02", Period: "2025-01"}
	for subject, f := range map[string]func(context.Context, *natsx.Request) (any, error){
		ledgerv1.SubjectJournalFeed: func(ctx context.Context, r *natsx.Request) (any, error) {
			var in ledgerv1.JournalFeedRequest
			if err := json.Unmarshal(r.Body, &in); err != nil || in.TenantID != tenant {
				return nil, errs.NotFoundf("tenant has no journal")
			}
			feed := ledgerv1.JournalFeed{Lines: []ledgerv1.JournalLine{}, Last: in.After, Head: 1}
			if in.After < 1 {
				feed.Lines, feed.Last = append(feed.Lines, line), 1
			}
			return feed, nil
		},
		ledgerv1.SubjectAccountsList: func(ctx context.Context, r *natsx.Request) (any, error) {
			return map[string]any{"accounts": []reporting.Account{{Number: "1800", Name: "Bank", Type: "asset"}, {Number: "2900", Name: "Gezeichnetes Kapital", Type: "equity"}}, "total": 2}, nil
		},
		identityv1.SubjectTenantGet: func(ctx context.Context, r *natsx.Request) (any, error) {
			return identityv1.Tenant{ID: auth.FromContext(ctx).TenantID, FiscalYearStartMonth: 1}, nil
		},
	} {
		if err := peers.Handle(subject, func(ctx context.Context, req any) (any, error) { return f(ctx, req.(*natsx.Request)) }); err != nil {
			t.Fatal(err)
		}
	}

	runCtx, stop := context.WithCancel(ctx)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- reportingd.Run(runCtx, reportingd.Config{DBMaxConns: 4}, reportingd.Deps{Pool: owner, NC: nc, Log: log, Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not become ready")
	}

	// The first event of the tenant arrives after its journal began (the
	// stream lost the start): the projection catches up from the feed.
	js, _ := jetstream.New(nc)
	ev := ledgerv1.IntentPosted{TenantID: tenant, BookingDate: "2025-01-02", Period: "2025-01", FirstNumber: 1, LastNumber: 1,
		Events: []ledgerv1.EventLine{line.EventLine}}
	b, _ := json.Marshal(ev)
	if _, err := js.Publish(ctx, ledgerv1.EventIntentPosted, b); err != nil {
		t.Fatal(err)
	}
	client := &natsx.Client{NC: nc, Timeout: 10 * time.Second}
	claims := auth.WithClaims(ctx, &auth.Claims{TenantID: tenant, Scopes: []string{"auswertungen:read"}})
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := client.Do(claims, reportingv1.SubjectReport, &natsx.Request{Query: map[string][]string{"type": {"bilanz"}, "period": {"2025"}}})
		if err != nil {
			t.Fatal(err)
		}
		var bil reporting.Bilanz
		if r.ErrCode == "" && json.Unmarshal(r.Body, &bil) == nil && bil.TotalAktiva.String() == "25000" {
			if !bil.Balanced {
				t.Errorf("unbalanced: %s", r.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report with the posting: %s %s", r.ErrCode, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var res reporting.RebuildResult
	if err := client.Call(ctx, reportingv1.SubjectRebuild, nil, reportingv1.RebuildRequest{TenantID: tenant}, &res); err != nil || res.LastNumber != 1 {
		t.Errorf("rebuild: %+v %v", res, err)
	}
	if _, err := js.Consumer(ctx, ledgerv1.StreamEvents, natsrpc.BalancesConsumer); err != nil {
		t.Errorf("consumer %s: %v", natsrpc.BalancesConsumer, err)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
}
