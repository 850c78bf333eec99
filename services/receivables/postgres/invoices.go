package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

// Sales invoices (issue 12): the store side of receivables.Invoicing.

const invoiceColumns = `i.id, i.debtor_id, d.customer_number, d.name, i.state, coalesce(i.number, ''), i.invoice_date::text, i.due_date::text,
	coalesce(i.delivery_date::text, ''), coalesce(i.service_start::text, ''), coalesce(i.service_end::text, ''), i.currency,
	coalesce(i.exchange_rate::text, '0'), coalesce(i.buyer_reference, ''), coalesce(i.notes, ''), coalesce(i.exemption_reason, ''),
	i.lines, i.document, i.total_net::text, i.total_tax::text, i.total_gross::text, i.paid_amount::text, i.credited_amount::text,
	coalesce(i.booking_intent_id::text, ''), coalesce(i.document_id::text, ''), coalesce(i.void_reason, ''), coalesce(i.request_hash, ''),
	i.created_at, i.finalized_at, current_date::text, i.type, coalesce(i.corrects_id::text, ''), (i.xml IS NOT NULL AND i.pdf IS NOT NULL)`

const invoiceFrom = ` FROM receivables.sales_invoices i JOIN receivables.debtors d ON d.tenant_id = i.tenant_id AND d.id = i.debtor_id`

// statusExpr is the API status of a row (receivables.InvoiceStatus in SQL,
// for the list's filter).
const statusExpr = `(CASE WHEN i.state <> 'posted' THEN i.state
	WHEN i.type = 'credit_note' THEN 'paid'
	WHEN i.total_gross - i.paid_amount - i.credited_amount <= 0 THEN 'paid'
	WHEN i.due_date < current_date THEN 'overdue'
	WHEN i.paid_amount + i.credited_amount > 0 THEN 'partially_paid'
	ELSE 'open' END)`

func scanInvoice(row pgx.CollectableRow) (receivables.InvoiceRecord, error) {
	var r receivables.InvoiceRecord
	var rate, net, tax, gross, paid, credited string
	var lines, doc []byte
	err := row.Scan(&r.ID, &r.DebtorID, &r.Debtor.CustomerNumber, &r.Debtor.Name, &r.State, &r.Number, &r.InvoiceDate, &r.DueDate,
		&r.DeliveryDate, &r.ServiceStart, &r.ServiceEnd, &r.Currency, &rate, &r.BuyerReference, &r.Notes, &r.ExemptionReason,
		&lines, &doc, &net, &tax, &gross, &paid, &credited, &r.BookingIntentID, &r.DocumentID, &r.VoidReason, &r.RequestHash,
		&r.CreatedAt, &r.FinalizedAt, &r.Today, &r.Type, &r.CorrectsID, &r.HasFiles)
	if err != nil {
		return r, err
	}
	r.Debtor.ID = r.DebtorID
	for _, p := range []struct {
		s   string
		dst *decimal.Decimal
	}{{rate, &r.ExchangeRate}, {net, &r.TotalNet}, {tax, &r.TotalTax}, {gross, &r.TotalGross}, {paid, &r.PaidAmount}, {credited, &r.CreditedAmount}} {
		if *p.dst, err = decimal.NewFromString(p.s); err != nil {
			return r, err
		}
	}
	if err := json.Unmarshal(lines, &r.Lines); err != nil {
		return r, fmt.Errorf("lines: %w", err)
	}
	if len(doc) > 0 && string(doc) != "null" {
		r.Document = &einvoice.Document{}
		if err := json.Unmarshal(doc, r.Document); err != nil {
			return r, fmt.Errorf("document: %w", err)
		}
	}
	return r, nil
}

func invoice(ctx context.Context, tx pgx.Tx, tenantID, id, lock string) (receivables.InvoiceRecord, error) {
	rows, err := tx.Query(ctx, `SELECT `+invoiceColumns+invoiceFrom+` WHERE i.tenant_id = $1 AND i.id = $2`+lock, tenantID, id)
	if err != nil {
		return receivables.InvoiceRecord{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanInvoice)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CreateInvoice implements receivables.InvoiceStore.
func (s *Store) CreateInvoice(ctx context.Context, tenantID string, r receivables.InvoiceRecord, issue func(number string) (einvoice.Document, error)) (receivables.InvoiceRecord, bool, error) {
	lines, err := json.Marshal(r.Lines)
	if err != nil {
		return r, false, fmt.Errorf("postgres.CreateInvoice: %w", err)
	}
	var rate *string
	if r.Currency != "EUR" {
		x := r.ExchangeRate.String()
		rate = &x
	}
	var out receivables.InvoiceRecord
	var created bool
	err = db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO receivables.sales_invoices (id, tenant_id, debtor_id, type, state, invoice_date, due_date,
				delivery_date, service_start, service_end, currency, exchange_rate, buyer_reference, notes, exemption_reason, lines,
				total_net, total_tax, total_gross, request_hash)
			VALUES ($1, $2, $3, 'invoice', 'draft', $4::date, $5::date, $6::date, $7::date, $8::date, $9, $10::numeric, $11, $12, $13, $14,
				$15::numeric, $16::numeric, $17::numeric, $18)
			ON CONFLICT (id) DO NOTHING`,
			r.ID, tenantID, r.DebtorID, r.InvoiceDate, r.DueDate, nullable(r.DeliveryDate), nullable(r.ServiceStart), nullable(r.ServiceEnd),
			r.Currency, rate, nullable(r.BuyerReference), nullable(r.Notes), nullable(r.ExemptionReason), lines,
			r.TotalNet.String(), r.TotalTax.String(), r.TotalGross.String(), r.RequestHash)
		if err != nil {
			return err
		}
		created = tag.RowsAffected() == 1
		out, err = invoice(ctx, tx, tenantID, r.ID, "")
		if errors.Is(err, pgx.ErrNoRows) {
			// The id is another tenant's: a key derived from another
			// tenant's request can only collide by a SHA-1 collision.
			return errs.E(errs.Conflict, "invoice id already taken")
		}
		if err != nil || !created || issue == nil {
			return err
		}
		out, err = issueDraft(ctx, tx, tenantID, out, issue)
		return err
	})
	if err != nil {
		return receivables.InvoiceRecord{}, false, errs.Wrap("postgres.CreateInvoice", err)
	}
	return out, created, nil
}

// IssueInvoice implements receivables.InvoiceStore.
func (s *Store) IssueInvoice(ctx context.Context, tenantID, id string, issue func(number string) (einvoice.Document, error)) (receivables.InvoiceRecord, error) {
	var out receivables.InvoiceRecord
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		cur, err := invoice(ctx, tx, tenantID, id, " FOR UPDATE OF i")
		if err != nil {
			return err
		}
		out, err = issueDraft(ctx, tx, tenantID, cur, issue)
		return err
	})
	if err = db.NotFound(err, "sales invoice %s not found", id); err != nil {
		return receivables.InvoiceRecord{}, errs.Wrap("postgres.IssueInvoice", err)
	}
	return out, nil
}

// issueDraft gives the draft cur, locked or just inserted by tx, the next
// number of its year and issue's document, and moves it to pending; a row
// past draft is returned as it is.
func issueDraft(ctx context.Context, tx pgx.Tx, tenantID string, cur receivables.InvoiceRecord, issue func(number string) (einvoice.Document, error)) (receivables.InvoiceRecord, error) {
	if cur.State != "draft" {
		return cur, nil
	}
	day, err := time.Parse(time.DateOnly, cur.InvoiceDate)
	if err != nil {
		return cur, err
	}
	number, err := AllocateInvoiceNumber(ctx, tx, tenantID, day.Year())
	if err != nil {
		return cur, err
	}
	d, err := issue(number)
	if err != nil {
		return cur, err
	}
	doc, err := json.Marshal(d)
	if err != nil {
		return cur, err
	}
	// No XML and PDF yet: they are rendered after the commit, outside the
	// counter's lock, and stored when the invoice is confirmed.
	t := d.Totals
	_, err = tx.Exec(ctx, `UPDATE receivables.sales_invoices SET state = 'pending', number = $3, document = $4,
			total_net = $5::numeric, total_tax = $6::numeric, total_gross = $7::numeric, updated_at = now()
		WHERE tenant_id = $1 AND id = $2`,
		tenantID, cur.ID, number, doc, t.TaxBasis.String(), t.Tax.String(), t.Grand.String())
	if err != nil {
		return cur, err
	}
	return invoice(ctx, tx, tenantID, cur.ID, "")
}

// ConfirmInvoice implements receivables.InvoiceStore.
func (s *Store) ConfirmInvoice(ctx context.Context, tenantID, id, intentID, documentID string, xml, pdf []byte, ev receivablesv1.InvoiceIssued) (receivables.InvoiceRecord, error) {
	out, err := s.confirm(ctx, tenantID, id, intentID, documentID, xml, pdf, receivablesv1.EventInvoiceIssued, ev)
	return out, errs.Wrap("postgres.ConfirmInvoice", err)
}

// confirm moves a pending sales document (invoice or credit note) to
// posted with its booking and ledger document, stores files not stored
// yet (nil leaves them: credit notes and rows of an earlier version were
// stored with them) and writes the event; a posted one is returned as it
// is.
func (s *Store) confirm(ctx context.Context, tenantID, id, intentID, documentID string, xml, pdf []byte, subject string, ev any) (receivables.InvoiceRecord, error) {
	var out receivables.InvoiceRecord
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		cur, err := invoice(ctx, tx, tenantID, id, " FOR UPDATE OF i")
		if err != nil {
			return err
		}
		switch cur.State {
		case "posted":
			out = cur
			return nil
		case "pending":
		default:
			kind := "sales invoice"
			if cur.Type == receivablesv1.TypeCreditNote {
				kind = "credit note"
			}
			return errs.E(errs.Conflict, "%s %s is %s, not pending", kind, cmp.Or(cur.Number, id), cur.State)
		}
		if _, err := tx.Exec(ctx, `UPDATE receivables.sales_invoices SET state = 'posted', booking_intent_id = $3, document_id = $4,
				xml = coalesce(xml, $5), pdf = coalesce(pdf, $6), finalized_at = now(), updated_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, id, intentID, documentID, xml, pdf); err != nil {
			return err
		}
		if _, err := outbox.Put(ctx, tx, Schema.Schema, subject, ev); err != nil {
			return err
		}
		out, err = invoice(ctx, tx, tenantID, id, "")
		return err
	})
	return out, db.NotFound(err, "sales document %s not found", id)
}

// VoidInvoice implements receivables.InvoiceStore.
func (s *Store) VoidInvoice(ctx context.Context, tenantID, id, reason string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE receivables.sales_invoices SET state = 'void', void_reason = $3, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 AND state = 'pending'`, tenantID, id, reason)
		return err
	})
	if err != nil {
		return errs.Wrap("postgres.VoidInvoice", err)
	}
	return nil
}

// Invoice implements receivables.InvoiceStore.
func (s *Store) Invoice(ctx context.Context, tenantID, id string) (receivables.InvoiceRecord, error) {
	var out receivables.InvoiceRecord
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		var err error
		out, err = invoice(ctx, tx, tenantID, id, "")
		return err
	})
	if err = db.NotFound(err, "sales invoice %s not found", id); err != nil {
		return receivables.InvoiceRecord{}, errs.Wrap("postgres.Invoice", err)
	}
	return out, nil
}

// Invoices implements receivables.InvoiceStore.
func (s *Store) Invoices(ctx context.Context, tenantID string, f receivablesv1.InvoiceFilter) ([]receivables.InvoiceRecord, error) {
	where, args := []string{"i.tenant_id = $1", "i.type = 'invoice'"}, []any{tenantID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.DebtorID != "" {
		add("i.debtor_id = ?", f.DebtorID)
	}
	if f.Status != "" {
		add(statusExpr+" = ?", f.Status)
	}
	if f.From != "" {
		add("i.invoice_date >= ?::date", f.From)
	}
	if f.To != "" {
		add("i.invoice_date <= ?::date", f.To)
	}
	args = append(args, f.Limit, f.Offset)
	q := `SELECT ` + invoiceColumns + invoiceFrom + ` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY i.invoice_date DESC, i.number DESC NULLS FIRST, i.created_at DESC, i.id LIMIT $` + strconv.Itoa(len(args)-1) + ` OFFSET $` + strconv.Itoa(len(args))
	var out []receivables.InvoiceRecord
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanInvoice)
		return err
	})
	if err != nil {
		return nil, errs.Wrap("postgres.Invoices", err)
	}
	return out, nil
}

// InvoiceFile implements receivables.InvoiceStore.
func (s *Store) InvoiceFile(ctx context.Context, tenantID, id string, pdf bool) (string, []byte, error) {
	col := "xml"
	if pdf {
		col = "pdf"
	}
	var number string
	var content []byte
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT number, `+col+` FROM receivables.sales_invoices
			WHERE tenant_id = $1 AND id = $2 AND state <> 'draft' AND `+col+` IS NOT NULL`, tenantID, id).Scan(&number, &content)
	})
	if err = db.NotFound(err, "sales invoice %s not found or not issued", id); err != nil {
		return "", nil, errs.Wrap("postgres.InvoiceFile", err)
	}
	return number, content, nil
}

// InvoiceSettings implements receivables.InvoiceStore.
func (s *Store) InvoiceSettings(ctx context.Context, tenantID string) (receivablesv1.Settings, error) {
	out := receivablesv1.Settings{InvoiceNumberPrefix: receivables.DefaultInvoicePrefix}
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT invoice_number_prefix, payment_iban, payment_bic, contact_name, contact_email, contact_phone
			FROM receivables.settings WHERE tenant_id = $1`, tenantID).
			Scan(&out.InvoiceNumberPrefix, &out.PaymentIBAN, &out.PaymentBIC, &out.ContactName, &out.ContactEmail, &out.ContactPhone)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return receivablesv1.Settings{}, errs.Wrap("postgres.InvoiceSettings", err)
	}
	return out, nil
}

// PutInvoiceSettings implements receivables.InvoiceStore.
func (s *Store) PutInvoiceSettings(ctx context.Context, tenantID string, v receivablesv1.Settings) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO receivables.settings (tenant_id, invoice_number_prefix, payment_iban, payment_bic, contact_name, contact_email, contact_phone)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (tenant_id) DO UPDATE SET invoice_number_prefix = EXCLUDED.invoice_number_prefix, payment_iban = EXCLUDED.payment_iban,
				payment_bic = EXCLUDED.payment_bic, contact_name = EXCLUDED.contact_name, contact_email = EXCLUDED.contact_email,
				contact_phone = EXCLUDED.contact_phone, updated_at = now()`,
			tenantID, v.InvoiceNumberPrefix, v.PaymentIBAN, v.PaymentBIC, v.ContactName, v.ContactEmail, v.ContactPhone)
		return err
	})
	if err != nil {
		return errs.Wrap("postgres.PutInvoiceSettings", err)
	}
	return nil
}
