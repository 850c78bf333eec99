package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/payables"
)

// runColumns read a payment run r with its debtor and file.
const runColumns = `r.id, r.status, r.label, r.bank_account_id, r.debtor_name, r.debtor_iban, r.debtor_bic,
	r.debtor_street, r.debtor_zip, r.debtor_city, r.debtor_country, r.execution_date::text,
	r.total_amount::text, r.total_discount::text, r.invoice_count, r.created_at, r.approved_at, r.exported_at,
	r.completed_at, r.cancelled_at, r.created_by, r.approved_by`

func scanRun(row pgx.CollectableRow) (payables.RunFile, error) {
	var f payables.RunFile
	r := &f.Run
	var total, discount string
	err := row.Scan(&r.ID, &r.Status, &r.Label, &r.BankAccountID, &f.Debtor.Name, &f.Debtor.IBAN, &f.Debtor.BIC,
		&f.Debtor.Address.Street, &f.Debtor.Address.Zip, &f.Debtor.Address.City, &f.Debtor.Address.Country, &r.ExecutionDate,
		&total, &discount, &r.InvoiceCount, &r.CreatedAt, &r.ApprovedAt, &r.ExportedAt, &r.CompletedAt, &r.CancelledAt,
		&r.CreatedBy, &r.ApprovedBy)
	if err != nil {
		return f, err
	}
	r.DebtorName, r.DebtorIBAN, r.DebtorBIC = f.Debtor.Name, f.Debtor.IBAN, f.Debtor.BIC
	if r.TotalAmount, err = money.Parse(total); err != nil {
		return f, err
	}
	r.TotalDiscount, err = money.Parse(discount)
	return f, err
}

const itemColumns = `i.invoice_id, i.vendor_id, i.vendor_name, i.invoice_number, i.iban, i.bic, i.amount::text, i.discount::text,
	i.remittance, i.end_to_end_id, i.street, i.zip, i.city, i.country, i.returned_at, i.return_reason`

func scanItem(row pgx.CollectableRow) (payables.RunItem, error) {
	var it payables.RunItem
	var amount, discount string
	err := row.Scan(&it.InvoiceID, &it.VendorID, &it.VendorName, &it.InvoiceNumber, &it.IBAN, &it.BIC, &amount, &discount,
		&it.Remittance, &it.EndToEndID, &it.Address.Street, &it.Address.Zip, &it.Address.City, &it.Address.Country,
		&it.ReturnedAt, &it.ReturnReason)
	if err != nil {
		return it, err
	}
	if it.Amount, err = money.Parse(amount); err != nil {
		return it, err
	}
	it.Discount, err = money.Parse(discount)
	return it, err
}

// PaymentRuns implements payables.RunStore.
func (s *Store) PaymentRuns(ctx context.Context, tenantID string, f payablesv1.PaymentRunFilter) ([]payables.PaymentRun, error) {
	where, args := []string{"r.tenant_id = $1"}, []any{tenantID}
	if f.Status != "" {
		args = append(args, f.Status)
		where = append(where, "r.status = $"+strconv.Itoa(len(args)))
	}
	args = append(args, f.Limit, f.Offset)
	q := `SELECT ` + runColumns + ` FROM payables.payment_runs r WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY r.created_at DESC, r.id LIMIT $` + strconv.Itoa(len(args)-1) + ` OFFSET $` + strconv.Itoa(len(args))
	var out []payables.PaymentRun
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		fs, err := pgx.CollectRows(rows, scanRun)
		for _, f := range fs {
			out = append(out, f.Run)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres.PaymentRuns: %w", err)
	}
	return out, nil
}

// PaymentRun implements payables.RunStore.
func (s *Store) PaymentRun(ctx context.Context, tenantID, id string) (payables.RunFile, error) {
	var out payables.RunFile
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		out, err = runFile(ctx, tx, tenantID, id, "")
		return err
	})
	if err = db.NotFound(err, "payment run %s not found", id); err != nil {
		return payables.RunFile{}, errs.Wrap("postgres.PaymentRun", err)
	}
	return out, nil
}

// runFile reads a run with its items and file, the run's row locked when
// lock says so.
func runFile(ctx context.Context, tx pgx.Tx, tenantID, id, lock string) (payables.RunFile, error) {
	rows, err := tx.Query(ctx, `SELECT `+runColumns+` FROM payables.payment_runs r WHERE r.tenant_id = $1 AND r.id = $2`+lock, tenantID, id)
	if err != nil {
		return payables.RunFile{}, err
	}
	f, err := pgx.CollectExactlyOneRow(rows, scanRun)
	if err != nil {
		return f, err
	}
	if rows, err = tx.Query(ctx, `SELECT `+itemColumns+` FROM payables.payment_run_items i WHERE i.tenant_id = $1 AND i.run_id = $2 ORDER BY i.position`,
		tenantID, id); err != nil {
		return f, err
	}
	if f.Items, err = pgx.CollectRows(rows, scanItem); err != nil {
		return f, err
	}
	for _, it := range f.Items {
		f.Run.Items = append(f.Run.Items, it.PaymentRunItem)
	}
	err = tx.QueryRow(ctx, `SELECT pain_xml FROM payables.payment_runs WHERE tenant_id = $1 AND id = $2`, tenantID, id).Scan(&f.PainXML)
	return f, err
}

// CreatePaymentRun implements payables.RunStore.
func (s *Store) CreatePaymentRun(ctx context.Context, tenantID string, r payables.NewRun, plan func([]payables.OpenInvoice) ([]payables.RunItem, error)) (payables.PaymentRun, error) {
	var out payables.PaymentRun
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		// The invoices are locked in one order, so that two runs created
		// at once over the same invoices queue instead of deadlocking; the
		// second then sees the first's items below.
		rows, err := tx.Query(ctx, `SELECT i.id, i.vendor_id, v.name, v.iban, v.bic, v.street, v.zip, v.city, v.country,
				i.invoice_number, i.state, i.currency, i.total_gross::text, i.paid_amount::text, i.discount_rate::text, i.discount_until
			FROM payables.incoming_invoices i JOIN payables.vendors v ON v.tenant_id = i.tenant_id AND v.id = i.vendor_id
			WHERE i.tenant_id = $1 AND i.id = ANY($2::uuid[]) ORDER BY i.id FOR UPDATE OF i`, tenantID, r.InvoiceIDs)
		if err != nil {
			return err
		}
		invs, err := pgx.CollectRows(rows, scanOpenInvoice)
		if err != nil {
			return err
		}
		items, err := plan(invs)
		if err != nil {
			return err
		}
		if err := notInActiveRun(ctx, tx, tenantID, r.InvoiceIDs); err != nil {
			return err
		}
		total, discount := money.Zero, money.Zero
		for _, it := range items {
			total, discount = total.Add(it.Amount), discount.Add(it.Discount)
		}
		a := r.Debtor.Address
		if _, err := tx.Exec(ctx, `INSERT INTO payables.payment_runs (id, tenant_id, label, bank_account_id, debtor_name, debtor_iban, debtor_bic,
				debtor_street, debtor_zip, debtor_city, debtor_country, execution_date, total_amount, total_discount, invoice_count, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			r.ID, tenantID, r.Label, r.BankAccountID, r.Debtor.Name, r.Debtor.IBAN, r.Debtor.BIC, a.Street, a.Zip, a.City, a.Country,
			r.ExecutionDate, total.String(), discount.String(), len(items), nullIfEmpty(r.CreatedBy)); err != nil {
			return err
		}
		batch := &pgx.Batch{}
		for n, it := range items {
			batch.Queue(`INSERT INTO payables.payment_run_items (run_id, position, tenant_id, invoice_id, vendor_id, vendor_name, invoice_number,
					iban, bic, street, zip, city, country, amount, discount, remittance, end_to_end_id)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
				r.ID, n+1, tenantID, it.InvoiceID, it.VendorID, it.VendorName, it.InvoiceNumber, it.IBAN, it.BIC,
				it.Address.Street, it.Address.Zip, it.Address.City, it.Address.Country, it.Amount.String(), it.Discount.String(),
				it.Remittance, it.EndToEndID)
		}
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return db.MapConstraint(err, runConstraints)
		}
		f, err := runFile(ctx, tx, tenantID, r.ID, "")
		if err != nil {
			return err
		}
		out = f.Run
		return idem.Save(ctx, tx, Schema.Schema, out)
	})
	if err != nil {
		return payables.PaymentRun{}, errs.Wrap("postgres.CreatePaymentRun", err)
	}
	return out, nil
}

// runConstraints answer what the unique index decides when the lock did
// not (an invoice inserted into a run some other way).
var runConstraints = map[string]*errs.Error{
	"payment_run_items_active": {Code: errs.InvoiceAlreadyInActiveRun, Message: "an invoice of the run is already in another active payment run",
		Details: []errs.Detail{errs.Field("invoice_ids", "an invoice is already in a draft, approved or exported payment run")}},
}

// notInActiveRun is INVOICE_ALREADY_IN_ACTIVE_RUN naming each of ids that
// is in a draft, approved or exported run.
func notInActiveRun(ctx context.Context, tx pgx.Tx, tenantID string, ids []string) error {
	rows, err := tx.Query(ctx, `SELECT i.invoice_id::text, i.run_id::text, r.status FROM payables.payment_run_items i
		JOIN payables.payment_runs r ON r.tenant_id = i.tenant_id AND r.id = i.run_id
		WHERE i.tenant_id = $1 AND i.active AND i.invoice_id = ANY($2::uuid[])`, tenantID, ids)
	if err != nil {
		return err
	}
	type hit struct{ invoice, run, status string }
	hits, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (hit, error) {
		var h hit
		return h, row.Scan(&h.invoice, &h.run, &h.status)
	})
	if err != nil || len(hits) == 0 {
		return err
	}
	at := map[string]hit{}
	for _, h := range hits {
		at[h.invoice] = h
	}
	var details []errs.Detail
	for i, id := range ids {
		if h, ok := at[id]; ok {
			details = append(details, errs.Field("invoice_ids["+strconv.Itoa(i)+"]", "invoice "+id+" is in payment run "+h.run+" ("+h.status+")"))
		}
	}
	return &errs.Error{Code: errs.InvoiceAlreadyInActiveRun, Message: fmt.Sprintf("%d of the invoices are already in an active payment run; cancel that run first", len(details)),
		Details: details}
}

func scanOpenInvoice(row pgx.CollectableRow) (payables.OpenInvoice, error) {
	var inv payables.OpenInvoice
	var gross, paid string
	var rate *string
	var until *time.Time
	var street, zip, city, country *string
	err := row.Scan(&inv.ID, &inv.VendorID, &inv.VendorName, &inv.VendorIBAN, &inv.VendorBIC, &street, &zip, &city, &country,
		&inv.InvoiceNumber, &inv.State, &inv.Currency, &gross, &paid, &rate, &until)
	if err != nil {
		return inv, err
	}
	inv.VendorAddress = payablesv1.Address{Street: deref(street), Zip: deref(zip), City: deref(city), Country: deref(country)}
	if inv.Gross, err = money.Parse(gross); err != nil {
		return inv, err
	}
	if inv.Paid, err = money.Parse(paid); err != nil {
		return inv, err
	}
	if rate != nil {
		d, err := decimal.NewFromString(*rate)
		if err != nil {
			return inv, err
		}
		inv.DiscountRate = &d
	}
	inv.DiscountUntil = until
	return inv, nil
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ChangePaymentRun implements payables.RunStore.
func (s *Store) ChangePaymentRun(ctx context.Context, tenantID, id string, decide func(payables.RunFile) (payables.Transition, error)) (payables.RunFile, error) {
	var out payables.RunFile
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		cur, err := runFile(ctx, tx, tenantID, id, " FOR UPDATE OF r")
		if err != nil {
			return err
		}
		t, err := decide(cur)
		if err != nil {
			return err
		}
		if t.To == cur.Run.Status {
			out = cur
			return nil
		}
		column := map[string]string{payablesv1.RunApproved: "approved_at", payablesv1.RunExported: "exported_at",
			payablesv1.RunCompleted: "completed_at", payablesv1.RunCancelled: "cancelled_at"}[t.To]
		if column == "" {
			return fmt.Errorf("no transition to %q", t.To)
		}
		if _, err := tx.Exec(ctx, `UPDATE payables.payment_runs SET status = $3, `+column+` = $4, pain_xml = coalesce($5, pain_xml),
			approved_by = coalesce($6, approved_by) WHERE tenant_id = $1 AND id = $2`, tenantID, id, t.To, t.At, t.PainXML, nullIfEmpty(t.By)); err != nil {
			return err
		}
		if t.To == payablesv1.RunCancelled {
			// The run is no longer active: its invoices are free. A
			// completed run keeps them: the bank executed its transfers,
			// so no other run may pay them again, while what is paid
			// (paid_amount) is only what the bank's reconciliations
			// settle, when the statement shows the transfers.
			if _, err := tx.Exec(ctx, `UPDATE payables.payment_run_items SET active = false WHERE tenant_id = $1 AND run_id = $2`, tenantID, id); err != nil {
				return err
			}
		}
		out, err = runFile(ctx, tx, tenantID, id, "")
		return err
	})
	if err = db.NotFound(err, "payment run %s not found", id); err != nil {
		return payables.RunFile{}, errs.Wrap("postgres.ChangePaymentRun", err)
	}
	return out, nil
}

// ReturnPaymentRunItem implements payables.RunStore.
func (s *Store) ReturnPaymentRunItem(ctx context.Context, tenantID, id, invoiceID string, reason *string, at time.Time, check func(payables.RunFile) error) (payables.RunFile, error) {
	var out payables.RunFile
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		cur, err := runFile(ctx, tx, tenantID, id, " FOR UPDATE OF r")
		if err != nil {
			return err
		}
		if err := check(cur); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE payables.payment_run_items SET active = false, returned_at = $4, return_reason = $5
			WHERE tenant_id = $1 AND run_id = $2 AND invoice_id = $3 AND returned_at IS NULL`, tenantID, id, invoiceID, at, reason)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("invoice %s: %d items of run %s returned", invoiceID, tag.RowsAffected(), id)
		}
		out, err = runFile(ctx, tx, tenantID, id, "")
		return err
	})
	if err = db.NotFound(err, "payment run %s not found", id); err != nil {
		return payables.RunFile{}, errs.Wrap("postgres.ReturnPaymentRunItem", err)
	}
	return out, nil
}
