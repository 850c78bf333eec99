// Package natsrpc exposes the reporting service over NATS: its route
// table, the consumer of the ledger's events that keeps the balance
// projection, the export job queue and the clients of its peers.
package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// Routes is the reporting service's route table. The exports and a job's
// file stream: the gateway asks again with each reply's Next-Cursor until
// there is none.
func Routes(svc *reporting.Service) []natsx.Route {
	return []natsx.Route{
		{Subject: reportingv1.SubjectReport, Decode: decodeReport,
			Endpoint: natsx.Typed(func(ctx context.Context, q reportQuery) (any, error) {
				return svc.Report(ctx, natsx.Claims(ctx).TenantID, q.Type, q.Period)
			})},
		// Internal: only reporting's own key (an operator's tool) may ask,
		// for the tenant of its signed principal. A rebuild runs in one
		// transaction and may take a while for a large journal; callers give
		// it a deadline to match.
		{Subject: reportingv1.SubjectRebuild, Callers: []string{"reporting"}, Decode: natsx.JSON[reportingv1.RebuildRequest],
			Endpoint: natsx.Typed(func(ctx context.Context, in reportingv1.RebuildRequest) (reporting.RebuildResult, error) {
				tenant, err := natsx.Tenant(ctx, in.TenantID)
				if err != nil {
					return reporting.RebuildResult{}, err
				}
				return svc.Rebuild(ctx, tenant)
			})},
		{Subject: reportingv1.SubjectDATEVExport, Decode: decodeDATEV,
			Endpoint: natsx.Typed(func(ctx context.Context, q datevQuery) (*natsx.Response, error) {
				return file(svc.DATEVExport(ctx, q.From, q.To, q.Cursor))
			})},
		{Subject: reportingv1.SubjectGoBDExport, Decode: decodeGoBD,
			Endpoint: natsx.Typed(func(ctx context.Context, q gobdQuery) (*natsx.Response, error) {
				return file(svc.GoBDExport(ctx, q.Year, q.Cursor))
			})},
		{Subject: reportingv1.SubjectExportJobCreate, Decode: natsx.JSON[reportingv1.ExportJobRequest], Idempotent: true,
			Endpoint: natsx.Typed(func(ctx context.Context, in reportingv1.ExportJobRequest) (*natsx.Response, error) {
				// The store saves the job with the key; the caller sees its public part.
				idem.Reply(ctx, func(v any) any { return &natsx.Response{Status: 202, Body: v.(reporting.ExportJob).Public()} })
				j, err := svc.CreateExportJob(ctx, in)
				if err != nil {
					return nil, err
				}
				return &natsx.Response{Status: 202, Body: j}, nil
			})},
		{Subject: reportingv1.SubjectExportJobGet, Decode: decodeJob,
			Endpoint: natsx.Typed(func(ctx context.Context, r jobRef) (reporting.ExportJob, error) {
				return svc.ExportJob(ctx, r.ID)
			})},
		{Subject: reportingv1.SubjectExportJobFile, Decode: decodeJob,
			Endpoint: natsx.Typed(func(ctx context.Context, r jobRef) (*natsx.Response, error) {
				return file(svc.ExportJobFile(ctx, r.ID, r.Cursor))
			})},
	}
}

// reportQuery is GET /v1/reports?type=&period=.
type reportQuery struct{ Type, Period string }

func decodeReport(_ context.Context, r *natsx.Request) (any, error) {
	return reportQuery{Type: r.Query.Get("type"), Period: r.Query.Get("period")}, nil
}

// datevQuery is a chunk of the DATEV export of from..to.
type datevQuery struct{ From, To, Cursor string }

func decodeDATEV(_ context.Context, r *natsx.Request) (any, error) {
	return datevQuery{From: r.Query.Get("from"), To: r.Query.Get("to"), Cursor: r.Cursor}, nil
}

// gobdQuery is a chunk of the GoBD export of a fiscal year.
type gobdQuery struct{ Year, Cursor string }

func decodeGoBD(_ context.Context, r *natsx.Request) (any, error) {
	return gobdQuery{Year: r.Query.Get("year"), Cursor: r.Cursor}, nil
}

// jobRef names an export job (path parameter id) and, for its file, a chunk.
type jobRef struct{ ID, Cursor string }

func decodeJob(_ context.Context, r *natsx.Request) (any, error) {
	return jobRef{ID: r.Param("id"), Cursor: r.Cursor}, nil
}

// file is the reply carrying one chunk of an export file.
func file(c reporting.ExportChunk, err error) (*natsx.Response, error) {
	if err != nil {
		return nil, err
	}
	data := c.Data
	if data == nil {
		data = []byte{} // Raw, not JSON, even when a chunk is empty
	}
	return &natsx.Response{Raw: data, ContentType: c.ContentType, NextCursor: c.Next,
		Disposition: reporting.ExportJobDisposition(c.Filename)}, nil
}
