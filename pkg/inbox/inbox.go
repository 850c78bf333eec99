// Package inbox makes event consumers idempotent (DESIGN rule 1): a
// consumer records the ids of the events it handled in the transaction of
// their effect, so a redelivered event finds its id and changes nothing.
// It is the consuming side of pkg/outbox; the table, processed_events, is
// a shared migration (migrate.Set.Inbox).
package inbox

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerplatform/ledger/pkg/db"
)

// Event is a consumed event: its id (natsx.EventID) and its tenant.
type Event struct {
	ID, TenantID string
}

// Claim records events as handled by consumer in tx and returns the ids
// of those not handled before, in the order given. The caller applies the
// effect of exactly those in the same transaction.
func Claim(ctx context.Context, tx pgx.Tx, schema, consumer string, events ...Event) ([]string, error) {
	if len(events) == 0 {
		return nil, nil
	}
	ids, tenants := make([]string, len(events)), make([]string, len(events))
	for i, e := range events {
		ids[i], tenants[i] = e.ID, e.TenantID
	}
	rows, err := tx.Query(ctx, "INSERT INTO "+table(schema)+` (consumer, event_id, tenant_id)
		SELECT $1, e, t FROM unnest($2::text[], $3::uuid[]) WITH ORDINALITY AS u(e, t, n) ORDER BY n
		ON CONFLICT DO NOTHING RETURNING event_id`, consumer, ids, tenants)
	if err != nil {
		return nil, fmt.Errorf("inbox.Claim %s: %w", consumer, err)
	}
	fresh, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("inbox.Claim %s: %w", consumer, err)
	}
	return fresh, nil
}

// Prune forgets events handled before the given time; a redelivery is
// only possible within the stream's duplicate window and retention.
func Prune(ctx context.Context, pool *pgxpool.Pool, schema string, before time.Time) (int64, error) {
	var n int64
	err := db.InTenant(ctx, pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM "+table(schema)+" WHERE processed_at < $1", before)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("inbox.Prune %s: %w", schema, err)
	}
	return n, nil
}

func table(schema string) string { return pgx.Identifier{schema, "processed_events"}.Sanitize() }
