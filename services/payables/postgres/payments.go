package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/settle"
	"github.com/ledgerplatform/ledger/services/payables"
)

// payments are the tables the bank's settlements go to (pkg/settle).
var payments = settle.Tables{Schema: Schema.Schema, Invoices: Schema.Schema + ".incoming_invoices", Consumer: "payables-payments", Touch: ""}

// ApplyPayments implements payables.PaymentStore (settle.Apply).
func (s *Store) ApplyPayments(ctx context.Context, tenantID string, evs []payables.PaymentEvent) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		return settle.Apply(ctx, tx, payments, tenantID, evs)
	})
	return errs.Wrap("postgres.ApplyPayments", err)
}
