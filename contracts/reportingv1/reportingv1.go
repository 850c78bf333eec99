// Package reportingv1 is the contract of the reporting service.
package reportingv1

// Request/reply subjects of the REST routes.
const (
	SubjectReport      = "reporting.v1.report"       // query type, period
	SubjectDATEVExport = "reporting.v1.datev_export" // query from, to; streamed in chunks
	SubjectGoBDExport  = "reporting.v1.gobd_export"  // query year; streamed in chunks
	// SubjectRebuild is internal: drop and rebuild a tenant's projection
	// from the ledger's journal feed. Body RebuildRequest.
	SubjectRebuild = "reporting.v1.rebuild"
)

// RebuildRequest names the tenant whose projection is rebuilt.
type RebuildRequest struct {
	TenantID string `json:"tenant_id"`
}
