package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/inbox"
	"github.com/ledgerplatform/ledger/services/payables"
)

// paymentsConsumer names the bank's reconciliation events in the inbox.
const paymentsConsumer = "payables-payments"

// ApplyPayments implements payables.PaymentStore. The records are
// keyed by reconciliation and invoice, and an undone reconciliation is
// written as released even when its record is missing, so a release seen
// before its reconciliation still wins; paid_amount is then recomputed
// from the records rather than added to, so it is what they say whatever
// the order.
func (s *Store) ApplyPayments(ctx context.Context, tenantID string, evs []payables.PaymentEvent) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		events := make([]inbox.Event, len(evs))
		for i, e := range evs {
			events[i] = inbox.Event{ID: e.EventID, TenantID: tenantID}
		}
		ids, err := inbox.Claim(ctx, tx, Schema.Schema, paymentsConsumer, events...)
		if err != nil || len(ids) == 0 {
			return err
		}
		fresh := make(map[string]bool, len(ids))
		for _, id := range ids {
			fresh[id] = true
		}
		b := &pgx.Batch{}
		var recs []string
		for _, e := range evs {
			if !fresh[e.EventID] {
				continue
			}
			delete(fresh, e.EventID) // the same event twice in one batch
			recs = append(recs, e.ReconciliationID)
			for _, a := range e.Allocations {
				// The allocation names the intent; an intent that is no
				// incoming invoice's booking (a liability booked by hand)
				// selects nothing and is not ours. A
				// currency other than the invoice's is no payment of it.
				b.Queue(`INSERT INTO payables.invoice_payments (tenant_id, reconciliation_id, invoice_id, amount, paid_on, released)
					SELECT $1, $2, i.id, $4::numeric, $5::date, $6 FROM payables.incoming_invoices i
					WHERE i.tenant_id = $1 AND i.booking_intent_id = $3 AND i.state = 'posted' AND ($7 = '' OR i.currency = $7)
					ON CONFLICT (tenant_id, reconciliation_id, invoice_id) DO UPDATE SET released = invoice_payments.released OR EXCLUDED.released`,
					tenantID, e.ReconciliationID, a.IntentID, a.Amount.String(), e.PaidOn, e.Release, a.Currency)
			}
			if e.Release {
				b.Queue(`UPDATE payables.invoice_payments SET released = true WHERE tenant_id = $1 AND reconciliation_id = $2`,
					tenantID, e.ReconciliationID)
			}
		}
		if len(recs) == 0 {
			return nil
		}
		b.Queue(`UPDATE payables.incoming_invoices i SET paid_amount = COALESCE((SELECT sum(p.amount)
				FROM payables.invoice_payments p WHERE p.tenant_id = i.tenant_id AND p.invoice_id = i.id AND NOT p.released), 0)
			WHERE i.tenant_id = $1 AND i.id IN (SELECT invoice_id FROM payables.invoice_payments
				WHERE tenant_id = $1 AND reconciliation_id = ANY($2::uuid[]))`, tenantID, recs)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return errs.Wrap("postgres.ApplyPayments", err)
	}
	return nil
}
