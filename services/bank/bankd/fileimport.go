package bankd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/camt"
	"github.com/ledgerplatform/ledger/services/bank/csvimport"
	"github.com/ledgerplatform/ledger/services/bank/mt940"
)

// FileRoutes are the routes of statement file import.
func FileRoutes(svc *bank.Service) []natsx.Route {
	return []natsx.Route{
		{Subject: bankv1.SubjectStatementsUpload, Decode: withID[gatewayv1.UploadRequest], Endpoint: natsx.Typed(func(ctx context.Context, r idBody[gatewayv1.UploadRequest]) (*natsx.Response, error) {
			res, err := svc.ImportFile(ctx, natsx.Claims(ctx).TenantID, r.ID, r.Body)
			if err != nil {
				return nil, err
			}
			return natsx.Created(res), nil
		})},
		{Subject: bankv1.SubjectStatementsImportFile, Decode: natsx.JSON[gatewayv1.UploadRequest], Endpoint: natsx.Typed(func(ctx context.Context, in gatewayv1.UploadRequest) (*natsx.Response, error) {
			res, err := svc.ImportFile(ctx, natsx.Claims(ctx).TenantID, "", in)
			if err != nil {
				return nil, err
			}
			return natsx.Created(res), nil
		})},
		{Subject: bankv1.SubjectImportsGet, Decode: param("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (bankv1.ImportJob, error) {
			return svc.ImportJob(ctx, natsx.Claims(ctx).TenantID, id)
		})},
	}
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

// Uploads reads the gateway's uploads bucket.
type Uploads struct {
	JS jetstream.JetStream

	mu  sync.Mutex
	obs jetstream.ObjectStore
}

func (u *Uploads) store(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	if bucket != gatewayv1.UploadsBucket {
		return nil, errs.Invalid("unknown uploads bucket", errs.Field("file", "unknown bucket"))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.obs != nil {
		return u.obs, nil
	}
	obs, err := u.JS.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, err
	}
	u.obs = obs
	return obs, nil
}

// Open implements bank.Uploads.
func (u *Uploads) Open(ctx context.Context, bucket, name string) (io.ReadCloser, error) {
	obs, err := u.store(ctx, bucket)
	if err != nil {
		return nil, err
	}
	r, err := obs.Get(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, errs.Invalid("the uploaded file is gone; send it again", errs.Field("file", "expired"))
	}
	return r, err
}

// Delete implements bank.Uploads.
func (u *Uploads) Delete(ctx context.Context, bucket, name string) error {
	obs, err := u.store(ctx, bucket)
	if err != nil {
		return err
	}
	return obs.Delete(ctx, name)
}
