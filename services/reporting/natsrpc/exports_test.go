package natsrpc_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/text/encoding/charmap"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// The export endpoints over real NATS and Postgres, with the ledger,
// identity and periods services played by a route table of fakes.

const exportTenant = "3c9d8b1a-0000-4000-8000-0000000000e1"

// exportPeers answers the subjects the exports call, for a journal of n
// generated events.
type exportPeers struct {
	n          int64
	feedCalls  atomic.Int64
	verified   atomic.Int64
	hardLocked bool
}

func exportLine(n int64) ledgerv1.JournalLine {
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(n%365))
	id := func(kind string) string {
		return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s-%d", kind, n)).String()
	}
	return ledgerv1.JournalLine{
		EventLine: ledgerv1.EventLine{ID: id("event"), JournalNumber: n, AccountDebit: "6815", AccountCredit: "1800",
			Amount: fmt.Sprintf("%d.%02d", n%5000, n%100), Description: fmt.Sprintf("Bürobedarf %d", n)},
		IntentID: id("intent"), BookingDate: day.Format(time.DateOnly), Period: day.Format("2006-01"), Source: "api",
		CapturedAt: day.Add(8 * time.Hour),
	}
}

func (p *exportPeers) routes() []natsx.Route {
	claimed := func(ctx context.Context) error {
		if c := auth.FromContext(ctx); c == nil || c.TenantID != exportTenant {
			return errs.E(errs.Unauthenticated, "no claims")
		}
		return nil
	}
	return []natsx.Route{
		fake(ledgerv1.SubjectJournalFeed, func(ctx context.Context, r *natsx.Request) (any, error) {
			p.feedCalls.Add(1)
			var fr ledgerv1.JournalFeedRequest
			if err := natsx.Decode(r.Body, &fr); err != nil {
				return nil, err
			}
			// The tenant is the one of reporting's signed principal.
			tenant, err := natsx.Tenant(ctx, fr.TenantID)
			if err != nil {
				return nil, err
			}
			if tenant != exportTenant || natsx.Caller(ctx) != "reporting" || fr.Limit < 1 || fr.Limit > 5000 {
				return nil, errs.Invalid("bad feed request")
			}
			f := ledgerv1.JournalFeed{Lines: []ledgerv1.JournalLine{}, Last: fr.After, Head: p.n}
			for n := fr.After + 1; n <= p.n && len(f.Lines) < fr.Limit; n++ {
				l := exportLine(n)
				if (fr.From == "" || l.BookingDate >= fr.From) && (fr.To == "" || l.BookingDate <= fr.To) {
					f.Lines, f.Last = append(f.Lines, l), n
				}
			}
			return f, nil
		}),
		fake(ledgerv1.SubjectTaxCodesList, func(ctx context.Context, r *natsx.Request) (any, error) {
			return answer(json.RawMessage(`{"tax_codes":[{"code":"VSt19","label":"Vorsteuer 19 %","kind":"input","rate":19.00,"datev_bu_key":"9"}]}`), claimed(ctx))
		}),
		fake(ledgerv1.SubjectAccountsList, func(ctx context.Context, r *natsx.Request) (any, error) {
			return answer(json.RawMessage(`{"accounts":[{"number":"1800","name":"Bank","type":"asset"},{"number":"6815","name":"Bürobedarf","type":"expense"}],"total":2}`), claimed(ctx))
		}),
		fake(ledgerv1.SubjectJournalVerify, func(ctx context.Context, r *natsx.Request) (any, error) {
			p.verified.Add(1)
			return answer(map[string]any{"ok": true, "events": p.n, "head_hash": "9f86d081884c7d65"}, claimed(ctx))
		}),
		fake(ledgerv1.SubjectJournalCheckpoints, func(ctx context.Context, r *natsx.Request) (any, error) {
			return answer(ledgerv1.CheckpointList{Checkpoints: []ledgerv1.Checkpoint{{JournalNumber: p.n, Hash: "9f86d081884c7d65",
				SignedAt: time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC), Reason: "lock 2025-12 hard-locked", KeyID: "0a1b2c3d4e5f6071",
				PublicKey: "ab", Signature: "cd", SignatureOK: true}}}, claimed(ctx))
		}),
		fake(identityv1.SubjectTenantGet, func(ctx context.Context, r *natsx.Request) (any, error) {
			return answer(identityv1.Tenant{ID: exportTenant, CompanyName: "Übersee Handel GmbH", FiscalYearStartMonth: 1,
				DATEVConsultantNumber: "29098", DATEVClientNumber: "55003"}, claimed(ctx))
		}),
		fake(periodsv1.SubjectStatus, func(ctx context.Context, r *natsx.Request) (any, error) {
			var sr periodsv1.StatusRequest
			if err := natsx.Decode(r.Body, &sr); err != nil {
				return nil, err
			}
			st := map[string]string{}
			if p.hardLocked {
				for m := 1; m <= 12; m++ {
					st[fmt.Sprintf("2025-%02d", m)] = ledgerv1.PeriodHardLocked
				}
			}
			return periodsv1.StatusReply{Statuses: st}, nil
		}),
	}
}

// answer is out, or err alone when there is one.
func answer(out any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return out, nil
}

type exportEnv struct {
	*rpc
	peers *exportPeers
}

func newExportEnv(t *testing.T, events int64) *exportEnv {
	t.Helper()
	peers := &exportPeers{n: events}
	return &exportEnv{rpc: startReporting(t, peers.routes(), nil), peers: peers}
}

// download fetches a streamed export as the gateway does (see fetch).
func (e *exportEnv) download(t *testing.T, subject string, query map[string]string) (first *natsx.Reply, body []byte, chunks int) {
	t.Helper()
	ctx := auth.WithClaims(context.Background(), &auth.Claims{TenantID: exportTenant, Scopes: []string{"auswertungen:read"}})
	req := &natsx.Request{Query: map[string][]string{}}
	for k, v := range query {
		req.Query.Set(k, v)
	}
	return e.fetch(ctx, t, subject, req)
}

func TestDATEVExportOverNATS(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t, 12000)
	e.peers.hardLocked = true
	first, body, chunks := e.download(t, reportingv1.SubjectDATEVExport, map[string]string{"from": "2025-01-01", "to": "2025-12-31"})
	wantFile(t, first, "text/csv; charset=windows-1252", "EXTF_Buchungsstapel_20250101_20251231.csv")
	if chunks != 3 {
		t.Errorf("%d chunks, want 3", chunks)
	}
	text, err := charmap.Windows1252.NewDecoder().Bytes(body)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\r\n"), "\r\n")
	if len(lines) != 2+12000 {
		t.Fatalf("%d lines, want 12002", len(lines))
	}
	header := strings.Split(lines[0], ";")
	if header[0] != `"EXTF"` || header[10] != "29098" || header[11] != "55003" || header[20] != "1" {
		t.Errorf("header %v", header[:21])
	}
	for i, l := range lines[2:] {
		f := strings.Split(l, ";")
		if len(f) != 125 || f[0] != strings.Replace(exportLine(int64(i+1)).Amount, ".", ",", 1) || f[13] != fmt.Sprintf(`"Bürobedarf %d"`, i+1) {
			t.Fatalf("record %d: %d fields %q %q", i+1, len(f), f[0], f[13])
		}
	}

	bad, _, _ := e.download(t, reportingv1.SubjectDATEVExport, map[string]string{"from": "2025-03-01", "to": "2025-02-01"})
	if bad.ErrCode != errs.InvalidInput || bad.Status != 400 {
		t.Errorf("to before from: %d %s", bad.Status, bad.ErrCode)
	}
	bad, _, _ = e.download(t, reportingv1.SubjectDATEVExport, map[string]string{"from": "2025-03-01"})
	if bad.ErrCode != errs.InvalidInput || !strings.Contains(string(bad.Body), `"field":"to"`) {
		t.Errorf("without to: %s %s", bad.ErrCode, bad.Body)
	}
}

func TestGoBDExportOverNATS(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t, 30000)
	first, body, chunks := e.download(t, reportingv1.SubjectGoBDExport, map[string]string{"year": "2025"})
	wantFile(t, first, "application/zip", "gobd-export-2025.zip")
	if chunks < 2 || len(body) < 1<<20 {
		t.Errorf("%d bytes in %d chunks: the test wants an archive over one 1 MiB piece", len(body), chunks)
	}
	if got := e.peers.verified.Load(); got != 1 {
		t.Errorf("chain verified %d times", got)
	}
	var left int
	if err := e.Pool.QueryRow(context.Background(), "SELECT count(*) FROM reporting.export_blobs").Scan(&left); err != nil || left != 0 {
		t.Errorf("%d pieces left after the download (%v)", left, err)
	}

	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], err = io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
	for _, name := range []string{"index.xml", "gdpdu-01-09-2004.dtd", "journal.csv", "accounts.csv", "tax_codes.csv", "chain.csv", "checkpoints.csv"} {
		if _, ok := files[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
	if n := bytes.Count(files["journal.csv"], []byte("\r\n")); n != 1+30000 {
		t.Errorf("journal.csv has %d lines, want 30001", n)
	}
	if !bytes.Contains(files["chain.csv"], []byte(`"ja";30000;"9f86d081884c7d65"`)) {
		t.Errorf("chain.csv: %s", files["chain.csv"])
	}
	if !bytes.Contains(files["checkpoints.csv"], []byte(`30000;"9f86d081884c7d65";"2025-12-31T23:00:00Z";"lock 2025-12 hard-locked";"`+exportTenant+`";"0a1b2c3d4e5f6071"`)) {
		t.Errorf("checkpoints.csv: %s", files["checkpoints.csv"])
	}

	// A cursor of the finished download is gone; bad years are refused.
	ctx := auth.WithClaims(context.Background(), &auth.Claims{TenantID: exportTenant})
	r, err := e.client.Do(ctx, reportingv1.SubjectGoBDExport, &natsx.Request{Query: map[string][]string{"year": {"2025"}}, Cursor: uuid.NewString() + ":1"})
	if err != nil || r.ErrCode != errs.NotFound {
		t.Errorf("stale cursor: %+v %v", r, err)
	}
	for _, year := range []string{"", "20255", "next"} {
		bad, _, _ := e.download(t, reportingv1.SubjectGoBDExport, map[string]string{"year": year})
		if bad.ErrCode != errs.InvalidInput || bad.Status != 400 {
			t.Errorf("year %q: %d %s", year, bad.Status, bad.ErrCode)
		}
	}
}
