package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/inbox"
	"github.com/ledgerplatform/ledger/services/bank"
)

// openItemsConsumer names the projection's events in the inbox.
const openItemsConsumer = "bank-open-items"

// ApplyIntents implements bank.OpenItemStore. Nothing in it depends on
// the order of the events: items and bookings are keyed by intent and
// account, and a reversal is remembered, so it cancels its original even
// when that is projected after it.
func (s *Store) ApplyIntents(ctx context.Context, tenantID string, evs []bank.PostedIntent) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		events := make([]inbox.Event, len(evs))
		for i, e := range evs {
			events[i] = inbox.Event{ID: e.EventID, TenantID: tenantID}
		}
		ids, err := inbox.Claim(ctx, tx, Schema.Schema, openItemsConsumer, events...)
		if err != nil || len(ids) == 0 {
			return err
		}
		fresh := make(map[string]bool, len(ids))
		for _, id := range ids {
			fresh[id] = true
		}
		// A bank account may link an asset account outside 1550-1899;
		// money on it has moved through the bank all the same.
		rows, err := tx.Query(ctx, `SELECT account_number FROM bank.accounts WHERE tenant_id = $1`, tenantID)
		if err != nil {
			return err
		}
		numbers, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		linked := make(map[string]bool, len(numbers))
		for _, n := range numbers {
			linked[n] = true
		}
		settlement := func(a string) bool { return linked[a] || bank.LiquidFunds(a) }

		b := &pgx.Batch{}
		for _, e := range evs {
			if !fresh[e.EventID] {
				continue
			}
			delete(fresh, e.EventID) // the same event twice in one batch
			p, err := bank.Project(e.Intent, settlement)
			if err != nil {
				return err
			}
			queueProjection(b, tenantID, p)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return errs.Wrap("postgres.ApplyIntents", err)
	}
	return nil
}

func queueProjection(b *pgx.Batch, tenantID string, p bank.Projection) {
	if p.Reverses != "" {
		b.Queue(`INSERT INTO bank.reversed_intents (tenant_id, intent_id, reversed_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			tenantID, p.Reverses, p.IntentID)
		b.Queue(`UPDATE bank.open_items SET reversed_by = $3 WHERE tenant_id = $1 AND intent_id = $2 AND reversed_by IS NULL`,
			tenantID, p.Reverses, p.IntentID)
		b.Queue(`UPDATE bank.ledger_bookings SET reversed_by = $3 WHERE tenant_id = $1 AND intent_id = $2 AND reversed_by IS NULL`,
			tenantID, p.Reverses, p.IntentID)
	}
	for _, it := range p.Items {
		var doc, split *string
		if it.OriginalDocAmount != nil {
			d := it.OriginalDocAmount.String()
			doc = &d
		}
		if it.TaxSplit != nil {
			j, _ := json.Marshal(it.TaxSplit) // amounts and strings: cannot fail
			js := string(j)
			split = &js
		}
		currency := it.Currency
		if currency == "" {
			currency = bank.DefaultCurrency
		}
		b.Queue(`INSERT INTO bank.open_items (tenant_id, intent_id, account_number, party, direction, booking_date, description,
				external_reference, journal_number, original_amount, reversed_by, currency, original_doc_amount, tax_split)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::numeric,
				(SELECT reversed_by FROM bank.reversed_intents WHERE tenant_id = $1 AND intent_id = $2), $11, $12::numeric, $13::jsonb)
			ON CONFLICT DO NOTHING`,
			tenantID, it.IntentID, it.AccountNumber, it.Party, it.Direction, it.BookingDate, it.Description,
			it.ExternalReference, it.JournalNumber, it.OriginalAmount.String(), currency, doc, split)
	}
	for _, bk := range p.Bookings {
		b.Queue(`INSERT INTO bank.ledger_bookings (tenant_id, intent_id, account_number, booking_date, description,
				external_reference, journal_number, amount, reversed_by, explained_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric,
				(SELECT reversed_by FROM bank.reversed_intents WHERE tenant_id = $1 AND intent_id = $2),
				-- a clearing booking the bank posted is explained by its transaction
				-- (a match group's by its first transaction)
				(SELECT bank_transaction_id FROM bank.reconciliations WHERE tenant_id = $1 AND clearing_intent_id = $2 AND state <> 'abandoned'
					ORDER BY bank_transaction_id LIMIT 1))
			ON CONFLICT DO NOTHING`,
			tenantID, bk.IntentID, bk.AccountNumber, bk.BookingDate, bk.Description, bk.ExternalReference, bk.JournalNumber, bk.Amount.String())
	}
}

const openItemColumns = `intent_id::text, account_number, party, direction, booking_date::text, description,
	external_reference, journal_number, original_amount::text, open_amount::text, currency, original_doc_amount::text,
	allocated_doc_amount::text, tax_split`

func scanOpenItem(r pgx.CollectableRow) (bank.OpenItem, error) {
	var it bank.OpenItem
	var orig, open, allocDoc string
	var doc *string
	var split []byte
	if err := r.Scan(&it.IntentID, &it.AccountNumber, &it.Party, &it.Direction, &it.BookingDate, &it.Description,
		&it.ExternalReference, &it.JournalNumber, &orig, &open, &it.Currency, &doc, &allocDoc, &split); err != nil {
		return it, err
	}
	it.OriginalAmount, it.OpenAmount, it.AllocatedDocAmount = money.MustParse(orig), money.MustParse(open), money.MustParse(allocDoc)
	if doc != nil {
		d := money.MustParse(*doc)
		it.OriginalDocAmount = &d
	}
	if split != nil {
		if err := json.Unmarshal(split, &it.TaxSplit); err != nil {
			return it, err
		}
	}
	return it, nil
}

// OpenItems implements bank.OpenItemStore.
func (s *Store) OpenItems(ctx context.Context, tenantID, direction string) ([]bank.OpenItem, error) {
	var out []bank.OpenItem
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+openItemColumns+`
			FROM bank.open_items
			WHERE tenant_id = $1 AND reversed_by IS NULL AND allocated_amount < original_amount AND ($2 = '' OR direction = $2)
			ORDER BY booking_date, journal_number, account_number`, tenantID, direction)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanOpenItem)
		return err
	})
	if err != nil {
		return nil, errs.Wrap("postgres.OpenItems", err)
	}
	return out, nil
}

// BankBookings implements bank.OpenItemStore.
func (s *Store) BankBookings(ctx context.Context, tenantID, bankAccountID string) ([]bank.LedgerBooking, error) {
	var out []bank.LedgerBooking
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var account string
		err := tx.QueryRow(ctx, `SELECT account_number FROM bank.accounts WHERE tenant_id = $1 AND id = $2`, tenantID, bankAccountID).Scan(&account)
		if err != nil {
			return db.NotFound(err, "bank account %s not found", bankAccountID)
		}
		rows, err := tx.Query(ctx, `SELECT intent_id::text, account_number, booking_date::text, description, external_reference,
				journal_number, amount::text
			FROM bank.ledger_bookings
			WHERE tenant_id = $1 AND account_number = $2 AND reversed_by IS NULL AND explained_by IS NULL
			ORDER BY booking_date, journal_number`, tenantID, account)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (bank.LedgerBooking, error) {
			var bk bank.LedgerBooking
			var amount string
			if err := r.Scan(&bk.IntentID, &bk.AccountNumber, &bk.BookingDate, &bk.Description, &bk.ExternalReference,
				&bk.JournalNumber, &amount); err != nil {
				return bk, err
			}
			bk.Amount = money.MustParse(amount)
			return bk, nil
		})
		return err
	})
	if err != nil {
		return nil, errs.Wrap("postgres.BankBookings", err)
	}
	return out, nil
}
