package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
)

const salesDocumentColumns = `i.id, i.debtor_id, d.name, i.type, i.state, i.number, to_char(i.invoice_date, 'YYYY-MM-DD'),
	to_char(i.due_date, 'YYYY-MM-DD'), i.currency, i.total_gross::text, i.paid_amount::text, i.credited_amount::text`

// remainingSQL is receivables.SalesDocument.Remaining of a posted
// invoice; statusWhere are the conditions under which
// SalesDocument.Status answers each status (today adds the parameter
// holding the day, only where it is needed: an unused parameter has no type), so that a status filter pages in the database.
const remainingSQL = `(i.total_gross - i.paid_amount - i.credited_amount)`

func statusWhere(status string, today func() string) string {
	postedOpen := `i.state = 'posted' AND i.type = 'invoice' AND ` + remainingSQL + ` > 0`
	switch status {
	case receivablesv1.StatusDraft:
		return `i.state = 'draft'`
	case receivablesv1.StatusPaid:
		return `i.state = 'posted' AND (i.type = 'credit_note' OR ` + remainingSQL + ` <= 0)`
	case receivablesv1.StatusPartiallyPaid:
		return postedOpen + ` AND i.paid_amount + i.credited_amount > 0 AND i.due_date >= ` + today() + `::date`
	case receivablesv1.StatusOverdue:
		return postedOpen + ` AND i.due_date < ` + today() + `::date`
	case receivablesv1.StatusOpen:
		return postedOpen + ` AND i.paid_amount + i.credited_amount <= 0 AND i.due_date >= ` + today() + `::date`
	}
	return "false"
}

func scanSalesDocument(row pgx.CollectableRow) (receivables.SalesDocument, error) {
	var d receivables.SalesDocument
	var gross, paid, credited string
	err := row.Scan(&d.ID, &d.DebtorID, &d.DebtorName, &d.Type, &d.State, &d.Number, &d.InvoiceDate, &d.DueDate, &d.Currency,
		&gross, &paid, &credited)
	if err != nil {
		return d, err
	}
	if d.TotalGross, err = decimal.NewFromString(gross); err != nil {
		return d, err
	}
	if d.PaidAmount, err = decimal.NewFromString(paid); err != nil {
		return d, err
	}
	d.CreditedAmount, err = decimal.NewFromString(credited)
	return d, err
}

// SalesDocuments implements receivables.OutgoingStore.
func (s *Store) SalesDocuments(ctx context.Context, tenantID string, q receivables.OutgoingQuery) ([]receivables.SalesDocument, error) {
	where, args := []string{"i.tenant_id = $1"}, []any{tenantID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.CustomerID != "" {
		where = append(where, "i.debtor_id = "+arg(q.CustomerID))
	}
	if q.Type != "" {
		where = append(where, "i.type = "+arg(q.Type))
	}
	if q.StartDate != "" {
		where = append(where, "i.invoice_date >= "+arg(q.StartDate)+"::date")
	}
	if q.EndDate != "" {
		where = append(where, "i.invoice_date <= "+arg(q.EndDate)+"::date")
	}
	if q.Status != "" {
		where = append(where, "("+statusWhere(q.Status, func() string { return arg(q.Today) })+")")
	}
	limit, offset := arg(q.Limit), arg(q.Offset)
	sql := `SELECT ` + salesDocumentColumns + ` FROM receivables.sales_invoices i JOIN receivables.debtors d ON d.tenant_id = i.tenant_id AND d.id = i.debtor_id
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY i.invoice_date DESC, i.number DESC NULLS FIRST, i.created_at DESC, i.id LIMIT ` + limit + ` OFFSET ` + offset
	return s.salesDocuments(ctx, "postgres.SalesDocuments", tenantID, sql, args)
}

// OpenInvoices implements receivables.OutgoingStore.
func (s *Store) OpenInvoices(ctx context.Context, tenantID, debtorID, period string) ([]receivables.SalesDocument, error) {
	where, args := []string{"i.tenant_id = $1", "i.state = 'posted'", "i.type = 'invoice'", remainingSQL + " > 0"}, []any{tenantID}
	if debtorID != "" {
		args = append(args, debtorID)
		where = append(where, "i.debtor_id = $"+strconv.Itoa(len(args)))
	}
	if period != "" {
		args = append(args, period+"-01")
		n := "$" + strconv.Itoa(len(args)) + "::date"
		where = append(where, "i.invoice_date >= "+n+" AND i.invoice_date < "+n+" + interval '1 month'")
	}
	sql := `SELECT ` + salesDocumentColumns + ` FROM receivables.sales_invoices i JOIN receivables.debtors d ON d.tenant_id = i.tenant_id AND d.id = i.debtor_id
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY lower(d.name), d.id, i.invoice_date, i.number`
	return s.salesDocuments(ctx, "postgres.OpenInvoices", tenantID, sql, args)
}

func (s *Store) salesDocuments(ctx context.Context, op, tenantID, sql string, args []any) ([]receivables.SalesDocument, error) {
	var out []receivables.SalesDocument
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanSalesDocument)
		return err
	})
	if err != nil {
		return nil, errs.Wrap(op, err)
	}
	return out, nil
}
