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

// RebuildRequest is the body of SubjectRebuild. The tenant rebuilt is the
// one of the caller's signed principal; TenantID is for callers to name it
// and never travels in the body (a body naming one is refused).
type RebuildRequest struct {
	TenantID string `json:"tenant_id,omitempty"`
}

// Export jobs: an export built in the background into stored pieces,
// fetched when done.
const (
	SubjectExportJobCreate = "reporting.v1.export_job_create" // body ExportJobRequest; 202 ExportJob
	SubjectExportJobGet    = "reporting.v1.export_job_get"    // param id; ExportJob
	SubjectExportJobFile   = "reporting.v1.export_job_file"   // param id; the file, streamed in chunks

	// StreamJobs is the work-queue stream of export job commands; each
	// message (ExportJobCommand) is taken by one worker.
	StreamJobs = "REPORTING_JOBS"
	// JobsFilter covers the reporting commands.
	JobsFilter = "cmd.reporting.v1.>"
	// SubjectExportCommand asks a worker to build an export job's file.
	SubjectExportCommand = "cmd.reporting.v1.export"
)

// Export job types and statuses.
const (
	ExportTypeDATEV = "datev"
	ExportTypeGoBD  = "gobd"

	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// ExportJobRequest is the body of POST /v1/reports/exports: type "datev"
// with From and To (YYYY-MM-DD), or "gobd" with Year (YYYY).
type ExportJobRequest struct {
	Type string `json:"type"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Year string `json:"year,omitempty"`
}

// ExportJobCommand is the work-queue message of a job.
type ExportJobCommand struct {
	JobID    string `json:"job_id"`
	TenantID string `json:"tenant_id"`
}
