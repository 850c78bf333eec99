package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/reportingv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/reporting"
)

// registerReports serves GET /v1/reports and the internal rebuild command.
func registerReports(s *natsx.Server, svc *reporting.Service) error {
	if err := s.Handle(reportingv1.SubjectReport, func(ctx context.Context, req any) (any, error) {
		c := auth.FromContext(ctx)
		if c == nil || c.TenantID == "" {
			return nil, errs.E(errs.Unauthenticated, "no authenticated tenant")
		}
		q := req.(*natsx.Request).Query
		return svc.Report(ctx, c.TenantID, q.Get("type"), q.Get("period"))
	}); err != nil {
		return err
	}
	// Internal: the tenant is in the body. A rebuild runs in one transaction
	// and may take a while for a large journal; callers give it a deadline
	// to match.
	return s.Handle(reportingv1.SubjectRebuild, func(ctx context.Context, req any) (any, error) {
		var in reportingv1.RebuildRequest
		if err := natsx.Decode(req.(*natsx.Request).Body, &in); err != nil {
			return nil, err
		}
		return svc.Rebuild(ctx, in.TenantID)
	})
}
