package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// registerDocuments serves the document upload and download and the
// booking with a document. Both uploads are multipart/form-data bodies of
// up to 11 MB (a file of at most 10 MB) passed through by the gateway.
func registerDocuments(s *natsx.Server, svc *ledger.Service) error {
	h := map[string]func(context.Context, *auth.Claims, *natsx.Request) (any, error){
		// 201 with the new document; 200 with the existing one when the
		// tenant uploaded the same bytes before.
		ledgerv1.SubjectDocumentsUpload: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			d, created, err := svc.UploadDocument(ctx, request(ctx, c, r, "rest"), r.ContentType, r.Body)
			if err != nil {
				return nil, err
			}
			status := 200
			if created {
				status = 201
			}
			return &natsx.Response{Status: status, Body: documentBody(d)}, nil
		},
		ledgerv1.SubjectDocumentsFile: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			d, content, err := svc.DocumentFile(ctx, c.TenantID, r.Param("id"))
			if err != nil {
				return nil, err
			}
			return &natsx.Response{Raw: content, ContentType: d.MimeType, Disposition: d.Disposition()}, nil
		},
		ledgerv1.SubjectBookingsWithDocument: func(ctx context.Context, c *auth.Claims, r *natsx.Request) (any, error) {
			posted, replay, err := svc.BookWithDocument(ctx, request(ctx, c, r, "document"), r.ContentType, r.Body)
			if err != nil {
				return nil, err
			}
			return replayOr(replay, posted, 201), nil
		},
	}
	for subject, f := range h {
		if err := s.Handle(subject, handler(f)); err != nil {
			return err
		}
	}
	return nil
}

// documentBody is the upload's answer.
func documentBody(d ledger.Document) map[string]any {
	return map[string]any{"id": d.ID, "mime_type": d.MimeType, "original_name": d.OriginalName, "size_bytes": d.SizeBytes, "sha256": d.SHA256}
}
