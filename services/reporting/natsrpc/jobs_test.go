package natsrpc_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
	"github.com/ledgerplatform/ledger/services/reporting/natsrpc"
)

// Export jobs over real NATS (JetStream work queue) and Postgres, with the
// fake peers of the export tests.

// switchQueue is the real queue, or a queue that loses every command.
type switchQueue struct {
	q    natsrpc.JobQueue
	lose atomic.Bool
}

func (s *switchQueue) Enqueue(ctx context.Context, cmd reportingv1.ExportJobCommand) error {
	if s.lose.Load() {
		return nil
	}
	return s.q.Enqueue(ctx, cmd)
}

type jobEnv struct {
	*exportEnv
	queue   *switchQueue
	workers natsx.Consumer
}

// newJobEnv runs the service without its export workers (startWorkers
// starts them) and without the periodic sweep (the test sweeps).
func newJobEnv(t *testing.T, events int64) *jobEnv {
	t.Helper()
	e := &jobEnv{exportEnv: &exportEnv{peers: &exportPeers{n: events}}}
	e.rpc = startReporting(t, e.peers.routes(), func(env daemon.Env, svc *reporting.Service, p *daemon.Parts) {
		e.queue = &switchQueue{q: natsrpc.JobQueue{JS: env.JS}}
		svc.SetJobQueue(e.queue)
		e.workers = *consumer(t, p, natsrpc.ExportWorker, true)
		p.Loops = nil
	})
	return e
}

// startWorkers runs the export workers until the test ends.
func (e *jobEnv) startWorkers(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, err := natsx.Consume(ctx, e.JS, e.workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
}

func jobCtx(tenant string) context.Context {
	return auth.WithClaims(context.Background(), &auth.Claims{TenantID: tenant, KeyID: "k1", Scopes: []string{"auswertungen:read"}})
}

type jobBody struct {
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	Status    string            `json:"status"`
	Params    map[string]string `json:"params"`
	RowsDone  int64             `json:"rows_done"`
	RowsTotal *int64            `json:"rows_total"`
	Bytes     int64             `json:"bytes"`
	Error     *string           `json:"error"`
	FileURL   *string           `json:"file_url"`
	CreatedAt time.Time         `json:"created_at"`
}

func (e *jobEnv) create(t *testing.T, tenant, body, key string) (*natsx.Reply, jobBody) {
	t.Helper()
	ctx := jobCtx(tenant)
	if key != "" {
		ctx = natsx.WithIdempotencyKey(ctx, key)
	}
	r, err := e.client.Do(ctx, reportingv1.SubjectExportJobCreate, &natsx.Request{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	var j jobBody
	if r.ErrCode == "" {
		if err := json.Unmarshal(r.Body, &j); err != nil {
			t.Fatalf("%s: %v", r.Body, err)
		}
	}
	return r, j
}

func (e *jobEnv) get(t *testing.T, tenant, id string) (*natsx.Reply, jobBody) {
	t.Helper()
	r, err := e.client.Do(jobCtx(tenant), reportingv1.SubjectExportJobGet, &natsx.Request{Params: map[string][]string{"id": {id}}})
	if err != nil {
		t.Fatal(err)
	}
	var j jobBody
	if r.ErrCode == "" {
		_ = json.Unmarshal(r.Body, &j)
	}
	return r, j
}

func (e *jobEnv) waitDone(t *testing.T, id string) jobBody {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, j := e.get(t, exportTenant, id)
		if r.ErrCode != "" {
			t.Fatalf("%s: %s", r.ErrCode, r.Body)
		}
		if j.Status == reportingv1.JobDone || j.Status == reportingv1.JobFailed {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after 60s", id, j.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *jobEnv) file(t *testing.T, tenant, id string) (first *natsx.Reply, body []byte, chunks int) {
	t.Helper()
	return e.fetch(jobCtx(tenant), t, reportingv1.SubjectExportJobFile, &natsx.Request{Params: map[string][]string{"id": {id}}})
}

func TestExportJobsOverNATS(t *testing.T) {
	t.Parallel()
	e := newJobEnv(t, 30000)
	e.peers.hardLocked = true

	// Bad input is refused as by the GET routes.
	for _, body := range []string{`{"type":"pdf"}`, `{}`, `{"type":"datev","from":"2025-03-01","to":"2025-02-01"}`,
		`{"type":"datev","from":"2025-03-01"}`, `{"type":"gobd","year":"next"}`, `{"type":"gobd","year":"2025","from":"2025-01-01"}`,
		`{"type":"datev","from":"2025-01-01","to":"2026-01-31"}`, `{"type":"datev","oops":1}`} {
		if r, _ := e.create(t, exportTenant, body, ""); r.ErrCode != errs.InvalidInput || r.Status != 400 {
			t.Errorf("%s: %d %s %s", body, r.Status, r.ErrCode, r.Body)
		}
	}

	// Queued: the file is not there yet.
	r, dj := e.create(t, exportTenant, `{"type":"datev","from":"2025-01-01","to":"2025-12-31"}`, "key-1")
	if r.Status != 202 || dj.Status != reportingv1.JobQueued || dj.RowsDone != 0 || dj.Bytes != 0 || dj.FileURL != nil ||
		dj.Params["from"] != "2025-01-01" || dj.Params["to"] != "2025-12-31" || dj.Type != "datev" {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if again, j := e.create(t, exportTenant, `{"type":"datev","from":"2025-01-01","to":"2025-12-31"}`, "key-1"); again.Status != 202 || j.ID != dj.ID {
		t.Errorf("idempotent repeat: %d %s, want job %s", again.Status, again.Body, dj.ID)
	}
	if reused, _ := e.create(t, exportTenant, `{"type":"gobd","year":"2025"}`, "key-1"); reused.ErrCode != errs.IdempotencyKeyReused {
		t.Errorf("reused key: %s %s", reused.ErrCode, reused.Body)
	}
	if f, _, _ := e.file(t, exportTenant, dj.ID); f.ErrCode != errs.Conflict || f.Status != 409 {
		t.Errorf("file of a queued job: %d %s", f.Status, f.ErrCode)
	}
	_, gj := e.create(t, exportTenant, `{"type":"gobd","year":"2025"}`, "")

	e.startWorkers(t)
	dj = e.waitDone(t, dj.ID)
	if dj.Status != reportingv1.JobDone || dj.RowsDone != 30000 || dj.RowsTotal == nil || *dj.RowsTotal != 30000 || dj.Bytes == 0 ||
		dj.FileURL == nil || *dj.FileURL != "/v1/reports/exports/"+dj.ID+"/file" {
		t.Fatalf("DATEV job: %+v", dj)
	}
	for range 2 { // the file stays after a download
		first, body, chunks := e.file(t, exportTenant, dj.ID)
		wantFile(t, first, "text/csv; charset=windows-1252", "EXTF_Buchungsstapel_20250101_20251231.csv")
		if int64(len(body)) != dj.Bytes || chunks < 2 {
			t.Errorf("%d bytes in %d chunks, job says %d", len(body), chunks, dj.Bytes)
		}
		text, err := charmap.Windows1252.NewDecoder().Bytes(body)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(text), "\r\n"), "\r\n")
		if len(lines) != 2+30000 || !strings.HasPrefix(lines[0], `"EXTF";700;21;"Buchungsstapel";13;`) {
			t.Fatalf("%d lines, header %q", len(lines), lines[0])
		}
	}

	gj = e.waitDone(t, gj.ID)
	if gj.Status != reportingv1.JobDone || gj.RowsDone != 30000 {
		t.Fatalf("GoBD job: %+v", gj)
	}
	first, body, chunks := e.file(t, exportTenant, gj.ID)
	if first.ErrCode != "" || first.ContentType != "application/zip" || chunks < 2 || int64(len(body)) != gj.Bytes {
		t.Fatalf("GoBD file: %s %q %d chunks %d bytes (job %d)", first.ErrCode, first.ContentType, chunks, len(body), gj.Bytes)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	for _, f := range zr.File {
		if f.Name != "journal.csv" {
			continue
		}
		rc, _ := f.Open()
		b, err := io.ReadAll(rc)
		if err != nil || bytes.Count(b, []byte("\r\n")) != 30001 {
			t.Errorf("journal.csv: %d lines, %v", bytes.Count(b, []byte("\r\n")), err)
		}
	}

	// Another tenant sees nothing.
	const other = "3c9d8b1a-0000-4000-8000-0000000000e2"
	if r, _ := e.get(t, other, dj.ID); r.ErrCode != errs.NotFound {
		t.Errorf("other tenant's get: %s", r.ErrCode)
	}
	if r, _, _ := e.file(t, other, dj.ID); r.ErrCode != errs.NotFound {
		t.Errorf("other tenant's file: %s", r.ErrCode)
	}
	if r, _ := e.get(t, exportTenant, "not-a-uuid"); r.ErrCode != errs.NotFound {
		t.Errorf("malformed id: %s", r.ErrCode)
	}

	// The one-shot exports' cleanup leaves job files alone.
	ctx := context.Background()
	if _, err := e.Pool.Exec(ctx, `UPDATE reporting.export_blobs SET created_at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	if f, _, _ := e.download(t, reportingv1.SubjectGoBDExport, map[string]string{"year": "2025"}); f.ErrCode != "" {
		t.Fatalf("one-shot GoBD: %s", f.ErrCode)
	}
	if f, b, _ := e.file(t, exportTenant, dj.ID); f.ErrCode != "" || int64(len(b)) != dj.Bytes {
		t.Fatalf("job file after the one-shot cleanup: %s %d bytes", f.ErrCode, len(b))
	}

	// A lost command is queued again by the sweep.
	e.queue.lose.Store(true)
	_, lost := e.create(t, exportTenant, `{"type":"gobd","year":"2025"}`, "")
	e.queue.lose.Store(false)
	if _, err := e.Pool.Exec(ctx, `UPDATE reporting.export_jobs SET updated_at = now() - interval '10 minutes' WHERE id = $1`, lost.ID); err != nil {
		t.Fatal(err)
	}
	if _, requeued, err := e.svc.SweepJobs(ctx); err != nil || requeued != 1 {
		t.Fatalf("sweep requeued %d: %v", requeued, err)
	}
	if j := e.waitDone(t, lost.ID); j.Status != reportingv1.JobDone {
		t.Fatalf("requeued job: %+v", j)
	}

	// After a day, jobs and their files are gone.
	if _, err := e.Pool.Exec(ctx, `UPDATE reporting.export_jobs SET created_at = now() - interval '25 hours' WHERE id = $1`, dj.ID); err != nil {
		t.Fatal(err)
	}
	if dropped, _, err := e.svc.SweepJobs(ctx); err != nil || dropped != 1 {
		t.Fatalf("sweep dropped %d: %v", dropped, err)
	}
	if r, _ := e.get(t, exportTenant, dj.ID); r.ErrCode != errs.NotFound {
		t.Errorf("expired job: %s", r.ErrCode)
	}
	var left int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM reporting.export_blobs WHERE export_id = $1`, dj.ID).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d pieces of the expired job left (%v)", left, err)
	}
}

func TestExportJobFailure(t *testing.T) {
	t.Parallel()
	e := newJobEnv(t, 10)
	// A build that fails is recorded with its reason.
	r, j := e.create(t, exportTenant, `{"type":"datev","from":"2025-01-01","to":"2025-01-31"}`, "")
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if _, err := e.Pool.Exec(context.Background(), `UPDATE reporting.export_jobs SET params = '{"from":"2025-01-01","to":"bad"}' WHERE id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	e.startWorkers(t)
	j = e.waitDone(t, j.ID)
	if j.Status != reportingv1.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "INVALID_INPUT") || j.FileURL != nil {
		t.Fatalf("failed job: %+v", j)
	}
	if f, _, _ := e.file(t, exportTenant, j.ID); f.ErrCode != errs.Conflict {
		t.Errorf("file of a failed job: %s", f.ErrCode)
	}
}
