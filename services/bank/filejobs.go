package bank

import (
	"context"
	"time"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// FileJob is a statement file import waiting for, or held by, an import
// worker. BankAccountID is the route's account, "" for an import by IBAN.
type FileJob struct {
	ID            string
	BankAccountID string
	Upload        gatewayv1.UploadRequest
}

// FileJobStore keeps the file jobs.
type FileJobStore interface {
	// CreateFileJob records a queued job and, in the same transaction,
	// its command for the import workers (bankv1.SubjectImportCommand,
	// through the outbox): a process that dies right after it never
	// leaves a job that no worker will take.
	CreateFileJob(ctx context.Context, tenantID string, j FileJob) error
	// ClaimFileJob marks a queued or running job running for this worker;
	// ok is false for a job that is finished (or unknown).
	ClaimFileJob(ctx context.Context, tenantID, id string) (j FileJob, ok bool, err error)
	FinishFileJob(ctx context.Context, tenantID, id string, res *bankv1.FileImportResult, jerr *bankv1.JobError) error
	// FileJobProgress records how many entries a running job has written,
	// outside the import's transaction so that GET /v1/bank-imports/{id}
	// sees it.
	FileJobProgress(ctx context.Context, tenantID, id string, rowsDone int) error
	// FileJob reads a job as the API shows it; found is false for an id
	// that is no job.
	FileJob(ctx context.Context, tenantID, id string) (j bankv1.ImportJob, found bool, err error)
	// DropFileJob deletes a failed job.
	DropFileJob(ctx context.Context, tenantID, id string) error
}

// progressEvery is how often a running job records its progress at most.
const progressEvery = 250 * time.Millisecond

// jobPoll is how often a request waiting for its job looks at it.
const jobPoll = 50 * time.Millisecond

// WithJobs runs file imports as jobs of the import workers; a request
// waits up to wait for its job and otherwise answers the job resource.
func (s *Service) WithJobs(wait time.Duration) *Service {
	s.files.jobs, s.files.wait = true, wait
	return s
}

// SubmitFile imports a statement file through the job queue: the job is
// queued and the call waits for it. A job done in time answers its
// result; one that failed its error; one still queued or running the job
// resource (job non-nil), to be fetched with GET /v1/bank-imports/{id}.
// Without a queue the import runs in the call.
func (s *Service) SubmitFile(ctx context.Context, tenantID, accountID string, in gatewayv1.UploadRequest) (*bankv1.FileImportResult, *bankv1.ImportJob, error) {
	if !s.files.jobs {
		r, err := s.ImportFile(ctx, tenantID, accountID, in)
		if err != nil {
			return nil, nil, err
		}
		return &r, nil, nil
	}
	drop := func() { _ = s.files.uploads.Delete(context.WithoutCancel(ctx), in.Upload.Bucket, in.Upload.Name) }
	if err := checkUpload(in.Upload); err != nil {
		drop()
		return nil, nil, err
	}
	if accountID != "" {
		if !ValidID(accountID) {
			drop()
			return nil, nil, notFound(accountID)
		}
		if _, err := s.store.Account(ctx, tenantID, accountID); err != nil {
			drop()
			return nil, nil, err
		}
	}
	j := FileJob{ID: newID(), BankAccountID: accountID, Upload: in}
	if err := s.store.CreateFileJob(ctx, tenantID, j); err != nil {
		drop()
		return nil, nil, err
	}
	deadline := time.Now().Add(s.files.wait)
	for {
		job, _, err := s.store.FileJob(ctx, tenantID, j.ID)
		if err != nil {
			return nil, nil, err
		}
		switch job.State {
		case "done":
			return job.Result, nil, nil
		case "failed":
			// The caller hears of the refusal now; like any refused
			// request it leaves nothing behind.
			if err := s.store.DropFileJob(context.WithoutCancel(ctx), tenantID, j.ID); err != nil {
				return nil, nil, err
			}
			e := errs.E(job.Error.Code, "%s", job.Error.Error)
			for _, d := range job.Error.Details {
				e.Details = append(e.Details, errs.Field(d.Field, d.Issue))
			}
			return nil, nil, e
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, &job, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(jobPoll):
		}
	}
}

// RunFileJob is an import worker's part: it takes the job, imports the
// file and records the result or the refusal. An internal failure is
// returned, so the job is delivered again; the file stays in the bucket
// until the job is finished, so a worker that dies after the import was
// written finds the file again, imported already, and writes nothing twice.
func (s *Service) RunFileJob(ctx context.Context, tenantID, jobID string) error {
	j, ok, err := s.store.ClaimFileJob(ctx, tenantID, jobID)
	if err != nil || !ok {
		return err
	}
	var last time.Time
	progress := func(rows int) {
		if time.Since(last) < progressEvery {
			return
		}
		last = time.Now()
		// Progress is for the client's eyes only: a failed write of it
		// must not fail the import.
		_ = s.store.FileJobProgress(ctx, tenantID, jobID, rows)
	}
	res, err := s.importFile(ctx, tenantID, j.BankAccountID, j.Upload, false, progress)
	var jerr *bankv1.JobError
	if err != nil {
		code, msg, details := errs.Public(err)
		if errs.Status(code) >= 500 {
			return err
		}
		jerr = &bankv1.JobError{Error: msg, Code: code}
		for _, d := range details {
			jerr.Details = append(jerr.Details, bankv1.ErrorDetail{Field: d.Field, Issue: d.Issue})
		}
		if err := s.store.FinishFileJob(ctx, tenantID, jobID, nil, jerr); err != nil {
			return err
		}
	} else if err := s.store.FinishFileJob(ctx, tenantID, jobID, &res, nil); err != nil {
		return err
	}
	_ = s.files.uploads.Delete(context.WithoutCancel(ctx), j.Upload.Upload.Bucket, j.Upload.Upload.Name)
	return nil
}
