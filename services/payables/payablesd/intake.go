package payablesd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/contracts/rpc"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/payables"
)

// IntakeRoutes serve the inbox: the inbound-email webhook (public at the
// gateway, so it acts for no caller: the tenant is the path's, once the
// webhook secret proved it), the secret, the direct upload and the lists.
func IntakeRoutes(svc *payables.Service) []natsx.Route {
	return []natsx.Route{
		{Subject: payablesv1.SubjectInboundEmail, Decode: inboundEmail, Internal: true, Callers: []string{natsauth.Gateway},
			Endpoint: natsx.Typed(func(ctx context.Context, in inboundRequest) (payablesv1.InboundEmailResult, error) {
				return svc.InboundEmail(ctx, in.tenantID, in.secret, in.upload.Bucket, in.upload.Name)
			})},
		{Subject: payablesv1.SubjectWebhookSecretRoll, Endpoint: natsx.Typed(func(ctx context.Context, _ *natsx.Request) (*natsx.Response, error) {
			s, err := svc.RollWebhookSecret(ctx, natsx.Claims(ctx).TenantID)
			if err != nil {
				return nil, err
			}
			return natsx.Created(s), nil
		})},
		{Subject: payablesv1.SubjectInboxUpload, Decode: inboxUpload, Endpoint: natsx.Typed(func(ctx context.Context, f uploadedFile) (*natsx.Response, error) {
			it, err := svc.UploadToInbox(ctx, natsx.Claims(ctx).TenantID, f.name, f.contentType, bytes.NewReader(f.content))
			if err != nil {
				return nil, err
			}
			return natsx.Created(it), nil
		})},
		{Subject: payablesv1.SubjectInboxList, Decode: inboxFilter, Endpoint: natsx.Typed(func(ctx context.Context, f payablesv1.InboxFilter) (payablesv1.InboxList, error) {
			return svc.Inbox(ctx, natsx.Claims(ctx).TenantID, f)
		})},
		{Subject: payablesv1.SubjectIngestionLog, Decode: ingestionFilter, Endpoint: natsx.Typed(func(ctx context.Context, f payablesv1.IngestionFilter) (payablesv1.IngestionLog, error) {
			return svc.IngestionLog(ctx, natsx.Claims(ctx).TenantID, f)
		})},
	}
}

// inboundRequest is the webhook's call: the message as the gateway put it
// into the uploads bucket, the path's tenant and the secret sent.
type inboundRequest struct {
	tenantID, secret string
	upload           gatewayv1.UploadRef
}

// SecretField is the UploadRequest field the gateway puts the
// X-Webhook-Secret header into; ?secret= comes as the query.
const SecretField = "secret"

func inboundEmail(_ context.Context, r *natsx.Request) (any, error) {
	var up gatewayv1.UploadRequest
	if err := natsx.Decode(r.Body, &up); err != nil {
		return nil, err
	}
	secret := up.Fields[SecretField]
	if secret == "" {
		secret = r.Query.Get("secret")
	}
	return inboundRequest{tenantID: r.Param("tenant_id"), secret: secret, upload: up.Upload}, nil
}

// uploadedFile is the file field of POST /v1/inbox.
type uploadedFile struct {
	name, contentType string
	content           []byte
}

// inboxUpload reads the form of POST /v1/inbox, which the gateway checked
// against the document (one file field, at most 11 MB in all).
func inboxUpload(_ context.Context, r *natsx.Request) (any, error) {
	mt, ps, err := mime.ParseMediaType(r.ContentType)
	if err != nil || mt != "multipart/form-data" || ps["boundary"] == "" {
		return nil, errs.E(errs.UnsupportedMedia, "send the file as multipart/form-data with a file field")
	}
	mr := multipart.NewReader(bytes.NewReader(r.Body), ps["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errs.Invalid("the file is missing", errs.Field("file", "required"))
		}
		if err != nil {
			return nil, errs.Invalid("malformed multipart body", errs.Field("file", "malformed"))
		}
		if p.FormName() != "file" {
			continue
		}
		// Read whole, so that the log says its size: the gateway let 11
		// MB at most through.
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, errs.Invalid("malformed multipart body", errs.Field("file", "malformed"))
		}
		return uploadedFile{name: p.FileName(), contentType: p.Header.Get("Content-Type"), content: b}, nil
	}
}

// inboxFilter reads the query of GET /v1/inbox.
func inboxFilter(_ context.Context, r *natsx.Request) (any, error) {
	f := payablesv1.InboxFilter{Status: r.Query.Get("status")}
	switch f.Status {
	case "":
		f.Status = payablesv1.InboxPending
	case payablesv1.InboxPending, payablesv1.InboxProcessing, payablesv1.InboxConfirmed, payablesv1.InboxRejected:
	default:
		return nil, errs.Invalid("invalid query parameter status", errs.Field("status", "one of pending, processing, confirmed, rejected"))
	}
	var err error
	if f.Limit, err = natsx.IntQuery(r.Query, "limit", payables.DefaultInboxLimit, 1, payables.MaxInboxLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(r.Query, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	return f, nil
}

// ingestionFilter reads the query of GET /v1/payables/ingestion-log.
func ingestionFilter(_ context.Context, r *natsx.Request) (any, error) {
	var f payablesv1.IngestionFilter
	for _, o := range r.Query["outcome"] {
		switch o {
		case payablesv1.OutcomeIngested, payablesv1.OutcomeSkippedDuplicate, payablesv1.OutcomeRejectedInvalid, payablesv1.OutcomeFailed:
			f.Outcomes = append(f.Outcomes, o)
		default:
			return nil, errs.Invalid("invalid query parameter outcome",
				errs.Field("outcome", "one of ingested, skipped_duplicate, rejected_invalid, failed"))
		}
	}
	var err error
	if f.Limit, err = natsx.IntQuery(r.Query, "limit", payables.DefaultIngestionLimit, 1, payables.MaxIngestionLimit); err != nil {
		return nil, err
	}
	if f.Offset, err = natsx.IntQuery(r.Query, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	return f, nil
}

// Documents is payables.Documents over NATS: the payables service's own
// signed principal for the tenant, the file sent as the gateway sends an
// upload (multipart/form-data, field file).
type Documents struct{ C *natsx.Client }

// Upload implements payables.Documents. No Idempotency-Key travels
// along: the ledger keeps one document per SHA-256, which is what a retry
// needs.
func (d Documents) Upload(ctx context.Context, tenantID, name, mimeType string, content []byte) (string, error) {
	var doc struct {
		ID string `json:"id"`
	}
	ctx = natsx.WithIdempotencyKey(rpc.ForTenant(ctx, tenantID), "")
	if err := d.C.CallFile(ctx, ledgerv1.SubjectDocumentsUpload, "file", name, mimeType, content, &doc); err != nil {
		return "", err
	}
	if strings.TrimSpace(doc.ID) == "" {
		return "", fmt.Errorf("payablesd.Documents: the ledger answered no document id")
	}
	return doc.ID, nil
}
