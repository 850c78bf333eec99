package natsrpc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// ExportWorker is the durable consumer of the export job queue.
const ExportWorker = "reporting-export-worker"

// registerJobs serves the export job routes; creating a job honours
// Idempotency-Key when keys is not nil.
func registerJobs(s *natsx.Server, svc *reporting.Service, keys idem.Store) error {
	var create endpoint.Endpoint = func(ctx context.Context, req any) (any, error) {
		var in reportingv1.ExportJobRequest
		if err := natsx.Decode(req.(*natsx.Request).Body, &in); err != nil {
			return nil, err
		}
		j, err := svc.CreateExportJob(ctx, in)
		if err != nil {
			return nil, err
		}
		return &natsx.Response{Status: 202, Body: j}, nil
	}
	if keys != nil {
		create = idem.Middleware(keys, reportingv1.SubjectExportJobCreate)(create)
	}
	if err := s.Handle(reportingv1.SubjectExportJobCreate, create); err != nil {
		return err
	}
	if err := s.Handle(reportingv1.SubjectExportJobGet, func(ctx context.Context, req any) (any, error) {
		return svc.ExportJob(ctx, req.(*natsx.Request).Param("id"))
	}); err != nil {
		return err
	}
	return s.Handle(reportingv1.SubjectExportJobFile, func(ctx context.Context, req any) (any, error) {
		r := req.(*natsx.Request)
		return exportResponse(svc.ExportJobFile(ctx, r.Param("id"), r.Cursor))
	})
}

// EnsureJobStream creates the work-queue stream of export job commands.
func EnsureJobStream(ctx context.Context, js jetstream.JetStream) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       reportingv1.StreamJobs,
		Subjects:   []string{reportingv1.JobsFilter},
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.WorkQueuePolicy,
		MaxAge:     48 * time.Hour,
		Duplicates: time.Minute,
	})
	return errs.Wrap("natsrpc.EnsureJobStream", err)
}

// JobQueue publishes export job commands to the work queue, with the job
// id as message id so a repeated publish within the duplicate window is
// dropped.
type JobQueue struct {
	JS  jetstream.JetStream
	Log *slog.Logger
}

var _ reporting.JobQueue = JobQueue{}

// Enqueue implements reporting.JobQueue.
func (q JobQueue) Enqueue(ctx context.Context, cmd reportingv1.ExportJobCommand) error {
	b, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	if _, err = q.JS.Publish(ctx, reportingv1.SubjectExportCommand, b, jetstream.WithMsgID(cmd.JobID)); err != nil {
		if q.Log != nil {
			q.Log.Warn("queueing export job failed; the sweep queues it again", "job", cmd.JobID, "err", err)
		}
		return errs.Wrap("natsrpc.JobQueue", err)
	}
	return nil
}

// WorkerConfig tunes ConsumeExportJobs; zero values take the defaults.
type WorkerConfig struct {
	// Workers build jobs in parallel. Default 2.
	Workers int
	// RetryDelay is how long a job that failed to run waits. Default 5s.
	RetryDelay time.Duration
	// BusyDelay is how long a job held by another worker waits. Default
	// half of reporting.JobLease.
	BusyDelay time.Duration
}

// ConsumeExportJobs runs the export workers on the job queue until ctx
// ends; the returned channel is closed when they have stopped. Each worker
// pulls one command at a time and runs it with Service.RunExportJob,
// keeping the message its own while it works.
func ConsumeExportJobs(ctx context.Context, js jetstream.JetStream, svc *reporting.Service, log *slog.Logger, cfg WorkerConfig) (<-chan struct{}, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = 5 * time.Second
	}
	if cfg.BusyDelay <= 0 {
		cfg.BusyDelay = reporting.JobLease / 2
	}
	if log == nil {
		log = slog.Default()
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, reportingv1.StreamJobs, jetstream.ConsumerConfig{
		Durable:       ExportWorker,
		FilterSubject: reportingv1.SubjectExportCommand,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, errs.Wrap("natsrpc.ConsumeExportJobs", err)
	}
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
				if err != nil {
					if ctx.Err() == nil {
						log.Warn("fetching export jobs failed", "consumer", ExportWorker, "err", err)
						sleep(ctx, time.Second)
					}
					continue
				}
				for msg := range batch.Messages() {
					runJob(ctx, svc, log, cfg, msg)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// runJob runs one command and settles its message.
func runJob(ctx context.Context, svc *reporting.Service, log *slog.Logger, cfg WorkerConfig, msg jetstream.Msg) {
	var cmd reportingv1.ExportJobCommand
	if err := json.Unmarshal(msg.Data(), &cmd); err != nil || cmd.JobID == "" || cmd.TenantID == "" {
		log.Error("dropping malformed export job command", "consumer", ExportWorker, "err", err)
		_ = msg.Term()
		return
	}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = msg.InProgress()
			case <-stop:
				return
			}
		}
	}()
	err := svc.RunExportJob(ctx, cmd.TenantID, cmd.JobID)
	close(stop)
	switch {
	case err == nil:
		if err := msg.Ack(); err != nil {
			log.Warn("ack failed", "consumer", ExportWorker, "err", err)
		}
	case errors.Is(err, reporting.ErrJobBusy):
		_ = msg.NakWithDelay(cfg.BusyDelay)
	default:
		if !errors.Is(err, context.Canceled) {
			log.Error("running export job failed; will retry", "consumer", ExportWorker, "job", cmd.JobID, "err", err)
		}
		_ = msg.NakWithDelay(cfg.RetryDelay)
	}
}
