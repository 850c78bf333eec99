package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
)

// AllocateInvoiceNumber takes the tenant's next invoice number of year in
// tx, the transaction that inserts the invoice: <prefix><year>-<n>, n from
// 1 per tenant and year, at least five digits (RE-2025-00001). The upsert
// locks the counter row until tx ends, as SELECT … FOR UPDATE would, in one
// round trip: concurrent invoices of the tenant and year queue on it, a
// rolled-back one hands its number to the next, so the numbers of committed
// invoices have no gap and no repeat. The prefix is the tenant's setting at
// the time (receivables.DefaultInvoicePrefix without one).
func AllocateInvoiceNumber(ctx context.Context, tx pgx.Tx, tenantID string, year int) (string, error) {
	if year < 1900 || year > 9999 {
		return "", fmt.Errorf("postgres.AllocateInvoiceNumber: year %d out of range", year)
	}
	var n int64
	err := tx.QueryRow(ctx, `INSERT INTO receivables.invoice_number_counters AS c (tenant_id, year, last_number) VALUES ($1, $2, 1)
		ON CONFLICT (tenant_id, year) DO UPDATE SET last_number = c.last_number + 1 RETURNING last_number`, tenantID, year).Scan(&n)
	if err != nil {
		return "", fmt.Errorf("postgres.AllocateInvoiceNumber: %w", err)
	}
	prefix, err := invoicePrefix(ctx, tx, tenantID)
	if err != nil {
		return "", fmt.Errorf("postgres.AllocateInvoiceNumber: %w", err)
	}
	return receivables.FormatInvoiceNumber(prefix, year, n), nil
}

func invoicePrefix(ctx context.Context, tx pgx.Tx, tenantID string) (string, error) {
	var prefix string
	err := tx.QueryRow(ctx, `SELECT invoice_number_prefix FROM receivables.settings WHERE tenant_id = $1`, tenantID).Scan(&prefix)
	if errors.Is(err, pgx.ErrNoRows) {
		return receivables.DefaultInvoicePrefix, nil
	}
	return prefix, err
}

// InvoiceNumberPrefix reads the tenant's invoice number prefix.
func (s *Store) InvoiceNumberPrefix(ctx context.Context, tenantID string) (string, error) {
	var prefix string
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		prefix, err = invoicePrefix(ctx, tx, tenantID)
		return err
	})
	if err != nil {
		return "", errs.Wrap("postgres.InvoiceNumberPrefix", err)
	}
	return prefix, nil
}

// SetInvoiceNumberPrefix sets the prefix of the tenant's invoice numbers
// from the next one on; numbers already given keep theirs, and the
// sequence of the year goes on.
func (s *Store) SetInvoiceNumberPrefix(ctx context.Context, tenantID, prefix string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO receivables.settings (tenant_id, invoice_number_prefix) VALUES ($1, $2)
			ON CONFLICT (tenant_id) DO UPDATE SET invoice_number_prefix = EXCLUDED.invoice_number_prefix, updated_at = now()`, tenantID, prefix)
		return err
	})
	if err != nil {
		return errs.Wrap("postgres.SetInvoiceNumberPrefix", err)
	}
	return nil
}
