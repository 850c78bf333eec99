package natsrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// ExportWorker is the durable consumer of the export job queue.
const ExportWorker = "reporting-export-worker"

// JobStream is the work-queue stream of export job commands, which the
// reporting service owns.
var JobStream = natsx.Stream{Name: reportingv1.StreamJobs, Subjects: []string{reportingv1.JobsFilter}, WorkQueue: true,
	MaxAge: 48 * time.Hour, Duplicates: time.Minute}

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

// ExportJobs is the consumer of the job queue: two workers each build one
// job at a time with Service.RunExportJob (the shared consumer keeps the
// message theirs while they work). A job another worker holds under a
// fresh lease (reporting.ErrJobBusy) comes back after half a lease, when
// the holder has either finished or lost it; a job that failed to run comes
// back after RetryDelay.
func ExportJobs(svc *reporting.Service) natsx.Consumer {
	return natsx.Consumer{
		Stream: reportingv1.StreamJobs, Durable: ExportWorker, Filter: reportingv1.SubjectExportCommand,
		Workers: 2, RetryDelay: 5 * time.Second,
		Handle: natsx.Each(func(ctx context.Context, m jetstream.Msg) error {
			var cmd reportingv1.ExportJobCommand
			if err := json.Unmarshal(m.Data(), &cmd); err != nil || cmd.JobID == "" || cmd.TenantID == "" {
				return fmt.Errorf("%w: malformed export job command: %v", natsx.ErrPoison, err)
			}
			err := svc.RunExportJob(ctx, cmd.TenantID, cmd.JobID)
			if errors.Is(err, reporting.ErrJobBusy) {
				return natsx.Later(reporting.JobLease / 2)
			}
			return err
		}),
	}
}
