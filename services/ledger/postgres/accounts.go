package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/ledger"
)

const accountColumns = `number, name, type, category, report_group, is_active, is_system, created_at`

var chartConstraints = map[string]*errs.Error{
	"accounts_pkey":                                errs.E(errs.AccountExists, "an account with this number already exists"),
	"tax_codes_tenant_id_vat_account_fkey":         errs.E(errs.AccountNotFound, "vat_account does not exist in the chart of accounts"),
	"tax_codes_tenant_id_self_assess_account_fkey": errs.E(errs.AccountNotFound, "self_assess_account does not exist in the chart of accounts"),
}

// ListAccounts returns a page of the chart and the number of matches.
func (s *Store) ListAccounts(ctx context.Context, tenant string, f ledger.AccountFilter) ([]ledger.Account, int, error) {
	w := &sqlWhere{}
	w.add("tenant_id = ?", tenant)
	if f.Q != "" {
		w.add(`(number LIKE ? || '%' OR lower(name) LIKE '%' || ? || '%')`, escapeLike(f.Q), escapeLike(strings.ToLower(f.Q)))
	}
	if f.Category != "" {
		w.add("lower(category) = ?", strings.ToLower(f.Category))
	}
	if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	var accounts []ledger.Account
	var total int
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM ledger.accounts WHERE "+w.String(), w.args...).Scan(&total); err != nil {
			return err
		}
		args := append(w.args[:len(w.args):len(w.args)], f.Limit, f.Offset)
		rows, err := tx.Query(ctx, fmt.Sprintf("SELECT %s FROM ledger.accounts WHERE %s ORDER BY number LIMIT $%d OFFSET $%d",
			accountColumns, w, len(args)-1, len(args)), args...)
		if err != nil {
			return err
		}
		accounts, err = pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.Account])
		return err
	})
	if err != nil {
		return nil, 0, errs.Wrap("ledger.ListAccounts", err)
	}
	return accounts, total, nil
}

// CreateAccount inserts an account. A repeated request with the same
// Idempotency-Key replays the first answer, also when it raced the first.
func (s *Store) CreateAccount(ctx context.Context, tenant string, a ledger.Account, idem ledger.IdemRequest) (ledger.Account, *ledger.IdemRecord, error) {
	var out ledger.Account
	var replay *ledger.IdemRecord
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		if replay, err = firstAnswer(ctx, tx, tenant, idem); err != nil || replay != nil {
			return err
		}
		rows, err := tx.Query(ctx, `INSERT INTO ledger.accounts (tenant_id, number, name, type, category, report_group)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+accountColumns, tenant, a.Number, a.Name, a.Type, a.Category, a.ReportGroup)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[ledger.Account]); err != nil {
			return err
		}
		return remember(ctx, tx, tenant, idem, 201, out)
	})
	if err != nil {
		err = db.MapConstraint(err, chartConstraints)
		if errs.Is(err, errs.AccountExists) && idem.Key != "" {
			// A concurrent request with the same key may have created it.
			var rec *ledger.IdemRecord
			lerr := db.InTenant(ctx, s.pool, tenant, db.ReadOnly, func(tx pgx.Tx) (err error) {
				rec, err = firstAnswer(ctx, tx, tenant, idem)
				return err
			})
			if lerr != nil || rec != nil {
				return ledger.Account{}, rec, errs.Wrap("ledger.CreateAccount", lerr)
			}
		}
		return ledger.Account{}, nil, errs.Wrap("ledger.CreateAccount", err)
	}
	return out, replay, nil
}

// SearchAccounts finds active accounts by number prefix or name part.
func (s *Store) SearchAccounts(ctx context.Context, tenant string, f ledger.AccountSearch) ([]ledger.AccountHit, error) {
	w := &sqlWhere{}
	w.add("tenant_id = ?", tenant)
	w.add("is_active")
	num, name := w.next(escapeLike(f.Q)), w.next(escapeLike(strings.ToLower(f.Q)))
	w.conds = append(w.conds, fmt.Sprintf("(number LIKE %s || '%%' OR lower(name) LIKE '%%' || %s || '%%')", num, name))
	if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	q := fmt.Sprintf(`SELECT number, name, type FROM ledger.accounts WHERE %s
		ORDER BY (number LIKE %s || '%%') DESC, (lower(name) LIKE %s || '%%') DESC, number LIMIT %s`, w, num, name, w.next(f.Limit))
	return list(ctx, s, tenant, "ledger.SearchAccounts", pgx.RowToStructByPos[ledger.AccountHit], q, w.args...)
}

// AccountEntries reads an account, a page of its journal entries in
// booking-date order and the totals over the whole range in one snapshot.
func (s *Store) AccountEntries(ctx context.Context, tenant string, f ledger.EntriesFilter) (*ledger.AccountEntries, error) {
	w := &sqlWhere{}
	w.add("e.tenant_id = ?", tenant)
	w.add("(e.account_debit = ? OR e.account_credit = ?)", f.Number, f.Number)
	if f.From != nil {
		w.add("e.booking_date >= ?::date", f.From.Format(time.DateOnly))
	}
	if f.To != nil {
		w.add("e.booking_date <= ?::date", f.To.Format(time.DateOnly))
	}
	res := &ledger.AccountEntries{}
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+accountColumns+" FROM ledger.accounts WHERE tenant_id = $1 AND number = $2", tenant, f.Number)
		if err != nil {
			return err
		}
		res.Account, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[ledger.Account])
		if errors.Is(err, pgx.ErrNoRows) {
			return errs.NotFoundf("account %s not found", f.Number)
		}
		if err != nil {
			return err
		}
		var debit, credit string
		if err := tx.QueryRow(ctx, `SELECT count(*), COALESCE(sum(e.amount) FILTER (WHERE e.account_debit = $2), 0)::text,
				COALESCE(sum(e.amount) FILTER (WHERE e.account_credit = $2), 0)::text
			FROM ledger.journal_events e WHERE `+w.String(), w.args...).Scan(&res.EntryCount, &debit, &credit); err != nil {
			return err
		}
		if res.DebitTotal, err = money.Parse(debit); err != nil {
			return err
		}
		if res.CreditTotal, err = money.Parse(credit); err != nil {
			return err
		}
		args := append(w.args[:len(w.args):len(w.args)], f.Limit, f.Offset)
		rows, err = tx.Query(ctx, fmt.Sprintf(`SELECT %s FROM ledger.journal_events e
			JOIN ledger.intents i ON i.tenant_id = e.tenant_id AND i.id = e.intent_id
			WHERE %s ORDER BY e.booking_date, e.journal_number LIMIT $%d OFFSET $%d`, eventColumns, w, len(args)-1, len(args)), args...)
		if err != nil {
			return err
		}
		entries, err := pgx.CollectRows(rows, scanEntry)
		if err != nil {
			return err
		}
		res.Entries = make([]ledger.AccountEntry, len(entries))
		for i, e := range entries {
			res.Entries[i] = ledger.AccountEntry{JournalEntry: e, Side: "credit", ContraAccount: e.AccountDebit}
			if e.AccountDebit == f.Number {
				res.Entries[i].Side, res.Entries[i].ContraAccount = "debit", e.AccountCredit
			}
		}
		return nil
	})
	if err != nil {
		return nil, errs.Wrap("ledger.AccountEntries", err)
	}
	res.Balance = res.DebitTotal.Sub(res.CreditTotal)
	return res, nil
}

// ListTaxCodes returns the tax codes by code.
func (s *Store) ListTaxCodes(ctx context.Context, tenant string, includeInactive bool) ([]ledger.TaxCode, error) {
	q := taxCodeSelect + " WHERE tenant_id = $1"
	if !includeInactive {
		q += " AND is_active"
	}
	return list(ctx, s, tenant, "ledger.ListTaxCodes", scanTaxCode, q+" ORDER BY code", tenant)
}

// UpdateTaxCode applies p to a tax code under a row lock, so concurrent
// changes serialise and NO_CHANGES is decided on the current row.
func (s *Store) UpdateTaxCode(ctx context.Context, tenant, code string, p ledger.TaxCodePatch, idem ledger.IdemRequest) (ledger.TaxCode, *ledger.IdemRecord, error) {
	var out ledger.TaxCode
	var replay *ledger.IdemRecord
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, taxCodeSelect+" WHERE tenant_id = $1 AND code = $2 FOR UPDATE", tenant, code)
		if err != nil {
			return err
		}
		cur, err := pgx.CollectExactlyOneRow(rows, scanTaxCode)
		if errors.Is(err, pgx.ErrNoRows) {
			return errs.E(errs.TaxCodeNotFound, "tax code %s not found", code)
		}
		if err != nil {
			return err
		}
		// Read under the row lock: a concurrent twin has committed by now.
		if replay, err = firstAnswer(ctx, tx, tenant, idem); err != nil || replay != nil {
			return err
		}
		next, err := p.Apply(cur)
		if err != nil {
			return err
		}
		if err := accountsExist(ctx, tx, tenant, map[string]*string{
			"vat_account": &next.VATAccount, "self_assess_account": next.SelfAssessAccount}); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE ledger.tax_codes SET label = $3, description = $4, rate = $5, vat_account = NULLIF($6, ''),
				self_assess_account = $7, is_active = $8 WHERE tenant_id = $1 AND code = $2`,
			tenant, code, next.Label, next.Description, next.Rate.String(), next.VATAccount, next.SelfAssessAccount, next.IsActive); err != nil {
			return err
		}
		out = next
		return remember(ctx, tx, tenant, idem, 200, next.Changed())
	})
	if err != nil {
		return ledger.TaxCode{}, nil, errs.Wrap("ledger.UpdateTaxCode", db.MapConstraint(err, chartConstraints))
	}
	return out, replay, nil
}

// accountsExist checks that every non-empty account named by a field is in
// the tenant's chart; each missing one is a detail of ACCOUNT_NOT_FOUND.
func accountsExist(ctx context.Context, tx pgx.Tx, tenant string, fields map[string]*string) error {
	var numbers []string
	for _, n := range fields {
		if n != nil && *n != "" {
			numbers = append(numbers, *n)
		}
	}
	if len(numbers) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, "SELECT number FROM ledger.accounts WHERE tenant_id = $1 AND number = ANY($2)", tenant, numbers)
	if err != nil {
		return err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var details []errs.Detail
	for _, field := range []string{"vat_account", "self_assess_account"} {
		if n := fields[field]; n != nil && *n != "" && !slices.Contains(found, *n) {
			details = append(details, errs.Field(field, "account "+*n+" does not exist in the chart of accounts"))
		}
	}
	if len(details) > 0 {
		return &errs.Error{Code: errs.AccountNotFound, Message: "the tax code names an account that does not exist; nothing was changed", Details: details}
	}
	return nil
}

// firstAnswer returns the first answer stored under the request's key,
// IDEMPOTENCY_KEY_REUSED when that request differed, or nil.
func firstAnswer(ctx context.Context, tx pgx.Tx, tenant string, r ledger.IdemRequest) (*ledger.IdemRecord, error) {
	if r.Key == "" {
		return nil, nil
	}
	rec, err := idem.Lookup(ctx, tx, schema, tenant, r.Scope, r.Key)
	switch {
	case err != nil || rec == nil:
		return nil, err
	case rec.Hash != r.Hash:
		return nil, errs.E(errs.IdempotencyKeyReused, "this Idempotency-Key was used with a different request")
	}
	return (*ledger.IdemRecord)(rec), nil
}

// remember stores the answer to an idempotent request with its effect.
func remember(ctx context.Context, tx pgx.Tx, tenant string, r ledger.IdemRequest, status int, response any) error {
	if r.Key == "" {
		return nil
	}
	body, err := json.Marshal(response)
	if err != nil {
		return err
	}
	return idem.SaveRecord(ctx, tx, schema, tenant, r.Scope, r.Key, idem.Record{Hash: r.Hash, Status: status, Body: body})
}
