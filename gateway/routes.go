package gateway

import (
	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/contracts/reportingv1"
)

// Route is one /v1 endpoint: who may call it and which NATS subject serves it.
type Route struct {
	Method  string
	Pattern string // path with {name} parameters
	Scope   string // module:action; "" means any authenticated caller
	Subject string
	Flags   Flags
}

// Flags adjust how a route is guarded.
type Flags uint16

const (
	// Public routes need no credential.
	Public Flags = 1 << iota
	// AuthLimited routes are rate-limited per client address with the
	// stricter auth limit instead of per key.
	AuthLimited
	// Operator routes also require the caller's tenant to be the operator.
	Operator
	// Upload routes take multipart/form-data up to MaxUploadBytes.
	Upload
	// Stream routes answer in chunks (exports): the gateway asks for the
	// next chunk only once the previous one is written to the client.
	Stream
	// LoginLimited routes are also limited per account, by the e-mail in
	// the body.
	LoginLimited
	// Revokes routes may revoke or change credentials of the caller's
	// tenant (a session, a key, a user's sessions or scopes). Unless the
	// service refused, the gateway changes the tenant's revocation epoch
	// before it answers, so that the answer already holds on every replica.
	Revokes
	// RevokesAny routes may revoke credentials of another tenant than the
	// caller's (a password reset, where only the token names the user; an
	// operator deactivating a tenant, too rare to be worth more): they
	// change the epoch of every tenant.
	RevokesAny
	// LargeUpload routes take a multipart form whose file may exceed a NATS
	// message (MaxLargeUploadBytes): the gateway streams the file into the
	// uploads bucket and sends the service a gatewayv1.UploadRequest.
	LargeUpload
	// MailUpload routes take an e-mail as mail providers forward it: the
	// raw message as the body (message/rfc822), or a multipart form with
	// the message in the field body-mime (Mailgun) or email (SendGrid),
	// the form's other fields ignored. The gateway streams the message
	// into the uploads bucket as for LargeUpload (MaxMailBytes) and passes
	// the X-Webhook-Secret header as the UploadRequest's field secret: the
	// service authenticates the call.
	MailUpload
	// WebhookLimited public routes are rate-limited per client address with
	// WebhookRateLimitPerMinute: a provider delivers bursts from few
	// addresses, which the stricter auth limit would refuse.
	WebhookLimited
)

// Routes lists every /v1 route, one line each. contracts/openapi.yaml
// documents exactly these; a test keeps the two in step.
var Routes = []Route{
	{"POST", "/v1/auth/login", "", identityv1.SubjectLogin, Public | AuthLimited | LoginLimited},
	{"POST", "/v1/auth/forgot-password", "", identityv1.SubjectForgotPassword, Public | AuthLimited},
	{"POST", "/v1/auth/setup-password", "", identityv1.SubjectSetupPassword, Public | AuthLimited | RevokesAny},
	{"POST", "/v1/auth/verify-token", "", identityv1.SubjectVerifyToken, AuthLimited},
	{"POST", "/v1/auth/logout", "", identityv1.SubjectLogout, Revokes},
	{"GET", "/v1/auth/me", "", identityv1.SubjectMe, 0},

	{"GET", "/v1/api-keys", "config:read", identityv1.SubjectKeysList, 0},
	{"POST", "/v1/api-keys", "config:write", identityv1.SubjectKeysCreate, 0},
	{"DELETE", "/v1/api-keys/{id}", "config:write", identityv1.SubjectKeysDelete, Revokes},

	{"GET", "/v1/users", "config:read", identityv1.SubjectUsersList, 0},
	{"POST", "/v1/users/invite", "config:write", identityv1.SubjectUsersInvite, 0},
	{"PATCH", "/v1/users/{id}", "config:write", identityv1.SubjectUsersUpdate, Revokes},
	{"DELETE", "/v1/users/{id}", "config:write", identityv1.SubjectUsersDelete, Revokes},

	{"GET", "/v1/tenant", "config:read", identityv1.SubjectTenantGet, 0},
	{"PATCH", "/v1/tenant", "config:write", identityv1.SubjectTenantUpdate, 0},

	{"GET", "/v1/oauth/apps", "config:read", identityv1.SubjectOAuthAppsList, 0},
	{"DELETE", "/v1/oauth/apps/{clientId}", "config:write", identityv1.SubjectOAuthAppsDelete, 0},
	{"GET", "/v1/oauth/clients", "config:read", identityv1.SubjectOAuthClientsList, 0},
	{"PUT", "/v1/oauth/clients/{clientId}", "config:write", identityv1.SubjectOAuthClientsPut, 0},

	{"GET", "/v1/admin/tenants", "admin", identityv1.SubjectAdminTenantsList, Operator},
	{"POST", "/v1/admin/tenants", "admin", identityv1.SubjectAdminTenantsCreate, Operator},
	{"DELETE", "/v1/admin/tenants/{id}", "admin", identityv1.SubjectAdminTenantsDelete, Operator | RevokesAny},

	{"GET", "/v1/audit-log", "config:read", identityv1.SubjectAuditList, 0},

	{"POST", "/v1/bookings", "journal:write", ledgerv1.SubjectBookingsCreate, 0},
	{"POST", "/v1/bookings/with-document", "journal:write", ledgerv1.SubjectBookingsWithDocument, Upload},
	{"POST", "/v1/documents", "journal:write", ledgerv1.SubjectDocumentsUpload, Upload},
	{"GET", "/v1/documents/{id}/file", "journal:read", ledgerv1.SubjectDocumentsFile, 0},
	{"GET", "/v1/journal", "journal:read", ledgerv1.SubjectJournalList, 0},
	{"GET", "/v1/journal/verify", "journal:read", ledgerv1.SubjectJournalVerify, 0},
	{"GET", "/v1/journal/{intent_id}", "journal:read", ledgerv1.SubjectJournalGet, 0},
	{"POST", "/v1/journal/reverse", "journal:write", ledgerv1.SubjectJournalReverse, 0},

	{"GET", "/v1/review-queue", "journal:review", ledgerv1.SubjectReviewList, 0},
	{"GET", "/v1/review-queue/count", "journal:review", ledgerv1.SubjectReviewCount, 0},
	{"GET", "/v1/review-queue/next", "journal:review", ledgerv1.SubjectReviewNext, 0},
	{"GET", "/v1/review-queue/{id}", "journal:review", ledgerv1.SubjectReviewGet, 0},
	{"DELETE", "/v1/review-queue/{id}", "journal:review", ledgerv1.SubjectReviewDelete, 0},
	{"POST", "/v1/review-queue/{id}/adjust", "journal:review", ledgerv1.SubjectReviewAdjust, 0},
	{"POST", "/v1/review-queue/{id}/confirm", "journal:review", ledgerv1.SubjectReviewConfirm, 0},
	{"PATCH", "/v1/review-queue/{id}/draft", "journal:review", ledgerv1.SubjectReviewDraft, 0},
	{"POST", "/v1/review-queue/{id}/override", "journal:review", ledgerv1.SubjectReviewOverride, 0},

	// Reading the chart needs no scope (spec, Authentication 6).
	{"GET", "/v1/accounts", "", ledgerv1.SubjectAccountsList, 0},
	{"POST", "/v1/accounts", "config:write", ledgerv1.SubjectAccountsCreate, 0},
	{"GET", "/v1/accounts/search", "", ledgerv1.SubjectAccountsSearch, 0},
	{"GET", "/v1/accounts/{number}/entries", "journal:read", ledgerv1.SubjectAccountsEntries, 0},
	{"GET", "/v1/tax-codes", "config:read", ledgerv1.SubjectTaxCodesList, 0},
	{"PATCH", "/v1/tax-codes/{code}", "config:write", ledgerv1.SubjectTaxCodesUpdate, 0},

	{"GET", "/v1/bank-accounts", "bank:read", bankv1.SubjectAccountsList, 0},
	{"POST", "/v1/bank-accounts", "bank:write", bankv1.SubjectAccountsCreate, 0},
	{"GET", "/v1/bank-accounts/{id}", "bank:read", bankv1.SubjectAccountsGet, 0},
	{"PUT", "/v1/bank-accounts/{id}", "bank:write", bankv1.SubjectAccountsUpdate, 0},
	{"GET", "/v1/bank-transactions", "bank:read", bankv1.SubjectTransactionsList, 0},
	{"POST", "/v1/bank-transactions", "bank:write", bankv1.SubjectTransactionsImport, 0},
	{"GET", "/v1/bank-transactions/{id}", "bank:read", bankv1.SubjectTransactionsGet, 0},
	{"POST", "/v1/bank-transactions/{id}/reconcile", "bank:write", bankv1.SubjectTransactionsReconcile, 0},
	{"POST", "/v1/bank-transactions/{id}/unmatch", "bank:write", bankv1.SubjectTransactionsUnmatch, 0},
	{"POST", "/v1/bank-transactions/batch-reconcile", "bank:write", bankv1.SubjectTransactionsBatchReconcile, 0},
	{"POST", "/v1/bank-match-groups", "bank:write", bankv1.SubjectMatchGroupsCreate, 0},
	{"PUT", "/v1/bank-transactions/{id}/evidence", "bank:write", bankv1.SubjectEvidencePut, 0},
	{"GET", "/v1/bank-transactions/{id}/evidence", "bank:read", bankv1.SubjectEvidenceGet, 0},
	{"GET", "/v1/bank-accounts/{id}/reconciliation", "bank:read", bankv1.SubjectAccountsReconciliation, 0},
	{"GET", "/v1/bank-accounts/balance-history", "bank:read", bankv1.SubjectAccountsBalanceHistory, 0},
	{"GET", "/v1/bank-transactions/suggestions", "bank:read", bankv1.SubjectSuggestions, 0},
	{"POST", "/v1/bank-accounts/{id}/upload", "bank:write", bankv1.SubjectStatementsUpload, LargeUpload},
	{"POST", "/v1/bank-transactions/import-file", "bank:write", bankv1.SubjectStatementsImportFile, LargeUpload},
	{"GET", "/v1/bank-imports/{id}", "bank:read", bankv1.SubjectImportsGet, 0},

	{"GET", "/v1/debtors", "debitoren:read", receivablesv1.SubjectDebtorsList, 0},
	{"POST", "/v1/debtors", "debitoren:write", receivablesv1.SubjectDebtorsCreate, 0},
	{"GET", "/v1/debtors/{id}", "debitoren:read", receivablesv1.SubjectDebtorsGet, 0},
	{"PATCH", "/v1/debtors/{id}", "debitoren:write", receivablesv1.SubjectDebtorsUpdate, 0},
	{"GET", "/v1/outgoing-invoices", "debitoren:read", receivablesv1.SubjectOutgoingInvoicesList, 0},
	{"GET", "/v1/outgoing-invoices/open-items", "debitoren:read", receivablesv1.SubjectOutgoingOpenItems, 0},
	{"GET", "/v1/sales-invoices/open-items", "debitoren:read", receivablesv1.SubjectSalesInvoiceOpenItems, 0},
	{"POST", "/v1/sales-invoices/{id}/cancel", "debitoren:write", receivablesv1.SubjectSalesInvoiceCancel, 0},
	{"POST", "/v1/sales-invoices/{id}/credit-notes", "debitoren:write", receivablesv1.SubjectSalesInvoiceCredit, 0},
	{"POST", "/v1/sales-invoices", "debitoren:write", receivablesv1.SubjectInvoicesCreate, 0},
	{"GET", "/v1/sales-invoices", "debitoren:read", receivablesv1.SubjectInvoicesList, 0},
	{"GET", "/v1/sales-invoices/{id}", "debitoren:read", receivablesv1.SubjectInvoicesGet, 0},
	{"POST", "/v1/sales-invoices/{id}/finalize", "debitoren:write", receivablesv1.SubjectInvoicesFinalize, 0},
	{"GET", "/v1/sales-invoices/{id}/pdf", "debitoren:read", receivablesv1.SubjectInvoicesPDF, 0},
	{"GET", "/v1/sales-invoices/{id}/zugferd", "debitoren:read", receivablesv1.SubjectInvoicesXML, 0},
	{"GET", "/v1/receivables/settings", "debitoren:read", receivablesv1.SubjectSettingsGet, 0},
	{"PUT", "/v1/receivables/settings", "debitoren:write", receivablesv1.SubjectSettingsPut, 0},

	{"GET", "/v1/vendors", "kreditoren:read", payablesv1.SubjectVendorsList, 0},
	{"POST", "/v1/vendors", "kreditoren:write", payablesv1.SubjectVendorsCreate, 0},
	{"GET", "/v1/vendors/{id}", "kreditoren:read", payablesv1.SubjectVendorsGet, 0},
	{"PATCH", "/v1/vendors/{id}", "kreditoren:write", payablesv1.SubjectVendorsUpdate, 0},
	{"GET", "/v1/invoice-review-cases", "kreditoren:read", payablesv1.SubjectReviewCasesList, 0},
	{"GET", "/v1/invoice-review-cases/{id}", "kreditoren:read", payablesv1.SubjectReviewCasesGet, 0},
	{"POST", "/v1/invoice-review-cases/{id}/approve", "kreditoren:review", payablesv1.SubjectReviewCasesApprove, 0},
	{"POST", "/v1/invoice-review-cases/{id}/correct", "kreditoren:write", payablesv1.SubjectReviewCasesCorrect, 0},
	{"POST", "/v1/invoice-review-cases/{id}/reject", "kreditoren:review", payablesv1.SubjectReviewCasesReject, 0},
	{"GET", "/v1/invoices", "kreditoren:read", payablesv1.SubjectInvoicesList, 0},
	{"GET", "/v1/invoices/open-items", "kreditoren:read", payablesv1.SubjectInvoicesOpenItems, 0},
	{"GET", "/v1/invoices/{id}", "kreditoren:read", payablesv1.SubjectInvoicesGet, 0},
	// Payment runs: kreditoren:write prepares and cancels a run,
	// kreditoren:review releases it (approve, export, complete) – the
	// four-eyes principle of paying suppliers, one key each.
	{"GET", "/v1/payment-runs", "kreditoren:read", payablesv1.SubjectPaymentRunsList, 0},
	{"POST", "/v1/payment-runs", "kreditoren:write", payablesv1.SubjectPaymentRunsCreate, 0},
	{"GET", "/v1/payment-runs/{id}", "kreditoren:read", payablesv1.SubjectPaymentRunsGet, 0},
	{"POST", "/v1/payment-runs/{id}/approve", "kreditoren:review", payablesv1.SubjectPaymentRunsApprove, 0},
	{"POST", "/v1/payment-runs/{id}/export", "kreditoren:review", payablesv1.SubjectPaymentRunsExport, 0},
	{"POST", "/v1/payment-runs/{id}/complete", "kreditoren:review", payablesv1.SubjectPaymentRunsComplete, 0},
	{"POST", "/v1/payment-runs/{id}/cancel", "kreditoren:write", payablesv1.SubjectPaymentRunsCancel, 0},
	{"POST", "/v1/payment-runs/{id}/returns", "kreditoren:write", payablesv1.SubjectPaymentRunsReturn, 0},

	{"POST", "/v1/payables/inbound-email/secret", "kreditoren:write", payablesv1.SubjectWebhookSecretRoll, 0},
	{"POST", "/v1/payables/inbound-email/{tenant_id}", "", payablesv1.SubjectInboundEmail, Public | MailUpload | WebhookLimited},
	{"GET", "/v1/payables/ingestion-log", "kreditoren:read", payablesv1.SubjectIngestionLog, 0},
	{"GET", "/v1/inbox", "kreditoren:read", payablesv1.SubjectInboxList, 0},
	{"POST", "/v1/inbox", "kreditoren:write", payablesv1.SubjectInboxUpload, Upload},
	{"POST", "/v1/ocr/extract", "kreditoren:write", payablesv1.SubjectOCRExtract, 0},

	{"GET", "/v1/periods", "perioden:read", periodsv1.SubjectList, 0},
	{"POST", "/v1/periods/{period}/soft-lock", "perioden:write", periodsv1.SubjectSoftLock, 0},
	{"POST", "/v1/periods/{period}/lock", "perioden:write", periodsv1.SubjectLock, 0},
	{"POST", "/v1/periods/{period}/reopen", "perioden:write", periodsv1.SubjectReopen, 0},
	{"POST", "/v1/periods/{year}/create-adjustment", "perioden:write", periodsv1.SubjectCreateAdjustment, 0},
	{"GET", "/v1/closing/tasks", "perioden:read", periodsv1.SubjectTasksList, 0},
	{"POST", "/v1/closing/tasks", "perioden:write", periodsv1.SubjectTasksCreate, 0},
	{"PATCH", "/v1/closing/tasks/{id}", "perioden:write", periodsv1.SubjectTasksUpdate, 0},

	{"GET", "/v1/reports", "auswertungen:read", reportingv1.SubjectReport, 0},
	{"GET", "/v1/reports/datev-export", "auswertungen:read", reportingv1.SubjectDATEVExport, Stream},
	{"GET", "/v1/reports/gobd-export", "auswertungen:read", reportingv1.SubjectGoBDExport, Stream},
	{"POST", "/v1/reports/exports", "auswertungen:read", reportingv1.SubjectExportJobCreate, 0},
	{"GET", "/v1/reports/exports/{id}", "auswertungen:read", reportingv1.SubjectExportJobGet, 0},
	{"GET", "/v1/reports/exports/{id}/file", "auswertungen:read", reportingv1.SubjectExportJobFile, Stream},
}
