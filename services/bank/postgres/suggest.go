package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
)

// SuggestionData implements bank.SuggestionStore. One read-only snapshot,
// so a reconciliation committing meanwhile cannot show a transaction as
// open and its item as settled. Each read is one index range: the open
// transactions by transactions_open (migration 0007), the open items by
// open_items_open, the bookings by ledger_bookings_unexplained.
func (s *Store) SuggestionData(ctx context.Context, tenantID, bankAccountID, from, to string) (bank.SuggestionData, error) {
	var out bank.SuggestionData
	err := db.InTenant(ctx, s.pool, tenantID, db.Snapshot, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+accountColumns+` FROM bank.accounts WHERE tenant_id = $1 AND id = $2`, tenantID, bankAccountID)
		if err != nil {
			return err
		}
		out.Account, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[bank.Account])
		if err = db.NotFound(err, "bank account %s not found", bankAccountID); err != nil {
			return err
		}
		// Amounts travel as cents (bigint): 11,000 rows of numeric text
		// parsed into decimals cost more than the query.
		rows, err = tx.Query(ctx, `SELECT id::text, booking_date::text, (amount * 100)::bigint, currency, counterparty_name, counterparty_iban,
				reference, end_to_end_id
			FROM bank.transactions
			WHERE tenant_id = $1 AND bank_account_id = $2 AND status = 'open'
				AND booking_date >= COALESCE($3::date, '-infinity') AND booking_date <= COALESCE($4::date, 'infinity')
			ORDER BY booking_date, id`, tenantID, bankAccountID, nullable(from), nullable(to))
		if err != nil {
			return err
		}
		out.Transactions, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (bank.SuggestTx, error) {
			var t bank.SuggestTx
			var cents int64
			var reference, e2e string
			if err := r.Scan(&t.ID, &t.Date, &cents, &t.Currency, &t.CounterpartyName, &t.CounterpartyIBAN, &reference, &e2e); err != nil {
				return t, err
			}
			t.Remittance = reference
			if e2e != "" && e2e != "NOTPROVIDED" {
				t.Remittance += " " + e2e
			}
			t.Amount = decimal.New(cents, -2)
			return t, nil
		})
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT intent_id::text, account_number, party, direction, booking_date::text, description,
				external_reference, journal_number, (original_amount * 100)::bigint, (open_amount * 100)::bigint,
				currency, original_doc_amount, allocated_doc_amount
			FROM bank.open_items
			WHERE tenant_id = $1 AND reversed_by IS NULL AND allocated_amount < original_amount
			ORDER BY booking_date, journal_number, account_number`, tenantID)
		if err != nil {
			return err
		}
		out.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (bank.OpenItem, error) {
			var it bank.OpenItem
			var orig, open int64
			var doc *decimal.Decimal
			if err := r.Scan(&it.IntentID, &it.AccountNumber, &it.Party, &it.Direction, &it.BookingDate, &it.Description,
				&it.ExternalReference, &it.JournalNumber, &orig, &open, &it.Currency, &doc, &it.AllocatedDocAmount.Decimal); err != nil {
				return it, err
			}
			if doc != nil {
				d := money.New(*doc)
				it.OriginalDocAmount = &d
			}
			it.OriginalAmount, it.OpenAmount = money.New(decimal.New(orig, -2)), money.New(decimal.New(open, -2))
			return it, nil
		})
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT intent_id::text, account_number, booking_date::text, description, external_reference,
				journal_number, (amount * 100)::bigint
			FROM bank.ledger_bookings
			WHERE tenant_id = $1 AND account_number = $2 AND reversed_by IS NULL AND explained_by IS NULL
			ORDER BY booking_date, journal_number`, tenantID, out.Account.AccountNumber)
		if err != nil {
			return err
		}
		out.Bookings, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (bank.LedgerBooking, error) {
			var bk bank.LedgerBooking
			var cents int64
			if err := r.Scan(&bk.IntentID, &bk.AccountNumber, &bk.BookingDate, &bk.Description, &bk.ExternalReference,
				&bk.JournalNumber, &cents); err != nil {
				return bk, err
			}
			bk.Amount = money.New(decimal.New(cents, -2))
			return bk, nil
		})
		return err
	})
	if err != nil {
		return bank.SuggestionData{}, errs.Wrap("postgres.SuggestionData", err)
	}
	return out, nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
