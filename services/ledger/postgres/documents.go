package postgres

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
)

const documentColumns = `id::text, mime_type, original_name, size_bytes, sha256, created_at`

func scanDocument(row pgx.Row, d *ledger.Document, extra ...any) error {
	var sum []byte
	if err := row.Scan(append([]any{&d.ID, &d.MimeType, &d.OriginalName, &d.SizeBytes, &sum, &d.CreatedAt}, extra...)...); err != nil {
		return err
	}
	d.SHA256 = hex.EncodeToString(sum)
	return nil
}

// PutDocument stores a document once per tenant and content: the same
// bytes again return the first document and false.
func (s *Store) PutDocument(ctx context.Context, tenant string, d ledger.Document, content []byte, createdBy string) (ledger.Document, bool, error) {
	sum, err := hex.DecodeString(d.SHA256)
	if err != nil {
		return ledger.Document{}, false, errs.Wrap("ledger.PutDocument", err)
	}
	var out ledger.Document
	created := false
	err = db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		err := scanDocument(tx.QueryRow(ctx, `INSERT INTO ledger.documents (tenant_id, id, sha256, mime_type, original_name, size_bytes, content, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (tenant_id, sha256) DO NOTHING
			RETURNING `+documentColumns, tenant, d.ID, sum, d.MimeType, d.OriginalName, d.SizeBytes, content, createdBy), &out)
		if err == nil {
			created = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// The same content is stored already (perhaps by a concurrent
		// upload, whose commit the conflict waited for).
		return scanDocument(tx.QueryRow(ctx, "SELECT "+documentColumns+" FROM ledger.documents WHERE tenant_id = $1 AND sha256 = $2", tenant, sum), &out)
	})
	if err != nil {
		return ledger.Document{}, false, errs.Wrap("ledger.PutDocument", err)
	}
	return out, created, nil
}

// Document returns a document's metadata.
func (s *Store) Document(ctx context.Context, tenant, id string) (ledger.Document, error) {
	var d ledger.Document
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		err := scanDocument(tx.QueryRow(ctx, "SELECT "+documentColumns+" FROM ledger.documents WHERE tenant_id = $1 AND id = $2", tenant, id), &d)
		return db.NotFound(err, "document %s not found", id)
	})
	if err != nil {
		return ledger.Document{}, errs.Wrap("ledger.Document", err)
	}
	return d, nil
}

// DocumentFile returns a document's metadata and original bytes.
func (s *Store) DocumentFile(ctx context.Context, tenant, id string) (ledger.Document, []byte, error) {
	var d ledger.Document
	var content []byte
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		err := scanDocument(tx.QueryRow(ctx, "SELECT "+documentColumns+", content FROM ledger.documents WHERE tenant_id = $1 AND id = $2", tenant, id), &d, &content)
		return db.NotFound(err, "document %s not found", id)
	})
	if err != nil {
		return ledger.Document{}, nil, errs.Wrap("ledger.DocumentFile", err)
	}
	return d, content, nil
}
