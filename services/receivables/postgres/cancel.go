package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/receivables"
	"github.com/ledgerplatform/ledger/services/receivables/einvoice"
)

// lockOriginal locks the document a credit note corrects and reads its
// state.
func lockOriginal(ctx context.Context, tx pgx.Tx, tenantID, id string) (receivables.Original, error) {
	var o receivables.Original
	var gross, paid, credited string
	err := tx.QueryRow(ctx, `SELECT type, state, coalesce(number, ''), total_gross::text, paid_amount::text, credited_amount::text
		FROM receivables.sales_invoices WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tenantID, id).
		Scan(&o.Type, &o.State, &o.Number, &gross, &paid, &credited)
	if err != nil {
		return o, err
	}
	for _, p := range []struct {
		s   string
		dst *decimal.Decimal
	}{{gross, &o.TotalGross}, {paid, &o.PaidAmount}, {credited, &o.CreditedAmount}} {
		if *p.dst, err = decimal.NewFromString(p.s); err != nil {
			return o, err
		}
	}
	return o, nil
}

// IssueCreditNote implements receivables.CreditStore. The original is
// locked before the credit note is looked for, so two concurrent
// cancellations queue on it and the second finds the first's credit note.
func (s *Store) IssueCreditNote(ctx context.Context, tenantID string, d receivables.CreditNoteDraft, check func(receivables.Original) error,
	render func(orig receivables.InvoiceRecord, number string) (receivables.Issued, error)) (receivables.InvoiceRecord, error) {
	var out receivables.InvoiceRecord
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		o, err := lockOriginal(ctx, tx, tenantID, d.CorrectsID)
		if err != nil {
			return err
		}
		out, err = invoice(ctx, tx, tenantID, d.ID, "")
		if !errors.Is(err, pgx.ErrNoRows) {
			return err // found (resume) or failed
		}
		if err := check(o); err != nil {
			return err
		}
		orig, err := invoice(ctx, tx, tenantID, d.CorrectsID, "")
		if err != nil {
			return err
		}
		day, err := time.Parse(time.DateOnly, d.Date)
		if err != nil {
			return err
		}
		number, err := AllocateInvoiceNumber(ctx, tx, tenantID, day.Year())
		if err != nil {
			return err
		}
		is, err := render(orig, number)
		if err != nil {
			return err
		}
		doc, err := json.Marshal(is.Document)
		if err != nil {
			return err
		}
		t := is.Document.Totals
		// Lines as the row keeps them: the credit note's own (a partial
		// one's subset) in the invoice's form.
		lines := make([]receivables.Line, 0, len(is.Document.Lines))
		for _, l := range is.Document.Lines {
			lines = append(lines, receivables.Line{Description: l.Description, Quantity: l.Quantity, Unit: l.UnitCode, UnitPrice: l.UnitPrice,
				Discount: l.Discount, TaxCategory: string(l.TaxCategory), TaxRate: l.TaxRate, TaxCode: lineTaxCode(orig.Lines, l.TaxCategory, l.TaxRate)})
		}
		lj, err := json.Marshal(lines)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO receivables.sales_invoices (id, tenant_id, debtor_id, type, state, number, invoice_date, due_date,
				delivery_date, service_start, service_end, currency, exchange_rate, buyer_reference, exemption_reason, lines, document,
				total_net, total_tax, total_gross, corrects_id, xml, pdf)
			SELECT $1, tenant_id, debtor_id, 'credit_note', 'pending', $3, $4::date, $4::date, delivery_date, service_start, service_end,
				currency, exchange_rate, buyer_reference, exemption_reason, $5, $6, $7::numeric, $8::numeric, $9::numeric, id, $10, $11
			FROM receivables.sales_invoices WHERE tenant_id = $2 AND id = $12`,
			d.ID, tenantID, number, d.Date, lj, doc, t.TaxBasis.String(), t.Tax.String(), t.Grand.String(), is.XML, is.PDF, d.CorrectsID)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE receivables.sales_invoices SET credited_amount = credited_amount + $3::numeric, updated_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, d.CorrectsID, t.Grand.String()); err != nil {
			return err
		}
		out, err = invoice(ctx, tx, tenantID, d.ID, "")
		return err
	})
	if err = db.NotFound(err, "sales invoice %s not found", d.CorrectsID); err != nil {
		return receivables.InvoiceRecord{}, errs.Wrap("postgres.IssueCreditNote", err)
	}
	return out, nil
}

// lineTaxCode is the ledger tax code the original's lines of a category
// and rate carry.
func lineTaxCode(lines []receivables.Line, cat einvoice.TaxCategory, rate decimal.Decimal) string {
	for _, l := range lines {
		if l.TaxCategory == string(cat) && l.TaxRate.Equal(rate) {
			return l.TaxCode
		}
	}
	return ""
}

// ConfirmCreditNote implements receivables.CreditStore.
func (s *Store) ConfirmCreditNote(ctx context.Context, tenantID, id, intentID, documentID string, ev receivablesv1.CreditNoteIssued) (receivables.InvoiceRecord, error) {
	out, err := s.confirm(ctx, tenantID, id, intentID, documentID, nil, nil, receivablesv1.EventCreditNoteIssued, ev)
	return out, errs.Wrap("postgres.ConfirmCreditNote", err)
}

// VoidCreditNote implements receivables.CreditStore.
func (s *Store) VoidCreditNote(ctx context.Context, tenantID, id, reason string) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		var corrects, gross string
		err := tx.QueryRow(ctx, `UPDATE receivables.sales_invoices SET state = 'void', void_reason = $3, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 AND type = 'credit_note' AND state = 'pending' RETURNING corrects_id::text, total_gross::text`,
			tenantID, id, reason).Scan(&corrects, &gross)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // not pending (any more): nothing to give back
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE receivables.sales_invoices SET credited_amount = credited_amount - $3::numeric, updated_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, corrects, gross)
		return err
	})
	if err != nil {
		return errs.Wrap("postgres.VoidCreditNote", err)
	}
	return nil
}
