package reporting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Export jobs build a DATEV or GoBD export in the background: the request
// (POST /v1/reports/exports) is validated like the streamed GET routes,
// stored as a queued job with the creator's claims and handed to the work
// queue; a worker (RunExportJob) writes the file into the export pieces
// (ExportStore, export id = job id), reporting rows and bytes after every
// journal page, and the finished file is fetched piece by piece
// (ExportJobFile) as often as wanted until the job expires after jobTTL.
//
// A worker holds a job by a lease: the job's updated_at, refreshed while it
// works. Another delivery of the same job waits while the lease is fresh
// (ErrJobBusy) and starts the job over once it has lapsed; the attempt
// counter keeps the worker it replaced from writing on.

// ExportJob is an export job as the API shows it.
type ExportJob struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Status    string          `json:"status"`
	Params    json.RawMessage `json:"params"`
	RowsDone  int64           `json:"rows_done"`
	RowsTotal *int64          `json:"rows_total"`
	Bytes     int64           `json:"bytes"`
	Error     *string         `json:"error"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	FileURL   *string         `json:"file_url"`

	TenantID    string          `json:"-"`
	Claims      json.RawMessage `json:"-"` // the creator's auth.Claims
	Filename    string          `json:"-"`
	ContentType string          `json:"-"`
	Attempt     int             `json:"-"`
}

// JobStore keeps export jobs; the Store given to New implements it to
// offer them.
type JobStore interface {
	// CreateJob stores a new job.
	CreateJob(ctx context.Context, j ExportJob) error
	// Job returns a tenant's job; NOT_FOUND when there is none.
	Job(ctx context.Context, tenant, id string) (ExportJob, error)
	// ClaimJob takes a job for a worker: unless it is finished (returned
	// as it is) or running under a lease younger than lease (ErrJobBusy),
	// it becomes running with the next attempt, no progress and no pieces.
	ClaimJob(ctx context.Context, tenant, id string, lease time.Duration) (ExportJob, error)
	// JobProgress records the progress of a running attempt and renews its
	// lease; ErrJobLost when the attempt no longer holds the job.
	JobProgress(ctx context.Context, tenant, id string, attempt int, rows, bytes int64) error
	// FinishJob marks a running attempt done (rows_total = rows) or failed
	// (with errText; its pieces are dropped); ErrJobLost as JobProgress.
	FinishJob(ctx context.Context, tenant, id string, attempt int, status string, rows, bytes int64, errText string) error
	// StaleJobs returns, for all tenants, the jobs queued since before
	// queued and those running with a lease older than running.
	StaleJobs(ctx context.Context, queued, running time.Time) ([]ExportJob, error)
	// DeleteJobsBefore drops every tenant's jobs created before t with
	// their pieces, returning how many jobs went.
	DeleteJobsBefore(ctx context.Context, t time.Time) (int64, error)
}

// JobQueue hands a job to the workers.
type JobQueue interface {
	Enqueue(ctx context.Context, cmd reportingv1.ExportJobCommand) error
}

var (
	// ErrJobBusy: another worker holds the job under a fresh lease.
	ErrJobBusy = errors.New("reporting: export job is being worked on")
	// ErrJobLost: the attempt no longer holds the job.
	ErrJobLost = errors.New("reporting: export job taken over or gone")
)

// Job limits.
const (
	// jobTTL is how long a job and its file are kept.
	jobTTL = 24 * time.Hour
	// JobLease is how long a worker's hold on a job lasts without renewal.
	JobLease = 2 * time.Minute
	// jobQueuedTooLong is when a queued job is handed to the queue again.
	jobQueuedTooLong = 2 * time.Minute
)

type jobConfig struct {
	queue JobQueue
	lease time.Duration
}

func (c *jobConfig) leaseTime() time.Duration {
	if c.lease > 0 {
		return c.lease
	}
	return JobLease
}

// SetJobQueue gives the service the work queue of export jobs. Call it
// before serving.
func (s *Service) SetJobQueue(q JobQueue) { s.jobs.queue = q }

func (s *Service) jobStore() (JobStore, error) {
	js, ok := s.store.(JobStore)
	if !ok {
		return nil, fmt.Errorf("reporting: the store keeps no export jobs")
	}
	return js, nil
}

// callerJobs returns the caller's tenant and the job store.
func (s *Service) callerJobs(ctx context.Context) (string, JobStore, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return "", nil, err
	}
	store, err := s.jobStore()
	return tenant, store, err
}

// jobFileURL is where a done job's file is fetched.
func jobFileURL(id string) *string {
	u := "/v1/reports/exports/" + id + "/file"
	return &u
}

// Public fills what the API shows beyond the stored columns.
func (j ExportJob) Public() ExportJob {
	if j.Status == reportingv1.JobDone {
		j.FileURL = jobFileURL(j.ID)
	}
	return j
}

// datevJobParams and gobdJobParams are a job's params.
type datevJobParams struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type gobdJobParams struct {
	Year string `json:"year"`
}

// checkDATEV validates a DATEV export's range as the streamed export does
// and returns its dates.
func (s *Service) checkDATEV(ctx context.Context, tenant, from, to string) (time.Time, time.Time, error) {
	f, err := parseDay("from", from)
	if err != nil {
		return f, f, err
	}
	t, err := parseDay("to", to)
	if err != nil {
		return f, t, err
	}
	if t.Before(f) {
		return f, t, errs.Invalid("to must not be before from", errs.Field("to", "must not be before from"))
	}
	if _, err := s.datevHeader(ctx, tenant, f, t); err != nil {
		return f, t, err
	}
	return f, t, nil
}

func datevFilename(f, t time.Time) string {
	return "EXTF_Buchungsstapel_" + f.Format("20060102") + "_" + t.Format("20060102") + ".csv"
}

// CreateExportJob validates an export request as the streamed export routes
// do, stores it as a queued job of the caller and queues it.
func (s *Service) CreateExportJob(ctx context.Context, req reportingv1.ExportJobRequest) (ExportJob, error) {
	tenant, store, err := s.callerJobs(ctx)
	if err != nil {
		return ExportJob{}, err
	}
	if s.jobs.queue == nil {
		return ExportJob{}, fmt.Errorf("reporting: no export job queue (SetJobQueue)")
	}
	j := ExportJob{ID: uuid.NewString(), TenantID: tenant, Type: req.Type, Status: reportingv1.JobQueued}
	var params any
	switch req.Type {
	case reportingv1.ExportTypeDATEV:
		if req.Year != "" {
			return ExportJob{}, errs.Invalid("a DATEV export takes from and to", errs.Field("year", "not allowed for type datev"))
		}
		f, t, err := s.checkDATEV(ctx, tenant, req.From, req.To)
		if err != nil {
			return ExportJob{}, err
		}
		params = datevJobParams{From: req.From, To: req.To}
		j.Filename, j.ContentType = datevFilename(f, t), datevContentType
	case reportingv1.ExportTypeGoBD:
		if req.From != "" || req.To != "" {
			field := "from"
			if req.From == "" {
				field = "to"
			}
			return ExportJob{}, errs.Invalid("a GoBD export takes a year", errs.Field(field, "not allowed for type gobd"))
		}
		if _, _, err := s.gobdYear(ctx, req.Year); err != nil {
			return ExportJob{}, err
		}
		params = gobdJobParams{Year: req.Year}
		j.Filename, j.ContentType = gobdFilename(req.Year), gobdContentType
	default:
		return ExportJob{}, errs.Invalid("type must be datev or gobd", errs.Field("type", "required, datev or gobd"))
	}
	if j.Params, err = json.Marshal(params); err != nil {
		return ExportJob{}, err
	}
	if j.Claims, err = json.Marshal(auth.FromContext(ctx)); err != nil {
		return ExportJob{}, err
	}
	now := s.now().UTC()
	j.CreatedAt, j.UpdatedAt = now, now
	if err := store.CreateJob(ctx, j); err != nil {
		return ExportJob{}, errs.Wrap("store export job", err)
	}
	// A job whose command is lost stays queued and is queued again by
	// SweepJobs; the caller has its job either way.
	_ = s.jobs.queue.Enqueue(ctx, reportingv1.ExportJobCommand{JobID: j.ID, TenantID: tenant})
	return j.Public(), nil
}

// ExportJob returns one of the caller's jobs; NOT_FOUND for an unknown id.
func (s *Service) ExportJob(ctx context.Context, id string) (ExportJob, error) {
	tenant, store, err := s.callerJobs(ctx)
	if err != nil {
		return ExportJob{}, err
	}
	if uuid.Validate(id) != nil {
		return ExportJob{}, errs.NotFoundf("export job not found")
	}
	j, err := store.Job(ctx, tenant, id)
	if err != nil {
		return ExportJob{}, err
	}
	return j.Public(), nil
}

// ExportJobFile returns one chunk of a done job's file: cursor "" for the
// first piece, then each chunk's Next. The file stays until the job
// expires; CONFLICT while the job is not done.
func (s *Service) ExportJobFile(ctx context.Context, id, cursor string) (ExportChunk, error) {
	j, err := s.ExportJob(ctx, id)
	if err != nil {
		return ExportChunk{}, err
	}
	if j.Status != reportingv1.JobDone {
		return ExportChunk{}, errs.E(errs.Conflict, "the export job is %s; its file is there once it is done", j.Status)
	}
	seq := 0
	if cursor != "" {
		if seq, err = strconv.Atoi(cursor); err != nil || seq < 1 {
			return ExportChunk{}, errs.Invalid("malformed export cursor", errs.Field("cursor", "not a cursor of this export"))
		}
	}
	data, last, err := s.store.ExportBlob(ctx, j.TenantID, j.ID, seq)
	if errs.Is(err, errs.NotFound) {
		return ExportChunk{}, errExportGone
	}
	if err != nil {
		return ExportChunk{}, errs.Wrap("export piece", err)
	}
	out := ExportChunk{Data: data, ContentType: j.ContentType, Filename: j.Filename}
	if !last {
		out.Next = strconv.Itoa(seq + 1)
	}
	return out, nil
}

// ExportJobDisposition is the Content-Disposition of a job's file.
func ExportJobDisposition(filename string) string {
	return mime.FormatMediaType("attachment", map[string]string{"filename": filename})
}

// RunExportJob is the worker's part: it builds the job's file with the
// creator's claims and marks the job done or failed. It returns nil when the
// job is finished (or gone), ErrJobBusy while another worker holds it, and
// other errors when it should be tried again.
func (s *Service) RunExportJob(ctx context.Context, tenant, id string) error {
	store, err := s.jobStore()
	if err != nil {
		return err
	}
	j, err := store.ClaimJob(ctx, tenant, id, s.jobs.leaseTime())
	if errs.Is(err, errs.NotFound) {
		return nil // expired or never committed
	}
	if err != nil {
		return err
	}
	if j.Status != reportingv1.JobRunning {
		return nil
	}
	var claims auth.Claims
	if err := json.Unmarshal(j.Claims, &claims); err != nil || claims.TenantID != tenant {
		return store.FinishJob(ctx, tenant, id, j.Attempt, reportingv1.JobFailed, 0, 0, "the job's claims are unreadable")
	}
	jctx, cancel := context.WithCancelCause(auth.WithClaims(ctx, &claims))
	defer cancel(nil)

	w := &pieceWriter{ctx: jctx, store: s.store, tenant: tenant, id: id, size: s.export.blobSize()}
	var rows atomic.Int64
	progress := func(n int64) error {
		rows.Store(n)
		return store.JobProgress(jctx, tenant, id, j.Attempt, n, w.bytes.Load())
	}
	// Renew the lease while a page takes long (a chain verification, a
	// slow feed); stop working when it is lost.
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(s.jobs.leaseTime() / 4)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := store.JobProgress(jctx, tenant, id, j.Attempt, rows.Load(), w.bytes.Load()); errors.Is(err, ErrJobLost) {
					cancel(ErrJobLost)
					return
				}
			case <-jctx.Done():
				return
			}
		}
	}()
	switch j.Type {
	case reportingv1.ExportTypeDATEV:
		var p datevJobParams
		if err = json.Unmarshal(j.Params, &p); err == nil {
			err = s.buildDATEV(jctx, w, tenant, p, progress)
		}
	case reportingv1.ExportTypeGoBD:
		var p gobdJobParams
		if err = json.Unmarshal(j.Params, &p); err == nil {
			err = s.buildGoBD(jctx, w, tenant, p, progress)
		}
	default:
		err = errs.Invalid("unknown export type " + j.Type)
	}
	if err == nil {
		err = w.Close()
	}
	cancel(nil)
	<-renewed
	switch {
	case errors.Is(err, ErrJobLost), errors.Is(context.Cause(jctx), ErrJobLost):
		return nil // the job is another worker's now
	case ctx.Err() != nil:
		return ctx.Err() // shutting down: the job goes on after its lease
	case err != nil:
		return store.FinishJob(ctx, tenant, id, j.Attempt, reportingv1.JobFailed, rows.Load(), w.bytes.Load(), jobErrorText(err))
	}
	return store.FinishJob(ctx, tenant, id, j.Attempt, reportingv1.JobDone, rows.Load(), w.bytes.Load(), "")
}

// jobErrorText is what a failed job tells its creator: the message of a
// classified error, not internal detail.
func jobErrorText(err error) string {
	if code, msg, _ := errs.Public(err); code != errs.Internal {
		return code + ": " + msg
	}
	return "the export failed; create it again"
}

// buildDATEV writes the Buchungsstapel of from..to page by page.
func (s *Service) buildDATEV(ctx context.Context, w *pieceWriter, tenant string, p datevJobParams, progress func(int64) error) error {
	f, err := parseDay("from", p.From)
	if err != nil {
		return err
	}
	t, err := parseDay("to", p.To)
	if err != nil {
		return err
	}
	buf, err := s.datevHeader(ctx, tenant, f, t)
	if err != nil {
		return err
	}
	keys, err := s.taxKeys(ctx)
	if err != nil {
		return err
	}
	page := max(s.export.pageSize(), 2) // a record may need the next event
	var cur feedCursor
	var rows int64
	for first := true; ; first = false {
		feed, err := s.feed(ctx, ledgerv1.JournalFeedRequest{TenantID: tenant, After: cur.After, Limit: page, From: p.From, To: p.To})
		if err != nil {
			return err
		}
		if first {
			cur.Head = feed.Head
		}
		lines, done := boundPage(feed.Lines, cur.Head, page)
		var n int
		buf, n = appendDATEVRecords(buf, lines, keys, done)
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		rows += int64(n)
		if err := progress(rows); err != nil {
			return err
		}
		if done {
			return nil
		}
		cur.After = lines[n-1].JournalNumber
	}
}

// buildGoBD writes the GoBD archive of a fiscal year.
func (s *Service) buildGoBD(ctx context.Context, w *pieceWriter, tenant string, p gobdJobParams, progress func(int64) error) error {
	ten, start, err := s.gobdYear(ctx, p.Year)
	if err != nil {
		return err
	}
	return s.writeGoBD(ctx, w, tenant, ten, start, progress)
}

// SweepJobs drops jobs older than a day with their files and queues again
// the jobs whose command seems lost: queued for too long, or running under
// a lapsed lease. It returns how many jobs went and how many were queued.
func (s *Service) SweepJobs(ctx context.Context) (dropped int64, requeued int, err error) {
	store, err := s.jobStore()
	if err != nil {
		return 0, 0, err
	}
	now := s.now()
	if dropped, err = store.DeleteJobsBefore(ctx, now.Add(-jobTTL)); err != nil {
		return 0, 0, errs.Wrap("drop expired export jobs", err)
	}
	if s.jobs.queue == nil {
		return dropped, 0, nil
	}
	stale, err := store.StaleJobs(ctx, now.Add(-jobQueuedTooLong), now.Add(-2*s.jobs.leaseTime()))
	if err != nil {
		return dropped, 0, errs.Wrap("stale export jobs", err)
	}
	for _, j := range stale {
		if err := s.jobs.queue.Enqueue(ctx, reportingv1.ExportJobCommand{JobID: j.ID, TenantID: j.TenantID}); err != nil {
			return dropped, requeued, errs.Wrap("queue export job", err)
		}
		requeued++
	}
	return dropped, requeued, nil
}
