package settle

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/inbox"
)

// Tables names where a service keeps what the bank settled: Schema holds
// its invoice_payments (tenant_id, reconciliation_id, invoice_id, amount,
// paid_on, released; the same shape in each schema) and its inbox,
// Invoices is the table whose paid_amount the records make (with
// booking_intent_id, state and currency), Consumer the inbox's consumer
// name. Touch is prepended to the paid-amount update's assignments, such
// as "updated_at = now(), ". All are constants of the service's code,
// never input.
type Tables struct {
	Schema, Invoices, Consumer, Touch string
}

// Apply applies one tenant's settlements in tx, each event at most once
// (the inbox). The records are keyed by reconciliation and invoice, and
// an undone reconciliation is written as released even when its record
// is missing, so a release seen before its reconciliation still wins;
// paid_amount is then recomputed from the records rather than added to,
// so it is what they say whatever the order.
func Apply(ctx context.Context, tx pgx.Tx, t Tables, tenantID string, evs []bankv1.Settlement) error {
	events := make([]inbox.Event, len(evs))
	for i, e := range evs {
		events[i] = inbox.Event{ID: e.EventID, TenantID: tenantID}
	}
	ids, err := inbox.Claim(ctx, tx, t.Schema, t.Consumer, events...)
	if err != nil || len(ids) == 0 {
		return err
	}
	fresh := make(map[string]bool, len(ids))
	for _, id := range ids {
		fresh[id] = true
	}
	payments := t.Schema + ".invoice_payments"
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
			// invoice's booking (another module's item, a manual
			// booking) selects nothing and is not ours. A currency other
			// than the invoice's is no payment of it.
			b.Queue(`INSERT INTO `+payments+` (tenant_id, reconciliation_id, invoice_id, amount, paid_on, released)
				SELECT $1, $2, i.id, $4::numeric, $5::date, $6 FROM `+t.Invoices+` i
				WHERE i.tenant_id = $1 AND i.booking_intent_id = $3 AND i.state = 'posted' AND ($7 = '' OR i.currency = $7)
				ON CONFLICT (tenant_id, reconciliation_id, invoice_id) DO UPDATE SET released = invoice_payments.released OR EXCLUDED.released`,
				tenantID, e.ReconciliationID, a.IntentID, a.Amount.String(), e.PaidOn, e.Release, a.Currency)
		}
		if e.Release {
			b.Queue(`UPDATE `+payments+` SET released = true WHERE tenant_id = $1 AND reconciliation_id = $2`,
				tenantID, e.ReconciliationID)
		}
	}
	if len(recs) == 0 {
		return nil
	}
	b.Queue(`UPDATE `+t.Invoices+` i SET `+t.Touch+`paid_amount = COALESCE((SELECT sum(p.amount)
			FROM `+payments+` p WHERE p.tenant_id = i.tenant_id AND p.invoice_id = i.id AND NOT p.released), 0)
		WHERE i.tenant_id = $1 AND i.id IN (SELECT invoice_id FROM `+payments+`
			WHERE tenant_id = $1 AND reconciliation_id = ANY($2::uuid[]))`, tenantID, recs)
	return tx.SendBatch(ctx, b).Close()
}
