package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/ledger"
)

const eventColumns = `e.id::text, e.journal_number, e.intent_id::text, e.booking_date::text, e.account_debit, e.account_credit,
	e.amount::text, e.tax_code, e.description, e.source, e.fx_currency, e.fx_amount::text, e.external_reference,
	e.custom_metadata::text, e.captured_at, e.hash, i.provenance`

func scanEntry(row pgx.CollectableRow) (ledger.JournalEntry, error) {
	var e ledger.JournalEntry
	var amount string
	var fx, meta *string
	var hash []byte
	var prov []byte
	err := row.Scan(&e.ID, &e.JournalNumber, &e.IntentID, &e.BookingDate, &e.AccountDebit, &e.AccountCredit,
		&amount, &e.TaxCode, &e.Description, &e.Source, &e.FXCurrency, &fx, &e.ExternalReference, &meta, &e.CapturedAt, &hash, &prov)
	if err != nil {
		return e, err
	}
	if e.Amount, err = money.Parse(amount); err != nil {
		return e, err
	}
	if fx != nil {
		a, err := money.Parse(*fx)
		if err != nil {
			return e, err
		}
		e.FXAmount = &a
	}
	if meta != nil {
		e.CustomMetadata = json.RawMessage(*meta)
	}
	e.Hash = hex.EncodeToString(hash)
	var p ledger.Provenance
	_ = json.Unmarshal(prov, &p)
	e.ProvenanceSummary = p.Summary()
	return e, nil
}

// Journal lists entries in journal order.
func (s *Store) Journal(ctx context.Context, tenant string, f ledger.JournalFilter) ([]ledger.JournalEntry, error) {
	w := &sqlWhere{}
	w.add("e.tenant_id = ?", tenant)
	if f.Account != "" {
		w.addSame("(e.account_debit = ? OR e.account_credit = ?)", f.Account)
	}
	if f.From != nil {
		w.add("e.booking_date >= ?", *f.From)
	}
	if f.To != nil {
		w.add("e.booking_date <= ?", *f.To)
	}
	if f.ExternalReference != "" {
		w.add("e.external_reference = ?", f.ExternalReference)
	}
	if f.Search != "" {
		w.addSame(`(e.description ILIKE '%' || ? || '%' OR e.account_debit = ? OR e.account_credit = ? OR e.external_reference ILIKE '%' || ? || '%')`, escapeLike(f.Search))
	}
	q := "SELECT " + eventColumns + " FROM ledger.journal_events e JOIN ledger.intents i ON i.tenant_id = e.tenant_id AND i.id = e.intent_id WHERE " +
		w.String() + fmt.Sprintf(" ORDER BY e.journal_number LIMIT %s OFFSET %s", w.next(f.Limit), w.next(f.Offset))
	return list(ctx, s, tenant, "ledger.Journal", scanEntry, q, w.args...)
}

// IntentDetail returns an intent with its entries, totals and links.
func (s *Store) IntentDetail(ctx context.Context, tenant, id string) (*ledger.IntentDetail, error) {
	var d ledger.IntentDetail
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT i.id::text, i.booking_date::text, i.period, i.description, i.source, i.category, i.document_id::text,
				i.reverses::text, r.id::text, i.created_at
			FROM ledger.intents i LEFT JOIN ledger.intents r ON r.tenant_id = i.tenant_id AND r.reverses = i.id
			WHERE i.tenant_id = $1 AND i.id = $2`, tenant, id).
			Scan(&d.IntentID, &d.BookingDate, &d.Period, &d.Description, &d.Source, &d.Category, &d.DocumentID, &d.Reverses, &d.ReversedBy, &d.CreatedAt)
		if err != nil {
			return db.NotFound(err, "intent %s not found", id)
		}
		rows, err := tx.Query(ctx, "SELECT "+eventColumns+` FROM ledger.journal_events e JOIN ledger.intents i ON i.tenant_id = e.tenant_id AND i.id = e.intent_id
			WHERE e.tenant_id = $1 AND e.intent_id = $2 ORDER BY e.journal_number`, tenant, id)
		if err != nil {
			return err
		}
		d.Entries, err = pgx.CollectRows(rows, scanEntry)
		return err
	})
	if err != nil {
		return nil, errs.Wrap("ledger.IntentDetail", err)
	}
	sum := money.Zero
	for _, e := range d.Entries {
		sum = sum.Add(e.Amount)
	}
	// Every event debits and credits the same amount, so an intent always balances.
	d.Summary = ledger.IntentSummary{EventCount: len(d.Entries), TotalAmount: sum, Debit: sum, Credit: sum, Balanced: true}
	d.LinkedIntents = []ledger.LinkedIntent{}
	if d.Reverses != nil {
		d.LinkedIntents = append(d.LinkedIntents, ledger.LinkedIntent{IntentID: *d.Reverses, Relation: "reverses"})
	}
	if d.ReversedBy != nil {
		d.LinkedIntents = append(d.LinkedIntents, ledger.LinkedIntent{IntentID: *d.ReversedBy, Relation: "reversed_by"})
	}
	return &d, nil
}

// SetPeriodLock records a period's lock state. It locks the journal head
// first, exactly as postings do: a lock and a posting of the same tenant
// serialise, so no posting commits into a period after its lock committed.
// A hard-locked period is PERIOD_ALREADY_LOCKED for any other status.
// With cp, the head is verified and signed in the same transaction: the
// checkpoint covers exactly the postings before the lock, and a chain
// that does not verify leaves the lock unset.
func (s *Store) SetPeriodLock(ctx context.Context, tenant, period, status, by string, cp *ledger.HeadCheckpoint) error {
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		var n int64
		if err := tx.QueryRow(ctx, "SELECT last_number FROM ledger.journal_heads WHERE tenant_id = $1 FOR UPDATE", tenant).Scan(&n); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("tenant %s has no journal head", tenant)
			}
			return err
		}
		// Festschreibung is final (GoBD): whoever sends the command, a
		// hard-locked month never opens again. The head lock above makes
		// this read and the write below one step.
		var cur string
		err := tx.QueryRow(ctx, "SELECT status FROM ledger.period_locks WHERE tenant_id = $1 AND period = $2", tenant, period).Scan(&cur)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if cur == "hard-locked" && status != cur {
			return errs.E(errs.PeriodAlreadyLocked, "period %s is hard-locked and cannot be set %s; nothing was changed", period, status)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ledger.period_locks (tenant_id, period, status, locked_by, changed_at) VALUES ($1, $2, $3, NULLIF($4, ''), clock_timestamp())
			ON CONFLICT (tenant_id, period) DO UPDATE SET status = EXCLUDED.status, locked_by = EXCLUDED.locked_by, changed_at = EXCLUDED.changed_at`,
			tenant, period, status, by); err != nil {
			return err
		}
		if _, err = outbox.Put(ctx, tx, schema, ledgerv1.EventPeriodLockSet, ledgerv1.SetPeriodLock{TenantID: tenant, Period: period, Status: status, LockedBy: by}); err != nil {
			return err
		}
		if cp == nil {
			return nil
		}
		v, err := s.verify(ctx, tx, tenant, false, cp.Keys)
		if err != nil {
			return err
		}
		c, err := cp.Sign(v)
		if err != nil || c == nil {
			return err
		}
		return addCheckpoint(ctx, tx, *c)
	})
	return errs.Wrap("ledger.SetPeriodLock", err)
}

// JournalFeed returns up to limit events after journal number after, in
// number order, with their intents' data; fewer only when the journal head
// is reached. Journal numbers are gapless, so the store reads windows of
// numbers (after, after+limit], each a bounded range of the primary key:
// the work per page stays the same however large the journal is and
// whatever the planner's statistics say. A date filter only thins a window
// out, so a page may need several windows.
func (s *Store) JournalFeed(ctx context.Context, tenant string, after int64, limit int, from, to *time.Time) (ledgerv1.JournalFeed, error) {
	feed := ledgerv1.JournalFeed{Lines: []ledgerv1.JournalLine{}, Last: after}
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT last_number FROM ledger.journal_heads WHERE tenant_id = $1", tenant).Scan(&feed.Head); err != nil {
			return db.NotFound(err, "tenant has no journal")
		}
		for lo := after + 1; len(feed.Lines) < limit && lo <= feed.Head; lo += int64(limit) {
			hi := lo + int64(limit) - 1
			rows, err := tx.Query(ctx, `SELECT e.id::text, e.journal_number, e.account_debit, e.account_credit, e.amount::text, e.tax_code,
					e.description, e.external_reference, e.intent_id::text, e.booking_date::text,
					CASE WHEN i.period = '' THEN to_char(e.booking_date, 'YYYY-MM') ELSE i.period END, e.source, i.document_id::text, e.captured_at
				FROM ledger.journal_events e JOIN ledger.intents i ON i.tenant_id = e.tenant_id AND i.id = e.intent_id
				WHERE e.tenant_id = $1 AND e.journal_number BETWEEN $2 AND $3
					AND ($5::date IS NULL OR e.booking_date >= $5) AND ($6::date IS NULL OR e.booking_date <= $6)
				ORDER BY e.journal_number LIMIT $4`, tenant, lo, hi, limit-len(feed.Lines), from, to)
			if err != nil {
				return err
			}
			var l ledgerv1.JournalLine
			_, err = pgx.ForEachRow(rows, []any{&l.ID, &l.JournalNumber, &l.AccountDebit, &l.AccountCredit, &l.Amount, &l.TaxCode,
				&l.Description, &l.ExternalReference, &l.IntentID, &l.BookingDate, &l.Period, &l.Source, &l.DocumentID, &l.CapturedAt}, func() error {
				feed.Lines = append(feed.Lines, l)
				feed.Last = l.JournalNumber
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return feed, errs.Wrap("ledger.JournalFeed", err)
	}
	return feed, nil
}
