package payablesd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/contracts/rpc"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/payables"
)

// ExtractStream is the work queue of extraction jobs, which the payables
// service owns. A job waits there until an OCR worker took it; a week
// outlasts any outage the workers should have.
var ExtractStream = natsx.Stream{Name: payablesv1.StreamExtract, Subjects: []string{payablesv1.ExtractFilter}, WorkQueue: true,
	MaxAge: 7 * 24 * time.Hour, Duplicates: time.Minute}

// ExtractWorker is the durable consumer of the extraction queue.
const ExtractWorker = "payables-extract-worker"

// ExtractJobs is the OCR workers' consumer: each worker runs one
// extraction at a time (OCR is CPU-bound; more workers are more
// processes); a job that failed inside comes back after RetryDelay, and
// one whose worker died goes to another after AckWait.
func ExtractJobs(x *payables.Extractions, c ExtractSettings) natsx.Consumer {
	return natsx.Consumer{
		Stream: payablesv1.StreamExtract, Durable: ExtractWorker, Filter: payablesv1.SubjectExtractCommand,
		Workers: c.Workers, RetryDelay: c.RetryDelay, AckWait: c.AckWait,
		// Without a key natsx hands every message to its first worker;
		// keyed by the command (one extraction each) the jobs spread over
		// all of them. Their order does not matter.
		Key: func(m jetstream.Msg) string { return string(m.Data()) },
		Handle: natsx.Each(func(ctx context.Context, m jetstream.Msg) error {
			var cmd payablesv1.ExtractCommand
			if err := json.Unmarshal(m.Data(), &cmd); err != nil || cmd.ExtractionID == "" || cmd.TenantID == "" {
				return fmt.Errorf("%w: malformed extract command: %v", natsx.ErrPoison, err)
			}
			return x.Run(ctx, cmd.TenantID, cmd.ExtractionID)
		}),
	}
}

// ExtractSettings configure extraction.
type ExtractSettings struct {
	// Workers, PAYABLES_EXTRACT_WORKERS: extraction workers in this
	// process, default 1; 0 leaves the jobs to the payables-ocr workers.
	Workers int
	// AckWait, PAYABLES_EXTRACT_ACK_WAIT: how long after a worker's last
	// sign of life its job goes to another worker, default 2m (a live
	// worker signals every third of it, however long the OCR).
	AckWait time.Duration
	// Wait, PAYABLES_EXTRACT_WAIT: how long POST /v1/ocr/extract waits
	// for its extraction, default 25s (the gateway waits 30s).
	Wait time.Duration
	// RetryDelay is the pause before a job that failed inside is tried
	// again.
	RetryDelay time.Duration
}

// ExtractConfig reads the ExtractSettings from the environment.
func ExtractConfig(getenv func(string) string) (ExtractSettings, error) {
	c := ExtractSettings{Workers: 1, AckWait: 2 * time.Minute, Wait: payables.DefaultExtractWait, RetryDelay: 2 * time.Second}
	var err error
	if s := getenv("PAYABLES_EXTRACT_WORKERS"); s != "" {
		if c.Workers, err = strconv.Atoi(s); err != nil || c.Workers < 0 || c.Workers > 64 {
			return c, fmt.Errorf("PAYABLES_EXTRACT_WORKERS must be an integer from 0 to 64, not %q", s)
		}
	}
	if s := getenv("PAYABLES_EXTRACT_ACK_WAIT"); s != "" {
		if c.AckWait, err = time.ParseDuration(s); err != nil || c.AckWait < 3*time.Second || c.AckWait > time.Hour {
			return c, fmt.Errorf("PAYABLES_EXTRACT_ACK_WAIT must be a duration from 3s to 1h, not %q", s)
		}
	}
	if s := getenv("PAYABLES_EXTRACT_WAIT"); s != "" {
		if c.Wait, err = time.ParseDuration(s); err != nil || c.Wait <= 0 || c.Wait > 25*time.Second {
			return c, fmt.Errorf("PAYABLES_EXTRACT_WAIT must be a duration up to 25s (the gateway waits 30s), not %q", s)
		}
	}
	return c, nil
}

// APIConfig reads PAYABLES_API: "on" (the default) serves the payables
// routes, "off" makes the process an extraction (OCR) worker that serves
// none, so that OCR never shares a pod with requests.
func APIConfig(getenv func(string) string) (bool, error) {
	switch v := getenv("PAYABLES_API"); v {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, fmt.Errorf("PAYABLES_API must be on or off, not %q", v)
	}
}

// Ledger reads documents from the ledger (ledger.v1.documents.file),
// whose reply is the file's bytes, not JSON.
type Ledger struct{ C *natsx.Client }

// DocumentFile implements payables.DocumentFiles. The service asks as
// itself for the tenant: a worker has no caller, and a request's caller
// needs no journal scope to have a document read for payables.
func (l Ledger) DocumentFile(ctx context.Context, tenantID, id string) ([]byte, string, error) {
	r, err := l.C.Do(rpc.ForTenant(ctx, tenantID), ledgerv1.SubjectDocumentsFile, &natsx.Request{Params: url.Values{"id": {id}}})
	if err != nil {
		return nil, "", err
	}
	if r.ErrCode != "" {
		var b errs.Body
		_ = json.Unmarshal(r.Body, &b)
		return nil, "", &errs.Error{Code: r.ErrCode, Message: b.Error, Details: b.Details, Op: ledgerv1.SubjectDocumentsFile}
	}
	if len(r.Body) == 0 {
		return nil, "", errs.E(errs.FileNotFound, "the file of document %s is gone", id)
	}
	return r.Body, r.ContentType, nil
}

// Notifier wakes requests waiting for an extraction through core NATS.
type Notifier struct{ NC *nats.Conn }

// Notify implements payables.Notifier. A lost notification costs the
// waiter one poll interval, so a failed publish is not an error.
func (n Notifier) Notify(_ context.Context, extractionID string) {
	_ = n.NC.Publish(payablesv1.SubjectExtracted+extractionID, nil)
}

// Wait implements payables.Notifier.
func (n Notifier) Wait(_ context.Context, extractionID string) (<-chan struct{}, func(), error) {
	ch := make(chan struct{}, 1)
	sub, err := n.NC.Subscribe(payablesv1.SubjectExtracted+extractionID, func(*nats.Msg) {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("payablesd.Notifier: %w", err)
	}
	return ch, func() { _ = sub.Unsubscribe() }, nil
}
