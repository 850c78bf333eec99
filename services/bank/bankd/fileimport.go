package bankd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/camt"
	"github.com/ledgerplatform/ledger/services/bank/csvimport"
	"github.com/ledgerplatform/ledger/services/bank/mt940"
)

// FileRoutes are the routes of statement file import: 201 with the
// result when the job is done within the wait, else 202 with the job.
func FileRoutes(svc *bank.Service) []natsx.Route {
	answer := func(res *bankv1.FileImportResult, job *bankv1.ImportJob, err error) (*natsx.Response, error) {
		switch {
		case err != nil:
			return nil, err
		case job != nil:
			return &natsx.Response{Status: 202, Body: job}, nil
		}
		return natsx.Created(res), nil
	}
	return []natsx.Route{
		{Subject: bankv1.SubjectStatementsUpload, Decode: natsx.DecodeWithID[gatewayv1.UploadRequest], Endpoint: natsx.Typed(func(ctx context.Context, r natsx.WithID[gatewayv1.UploadRequest]) (*natsx.Response, error) {
			return answer(svc.SubmitFile(ctx, natsx.Claims(ctx).TenantID, r.ID, r.Body))
		})},
		{Subject: bankv1.SubjectStatementsImportFile, Decode: natsx.JSON[gatewayv1.UploadRequest], Endpoint: natsx.Typed(func(ctx context.Context, in gatewayv1.UploadRequest) (*natsx.Response, error) {
			return answer(svc.SubmitFile(ctx, natsx.Claims(ctx).TenantID, "", in))
		})},
		{Subject: bankv1.SubjectImportsGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (bankv1.ImportJob, error) {
			return svc.ImportJob(ctx, natsx.Claims(ctx).TenantID, id)
		})},
	}
}

// ImportStream is the work queue of statement file jobs, which the bank
// owns.
var ImportStream = natsx.Stream{Name: bankv1.StreamImports, Subjects: []string{bankv1.ImportsFilter}, WorkQueue: true,
	MaxAge: 24 * time.Hour, Duplicates: time.Minute}

// ImportWorker is the durable consumer of the import job queue.
const ImportWorker = "bank-import-worker"

// ImportJobs is the import workers' consumer: each worker runs one job at
// a time; a job that failed inside (not a refused file) comes back after
// RetryDelay, and one whose worker died goes to another after AckWait.
func ImportJobs(svc *bank.Service, c ImportSettings) natsx.Consumer {
	return natsx.Consumer{
		Stream: bankv1.StreamImports, Durable: ImportWorker, Filter: bankv1.SubjectImportCommand,
		Workers: c.Workers, RetryDelay: 2 * time.Second, AckWait: c.AckWait,
		Handle: natsx.Each(func(ctx context.Context, m jetstream.Msg) error {
			var cmd bankv1.ImportCommand
			if err := json.Unmarshal(m.Data(), &cmd); err != nil || cmd.JobID == "" || cmd.TenantID == "" {
				return fmt.Errorf("%w: malformed import command: %v", natsx.ErrPoison, err)
			}
			return svc.RunFileJob(ctx, cmd.TenantID, cmd.JobID)
		}),
	}
}

// ImportSettings configure statement file imports.
type ImportSettings struct {
	// Workers, BANK_IMPORT_WORKERS: import workers in this process,
	// default 2; 0 leaves the jobs to a deployment of workers.
	Workers int
	// Wait, BANK_IMPORT_WAIT: how long a request waits for its job before
	// it answers 202, default 10s.
	Wait time.Duration
	// AckWait, BANK_IMPORT_ACK_WAIT: how long after a worker's last sign
	// of life its job goes to another worker, default 1m (a live worker
	// signals every third of it, however long the import).
	AckWait time.Duration
}

// ImportConfig reads the ImportSettings from the environment.
func ImportConfig(getenv func(string) string) (ImportSettings, error) {
	c := ImportSettings{Workers: 2, Wait: 10 * time.Second, AckWait: time.Minute}
	var err error
	if s := getenv("BANK_IMPORT_WORKERS"); s != "" {
		if c.Workers, err = strconv.Atoi(s); err != nil || c.Workers < 0 || c.Workers > 64 {
			return c, fmt.Errorf("BANK_IMPORT_WORKERS must be an integer from 0 to 64, not %q", s)
		}
	}
	if s := getenv("BANK_IMPORT_WAIT"); s != "" {
		if c.Wait, err = time.ParseDuration(s); err != nil || c.Wait < 0 || c.Wait > 25*time.Second {
			return c, fmt.Errorf("BANK_IMPORT_WAIT must be a duration up to 25s (the gateway waits 30s), not %q", s)
		}
	}
	if s := getenv("BANK_IMPORT_ACK_WAIT"); s != "" {
		if c.AckWait, err = time.ParseDuration(s); err != nil || c.AckWait < 3*time.Second || c.AckWait > time.Hour {
			return c, fmt.Errorf("BANK_IMPORT_ACK_WAIT must be a duration from 3s to 1h, not %q", s)
		}
	}
	return c, nil
}

// Parsers are the statement parsers of the bank.
func Parsers() bank.Parsers {
	return bank.Parsers{
		CAMT:  camt.Parse,
		MT940: mt940.Parse,
		CSV: func(r io.Reader, sink bank.Sink) error {
			return csvimport.Parse(r, csvSink{sink})
		},
		CSVMissing: func(err error) (string, bool) {
			var m *csvimport.MissingColumnsError
			if !errors.As(err, &m) {
				return "", false
			}
			if len(m.Missing) == 0 {
				return "no header row found", true
			}
			parts := make([]string, len(m.Missing))
			for i, c := range m.Missing {
				parts[i] = c.What + " (expected one of " + strings.Join(c.Expected, ", ") + ")"
			}
			return strings.Join(parts, "; "), true
		},
	}
}

// csvSink hands the rows the CSV parser leaves out to the import.
type csvSink struct{ bank.Sink }

func (c csvSink) RowError(e csvimport.RowError) error {
	if r, ok := c.Sink.(bank.RowErrorReporter); ok {
		issue := e.Reason
		if e.Value != "" {
			issue = fmt.Sprintf("%q %s", e.Value, e.Reason)
		}
		r.ReportRow(e.Row, e.Field, issue)
	}
	return nil
}
