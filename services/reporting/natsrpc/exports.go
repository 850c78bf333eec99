package natsrpc

import (
	"context"
	"mime"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// registerExports serves the DATEV and GoBD exports. Both stream: the
// gateway asks again with each reply's Next-Cursor until there is none.
func registerExports(s *natsx.Server, svc *reporting.Service) error {
	if err := s.Handle(reportingv1.SubjectDATEVExport, func(ctx context.Context, req any) (any, error) {
		r := req.(*natsx.Request)
		return exportResponse(svc.DATEVExport(ctx, r.Query.Get("from"), r.Query.Get("to"), r.Cursor))
	}); err != nil {
		return err
	}
	return s.Handle(reportingv1.SubjectGoBDExport, func(ctx context.Context, req any) (any, error) {
		r := req.(*natsx.Request)
		return exportResponse(svc.GoBDExport(ctx, r.Query.Get("year"), r.Cursor))
	})
}

func exportResponse(c reporting.ExportChunk, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	data := c.Data
	if data == nil {
		data = []byte{} // Raw, not JSON, even when a chunk is empty
	}
	return &natsx.Response{Raw: data, ContentType: c.ContentType, NextCursor: c.Next,
		Disposition: mime.FormatMediaType("attachment", map[string]string{"filename": c.Filename})}, nil
}

// ChainVerifier asks the ledger to verify the caller's hash chain over NATS
// (GET /v1/journal/verify), for the GoBD export.
type ChainVerifier struct{ Client *natsx.Client }

var _ reporting.ChainVerifier = ChainVerifier{}

// Verify implements reporting.ChainVerifier.
func (v ChainVerifier) Verify(ctx context.Context) (reporting.ChainStatus, error) {
	return ledgerv1.Client{C: v.Client}.VerifyChain(ctx)
}
