package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/services/payables"
)

// caseSelect reads a review case c with its extraction e and, once
// approved, its incoming invoice i.
const caseSelect = `SELECT c.id, c.queue_state, c.document_id, c.inbox_item_id, c.extraction_id, c.invoice, c.vendor_candidates,
		c.issues, c.posting_errors, c.incoming_invoice_id, i.booking_intent_id, c.reject_reason, c.created_at, c.updated_at,
		c.duplicate_hints, c.vendor_suggestions, e.compliance_check, c.corrected, c.attempt,
		EXISTS (SELECT 1 FROM payables.incoming_invoices p WHERE p.tenant_id = c.tenant_id AND p.review_case_id = c.id AND p.state = 'pending'),
		coalesce((e.ocr_result->>'is_credit_note')::boolean, false)
	FROM payables.review_cases c
	JOIN payables.extractions e ON e.tenant_id = c.tenant_id AND e.id = c.extraction_id
	LEFT JOIN payables.incoming_invoices i ON i.tenant_id = c.tenant_id AND i.id = c.incoming_invoice_id`

func scanCase(row pgx.CollectableRow) (payables.CaseRecord, error) {
	var r payables.CaseRecord
	var inv, cands, issues, perrs, hints, sugg, cc []byte
	err := row.Scan(&r.ID, &r.QueueState, &r.DocumentID, &r.InboxItemID, &r.ExtractionID, &inv, &cands, &issues, &perrs,
		&r.IncomingInvoiceID, &r.BookingIntentID, &r.RejectReason, &r.CreatedAt, &r.UpdatedAt, &hints, &sugg, &cc,
		&r.Corrected, &r.Attempt, &r.Pending, &r.IsCreditNote)
	if err != nil {
		return r, err
	}
	for _, p := range []struct {
		b []byte
		v any
	}{{inv, &r.Invoice}, {cands, &r.VendorCandidates}, {issues, &r.Issues}, {perrs, &r.PostingErrors}, {hints, &r.DuplicateHints},
		{sugg, &r.VendorSuggestions}} {
		if err := json.Unmarshal(p.b, p.v); err != nil {
			return r, fmt.Errorf("review case %s: %w", r.ID, err)
		}
	}
	if len(cc) > 0 {
		r.ComplianceCheck = new(payablesv1.ComplianceCheck)
		if err := json.Unmarshal(cc, r.ComplianceCheck); err != nil {
			return r, fmt.Errorf("review case %s: %w", r.ID, err)
		}
	}
	return r, nil
}

// listView drops what only the detail shows.
func listView(r payables.CaseRecord) payablesv1.ReviewCase { return r.ReviewCase }

// detailView shows the detail's lists as [] rather than leaving them out.
func detailView(r payables.CaseRecord) payablesv1.ReviewCaseDetail {
	c := r.ReviewCaseDetail
	if c.DuplicateHints == nil {
		c.DuplicateHints = []payablesv1.DuplicateHint{}
	}
	if c.VendorSuggestions == nil {
		c.VendorSuggestions = []payablesv1.VendorInput{}
	}
	return c
}

// reviewCase reads a case; lock locks it first, in a statement of its
// own: a read that waited for the lock would otherwise see its joins (the
// pending invoice a concurrent approval just wrote) as they were before.
func reviewCase(ctx context.Context, tx pgx.Tx, tenantID, id string, lock bool) (payables.CaseRecord, error) {
	if lock {
		var locked string
		if err := tx.QueryRow(ctx, `SELECT id FROM payables.review_cases WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tenantID, id).Scan(&locked); err != nil {
			return payables.CaseRecord{}, err
		}
	}
	rows, err := tx.Query(ctx, caseSelect+` WHERE c.tenant_id = $1 AND c.id = $2`, tenantID, id)
	if err != nil {
		return payables.CaseRecord{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanCase)
}

// OpenReviewCase opens the review case of a done extraction in tx (the
// extraction worker's transaction, in the tenant's scope): it normalises
// the extraction's OCR result into the case's invoice (payables.Normalise),
// finds the vendor candidates and duplicate hints, sets the queue state
// (payables.QueueState) and links the inbox item to the case. One case per
// extraction: called again, it returns the case it opened.
func OpenReviewCase(ctx context.Context, tx pgx.Tx, tenantID, extractionID string) (caseID string, err error) {
	defer func() {
		if err != nil {
			err = errs.Wrap("postgres.OpenReviewCase", err)
		}
	}()
	err = tx.QueryRow(ctx, `SELECT id FROM payables.review_cases WHERE tenant_id = $1 AND extraction_id = $2`, tenantID, extractionID).Scan(&caseID)
	if err == nil {
		return caseID, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", err
	}
	var documentID, state string
	var inboxItemID *string
	var ocrRaw, ccRaw, matchRaw []byte
	err = tx.QueryRow(ctx, `SELECT document_id, inbox_item_id, state, ocr_result, compliance_check, vendor_match
		FROM payables.extractions WHERE tenant_id = $1 AND id = $2`, tenantID, extractionID).
		Scan(&documentID, &inboxItemID, &state, &ocrRaw, &ccRaw, &matchRaw)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errs.NotFoundf("extraction %s not found", extractionID)
	}
	if err != nil {
		return "", err
	}
	if state != "done" || len(ocrRaw) == 0 {
		return "", fmt.Errorf("extraction %s is %s, not done", extractionID, state)
	}
	var ocr payablesv1.OCRResult
	if err := json.Unmarshal(ocrRaw, &ocr); err != nil {
		return "", fmt.Errorf("extraction %s: ocr_result: %w", extractionID, err)
	}
	var cc *payablesv1.ComplianceCheck
	if len(ccRaw) > 0 && string(ccRaw) != "null" {
		cc = new(payablesv1.ComplianceCheck)
		if err := json.Unmarshal(ccRaw, cc); err != nil {
			return "", fmt.Errorf("extraction %s: compliance_check: %w", extractionID, err)
		}
	}
	var match payablesv1.VendorMatch
	if len(matchRaw) > 0 && string(matchRaw) != "null" {
		if err := json.Unmarshal(matchRaw, &match); err != nil {
			return "", fmt.Errorf("extraction %s: vendor_match: %w", extractionID, err)
		}
	}
	var matched *payables.Vendor
	if match.Status == payablesv1.MatchMatched && match.VendorID != nil && payables.ValidID(*match.VendorID) {
		v, err := vendor(ctx, tx, tenantID, *match.VendorID, "")
		switch {
		case err == nil:
			matched = &v
		case !errors.Is(err, pgx.ErrNoRows):
			return "", err
		}
	}
	inv := payables.Normalise(ocr, matched)
	cands, err := vendorCandidates(ctx, tx, tenantID, ocr, match, matched)
	if err != nil {
		return "", err
	}
	sugg := []payablesv1.VendorInput{}
	if matched == nil && strings.TrimSpace(ocr.VendorName) != "" {
		sugg = append(sugg, vendorSuggestion(ocr))
	}
	id := uuid.NewString()
	hints, err := duplicateHints(ctx, tx, tenantID, id, inv)
	if err != nil {
		return "", err
	}
	issues := payables.Issues(inv, cc, ocr.IsCreditNote, false)
	qs := payables.QueueState(issues, cc, false, hints)
	err = tx.QueryRow(ctx, `INSERT INTO payables.review_cases (id, tenant_id, extraction_id, document_id, inbox_item_id, queue_state, invoice,
			vendor_id, invoice_number, invoice_date, total_gross, vendor_candidates, vendor_suggestions, duplicate_hints, issues)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (tenant_id, extraction_id) DO UPDATE SET updated_at = review_cases.updated_at RETURNING id`,
		id, tenantID, extractionID, documentID, inboxItemID, qs, jsonOf(inv), inv.VendorID, inv.InvoiceNumber, inv.InvoiceDate,
		grossOf(inv), jsonOf(cands), jsonOf(sugg), jsonOf(hints), jsonOf(issues)).Scan(&caseID)
	if err != nil {
		return "", err
	}
	if inboxItemID != nil {
		if _, err := tx.Exec(ctx, `UPDATE payables.inbox_items SET review_case_id = $3 WHERE tenant_id = $1 AND id = $2`,
			tenantID, *inboxItemID, caseID); err != nil {
			return "", err
		}
	}
	return caseID, nil
}

func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// The values are this package's own types: they always marshal.
		panic(err)
	}
	return b
}

// grossOf is the gross duplicates are compared by: none while the
// invoice has no lines.
func grossOf(inv payablesv1.ReviewInvoice) *string {
	if len(inv.Lines) == 0 {
		return nil
	}
	s := inv.TotalGross.StringFixed(2)
	return &s
}

// vendorCandidates are the matched vendor and the tenant's vendors whose
// VAT ID, IBAN or name (as duplicates are compared) is the document's,
// best first.
func vendorCandidates(ctx context.Context, tx pgx.Tx, tenantID string, ocr payablesv1.OCRResult, match payablesv1.VendorMatch, matched *payables.Vendor) ([]payablesv1.VendorCandidate, error) {
	out := []payablesv1.VendorCandidate{}
	seen := map[string]bool{}
	if matched != nil {
		method := "extraction"
		if match.MatchMethod != nil {
			method = *match.MatchMethod
		}
		out = append(out, payablesv1.VendorCandidate{VendorID: matched.ID, Name: matched.Name, Method: method, Confidence: match.Confidence, Matched: true})
		seen[matched.ID] = true
	}
	norm := func(s string) string { return strings.ToUpper(strings.Join(strings.Fields(s), "")) }
	rows, err := tx.Query(ctx, `SELECT id, name, CASE WHEN vat_id = $2 THEN 'vat_id' WHEN iban = $3 THEN 'iban' ELSE 'name' END
		FROM payables.vendors WHERE tenant_id = $1 AND is_active AND (vat_id = $2 OR iban = $3 OR name_key = $4)
		ORDER BY (vat_id = $2) DESC NULLS LAST, (iban = $3) DESC NULLS LAST, name LIMIT 10`,
		tenantID, norm(ocr.VendorVATID), norm(ocr.VendorIBAN), payables.NameKey(ocr.VendorName))
	if err != nil {
		return nil, err
	}
	type cand struct{ id, name, method string }
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cand, error) {
		var c cand
		return c, r.Scan(&c.id, &c.name, &c.method)
	})
	if err != nil {
		return nil, err
	}
	confidence := map[string]string{"vat_id": "0.95", "iban": "0.90", "name": "0.70"}
	for _, c := range cs {
		if seen[c.id] {
			continue
		}
		seen[c.id] = true
		out = append(out, payablesv1.VendorCandidate{VendorID: c.id, Name: c.name, Method: c.method, Confidence: money.MustParse(confidence[c.method])})
	}
	return out, nil
}

// vendorSuggestion is the vendor the document's sender would be if
// created: what it says of itself.
func vendorSuggestion(ocr payablesv1.OCRResult) payablesv1.VendorInput {
	opt := func(s string) *string {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
		return &s
	}
	in := payablesv1.VendorInput{Name: strings.TrimSpace(ocr.VendorName), VATID: opt(ocr.VendorVATID), TaxID: opt(ocr.VendorTaxID),
		IBAN: opt(ocr.VendorIBAN), BIC: opt(ocr.VendorBIC)}
	if a := ocr.VendorAddress; a != nil {
		in.Address = &payablesv1.AddressInput{Street: opt(a.Street), Zip: opt(a.Zip), City: opt(a.City), Country: opt(a.Country)}
	}
	return in
}

// duplicateHints are the incoming invoices and other open cases inv may
// duplicate: the same vendor and number (strong), or the same gross and
// invoice date (a hint).
func duplicateHints(ctx context.Context, tx pgx.Tx, tenantID, caseID string, inv payablesv1.ReviewInvoice) ([]payablesv1.DuplicateHint, error) {
	rows, err := tx.Query(ctx, `
		SELECT CASE WHEN i.vendor_id = $3 AND lower(i.invoice_number) = lower($4) THEN 'same_vendor_number' ELSE 'same_amount_date' END,
			i.id, NULL::uuid, i.invoice_number, to_char(i.invoice_date, 'YYYY-MM-DD')
		FROM payables.incoming_invoices i
		WHERE i.tenant_id = $1 AND i.state <> 'void' AND i.review_case_id IS DISTINCT FROM $2
			AND ((i.vendor_id = $3 AND lower(i.invoice_number) = lower($4) AND $4 <> '') OR (i.total_gross = $5 AND i.invoice_date = $6))
		UNION ALL
		SELECT CASE WHEN c.vendor_id = $3 AND lower(c.invoice_number) = lower($4) AND $4 <> '' THEN 'same_vendor_number' ELSE 'same_amount_date' END,
			NULL::uuid, c.id, c.invoice_number, to_char(c.invoice_date, 'YYYY-MM-DD')
		FROM payables.review_cases c
		WHERE c.tenant_id = $1 AND c.id <> $2 AND c.queue_state IN ('approval', 'correction', 'exception', 'posting_failed')
			AND ((c.vendor_id = $3 AND lower(c.invoice_number) = lower($4) AND $4 <> '') OR (c.total_gross = $5 AND c.invoice_date = $6))
		ORDER BY 1 DESC, 4 LIMIT 20`,
		tenantID, caseID, inv.VendorID, inv.InvoiceNumber, grossOf(inv), inv.InvoiceDate)
	if err != nil {
		return nil, err
	}
	hs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payablesv1.DuplicateHint, error) {
		var h payablesv1.DuplicateHint
		return h, r.Scan(&h.Kind, &h.IncomingInvoiceID, &h.ReviewCaseID, &h.InvoiceNumber, &h.InvoiceDate)
	})
	if hs == nil {
		hs = []payablesv1.DuplicateHint{}
	}
	return hs, err
}

// ReviewCases implements payables.ReviewStore.
func (s *Store) ReviewCases(ctx context.Context, tenantID string, f payablesv1.ReviewCaseFilter) ([]payablesv1.ReviewCase, error) {
	where, args := []string{"c.tenant_id = $1"}, []any{tenantID}
	if f.QueueState != "" {
		args = append(args, f.QueueState)
		where = append(where, "c.queue_state = $"+strconv.Itoa(len(args)))
	}
	args = append(args, f.Limit, f.Offset)
	q := caseSelect + ` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY c.created_at DESC, c.id LIMIT $` + strconv.Itoa(len(args)-1) +
		` OFFSET $` + strconv.Itoa(len(args))
	var out []payablesv1.ReviewCase
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		rs, err := pgx.CollectRows(rows, scanCase)
		for _, r := range rs {
			out = append(out, listView(r))
		}
		return err
	})
	if err != nil {
		return nil, errs.Wrap("postgres.ReviewCases", err)
	}
	return out, nil
}

// ReviewCase implements payables.ReviewStore.
func (s *Store) ReviewCase(ctx context.Context, tenantID, id string) (payablesv1.ReviewCaseDetail, error) {
	var out payablesv1.ReviewCaseDetail
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		r, err := reviewCase(ctx, tx, tenantID, id, false)
		out = detailView(r)
		return err
	})
	if err = db.NotFound(err, "review case %s not found", id); err != nil {
		return payablesv1.ReviewCaseDetail{}, errs.Wrap("postgres.ReviewCase", err)
	}
	return out, nil
}

// CorrectCase implements payables.ReviewStore.
func (s *Store) CorrectCase(ctx context.Context, tenantID, id string, change func(payables.CaseRecord) (payablesv1.ReviewInvoice, error)) (payablesv1.ReviewCaseDetail, error) {
	var out payablesv1.ReviewCaseDetail
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		cur, err := reviewCase(ctx, tx, tenantID, id, true)
		if err != nil {
			return err
		}
		inv, err := change(cur)
		if err != nil {
			return err
		}
		hints, err := duplicateHints(ctx, tx, tenantID, id, inv)
		if err != nil {
			return err
		}
		issues := payables.Issues(inv, cur.ComplianceCheck, cur.IsCreditNote, true)
		qs := payables.QueueState(issues, cur.ComplianceCheck, true, hints)
		if _, err := tx.Exec(ctx, `UPDATE payables.review_cases SET invoice = $3, vendor_id = $4, invoice_number = $5, invoice_date = $6,
				total_gross = $7, duplicate_hints = $8, issues = $9, queue_state = $10, corrected = true, updated_at = now()
			WHERE tenant_id = $1 AND id = $2`,
			tenantID, id, jsonOf(inv), inv.VendorID, inv.InvoiceNumber, inv.InvoiceDate, grossOf(inv), jsonOf(hints), jsonOf(issues), qs); err != nil {
			return err
		}
		r, err := reviewCase(ctx, tx, tenantID, id, false)
		if err != nil {
			return err
		}
		out = detailView(r)
		return idem.Save(ctx, tx, Schema.Schema, out)
	})
	if err = db.NotFound(err, "review case %s not found", id); err != nil {
		return payablesv1.ReviewCaseDetail{}, errs.Wrap("postgres.CorrectCase", err)
	}
	return out, nil
}

// RejectCase implements payables.ReviewStore.
func (s *Store) RejectCase(ctx context.Context, tenantID, id, reason string, check func(payables.CaseRecord) error) (payablesv1.ReviewCaseDetail, error) {
	var out payablesv1.ReviewCaseDetail
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		if err := idem.Claim(ctx, tx, Schema.Schema); err != nil {
			return err
		}
		cur, err := reviewCase(ctx, tx, tenantID, id, true)
		if err != nil {
			return err
		}
		if err := check(cur); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE payables.review_cases SET queue_state = 'rejected', reject_reason = $3, updated_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, id, reason); err != nil {
			return err
		}
		if cur.InboxItemID != nil {
			if _, err := tx.Exec(ctx, `UPDATE payables.inbox_items SET status = 'rejected' WHERE tenant_id = $1 AND id = $2`,
				tenantID, *cur.InboxItemID); err != nil {
				return err
			}
		}
		r, err := reviewCase(ctx, tx, tenantID, id, false)
		if err != nil {
			return err
		}
		out = detailView(r)
		return idem.Save(ctx, tx, Schema.Schema, out)
	})
	if err = db.NotFound(err, "review case %s not found", id); err != nil {
		return payablesv1.ReviewCaseDetail{}, errs.Wrap("postgres.RejectCase", err)
	}
	return out, nil
}

var invoiceConstraints = map[string]*errs.Error{
	"incoming_invoices_number": {Code: errs.Conflict, Message: "the vendor's invoice with this number is already booked",
		Details: []errs.Detail{errs.Field("invoice_number", "already booked for this vendor")}},
}

// ClaimApproval implements payables.ReviewStore.
func (s *Store) ClaimApproval(ctx context.Context, tenantID, id string, check func(payables.CaseRecord) error, ids func(payables.CaseRecord) (string, string)) (payables.Approval, error) {
	var out payables.Approval
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		cur, err := reviewCase(ctx, tx, tenantID, id, true)
		if err != nil {
			return err
		}
		out = payables.Approval{Case: cur}
		if cur.Pending {
			// An approval interrupted after its claim: resume it.
			return tx.QueryRow(ctx, `SELECT id, booking_intent_id, creditor_account FROM payables.incoming_invoices
				WHERE tenant_id = $1 AND review_case_id = $2 AND state = 'pending'`, tenantID, id).Scan(&out.InvoiceID, &out.IntentID, &out.Creditor)
		}
		if err := check(cur); err != nil {
			return err
		}
		out.InvoiceID, out.IntentID = ids(cur)
		out.Creditor = payables.CreditorAccount
		inv := cur.Invoice
		_, err = tx.Exec(ctx, `INSERT INTO payables.incoming_invoices (id, tenant_id, vendor_id, invoice_number, invoice_date, due_date,
				total_net, total_tax, total_gross, currency, booking_intent_id, state, review_case_id, document_id, lines, tax_breakdown,
				reverse_charge, creditor_account)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12, $13, $14, $15, $16, $17)`,
			out.InvoiceID, tenantID, inv.VendorID, inv.InvoiceNumber, inv.InvoiceDate, inv.DueDate, inv.TotalNet.StringFixed(2),
			inv.TotalTax.StringFixed(2), inv.TotalGross.StringFixed(2), inv.Currency, out.IntentID, id, cur.DocumentID,
			jsonOf(inv.Lines), jsonOf(inv.TaxBreakdown), inv.ReverseCharge, out.Creditor)
		return db.MapConstraint(err, invoiceConstraints)
	})
	if err = db.NotFound(err, "review case %s not found", id); err != nil {
		return payables.Approval{}, errs.Wrap("postgres.ClaimApproval", err)
	}
	return out, nil
}

// ConfirmApproval implements payables.ReviewStore.
func (s *Store) ConfirmApproval(ctx context.Context, tenantID string, a payables.Approval) (payablesv1.ReviewCaseDetail, error) {
	var out payablesv1.ReviewCaseDetail
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`UPDATE payables.incoming_invoices SET state = 'posted', posted_at = now() WHERE tenant_id = $1 AND id = $2 AND state = 'pending'`,
			tenantID, a.InvoiceID)
		b.Queue(`UPDATE payables.review_cases SET queue_state = 'approved', incoming_invoice_id = $3, updated_at = now()
			WHERE tenant_id = $1 AND id = $2 AND queue_state <> 'approved'`, tenantID, a.Case.ID, a.InvoiceID)
		if a.Case.InboxItemID != nil {
			b.Queue(`UPDATE payables.inbox_items SET status = 'confirmed' WHERE tenant_id = $1 AND id = $2`, tenantID, *a.Case.InboxItemID)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		r, err := reviewCase(ctx, tx, tenantID, a.Case.ID, false)
		out = detailView(r)
		return err
	})
	if err != nil {
		return payablesv1.ReviewCaseDetail{}, errs.Wrap("postgres.ConfirmApproval", err)
	}
	return out, nil
}

// FailApproval implements payables.ReviewStore.
func (s *Store) FailApproval(ctx context.Context, tenantID string, a payables.Approval, pe payablesv1.PostingError) error {
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE payables.incoming_invoices SET state = 'void', void_reason = $3
			WHERE tenant_id = $1 AND id = $2 AND state = 'pending'`, tenantID, a.InvoiceID, pe.Code+": "+pe.Message)
		if err != nil || tag.RowsAffected() == 0 {
			// Confirmed or failed by a concurrent approval meanwhile.
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE payables.review_cases SET queue_state = 'posting_failed', attempt = attempt + 1,
				posting_errors = posting_errors || jsonb_build_array($3::jsonb), updated_at = now()
			WHERE tenant_id = $1 AND id = $2`, tenantID, a.Case.ID, jsonOf(pe))
		return err
	})
	if err != nil {
		return errs.Wrap("postgres.FailApproval", err)
	}
	return nil
}

// invoiceColumns read an incoming invoice i of vendor v.
const invoiceColumns = `i.id, i.vendor_id, v.name, i.invoice_number, to_char(i.invoice_date, 'YYYY-MM-DD'), to_char(i.due_date, 'YYYY-MM-DD'),
	i.currency, i.total_gross::text, i.state, i.total_net::text, i.total_tax::text, i.paid_amount::text, i.lines, i.tax_breakdown,
	i.reverse_charge, i.creditor_account, i.booking_intent_id, i.document_id, i.review_case_id, i.created_at`

func scanInvoice(row pgx.CollectableRow) (payables.InvoiceRecord, error) {
	var r payables.InvoiceRecord
	var gross, net, tax, paid string
	var lines, groups []byte
	err := row.Scan(&r.ID, &r.VendorID, &r.VendorName, &r.InvoiceNumber, &r.InvoiceDate, &r.DueDate, &r.Currency, &gross, &r.State,
		&net, &tax, &paid, &lines, &groups, &r.ReverseCharge, &r.CreditorAccount, &r.BookingIntentID, &r.DocumentID, &r.ReviewCaseID, &r.CreatedAt)
	if err != nil {
		return r, err
	}
	for _, p := range []struct {
		s string
		v *money.Amount
	}{{gross, &r.TotalGross}, {net, &r.TotalNet}, {tax, &r.TotalTax}, {paid, &r.PaidAmount}} {
		if *p.v, err = money.Parse(p.s); err != nil {
			return r, err
		}
	}
	if err := json.Unmarshal(lines, &r.Lines); err != nil {
		return r, err
	}
	return r, json.Unmarshal(groups, &r.TaxBreakdown)
}

const remainingSQL = `(i.total_gross - i.paid_amount)`

// statusWhere are the conditions under which InvoiceRecord.Status answers
// each status, so that a status filter pages in the database.
func statusWhere(status string, today func() string) string {
	postedOpen := `i.state = 'posted' AND ` + remainingSQL + ` > 0`
	switch status {
	case payablesv1.StatusDraft:
		return `i.state IN ('draft', 'pending')`
	case payablesv1.StatusPaid:
		return `i.state = 'posted' AND ` + remainingSQL + ` <= 0`
	case payablesv1.StatusOverdue:
		return postedOpen + ` AND i.due_date < ` + today() + `::date`
	case payablesv1.StatusPartiallyPaid:
		return postedOpen + ` AND i.paid_amount > 0 AND i.due_date >= ` + today() + `::date`
	case payablesv1.StatusOpen:
		return postedOpen + ` AND i.paid_amount <= 0 AND i.due_date >= ` + today() + `::date`
	}
	return "false"
}

// Invoices implements payables.ReviewStore. Void invoices (a posting the
// ledger refused) are not listed.
func (s *Store) Invoices(ctx context.Context, tenantID string, q payables.InvoiceQuery) ([]payables.InvoiceRecord, error) {
	where, args := []string{"i.tenant_id = $1", "i.state <> 'void'"}, []any{tenantID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.VendorID != "" {
		where = append(where, "i.vendor_id = "+arg(q.VendorID))
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
	sql := `SELECT ` + invoiceColumns + ` FROM payables.incoming_invoices i JOIN payables.vendors v ON v.tenant_id = i.tenant_id AND v.id = i.vendor_id
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY i.invoice_date DESC, i.created_at DESC, i.id LIMIT ` + limit + ` OFFSET ` + offset
	return s.invoices(ctx, "postgres.Invoices", tenantID, sql, args)
}

// OpenInvoices implements payables.ReviewStore.
func (s *Store) OpenInvoices(ctx context.Context, tenantID string) ([]payables.InvoiceRecord, error) {
	sql := `SELECT ` + invoiceColumns + ` FROM payables.incoming_invoices i JOIN payables.vendors v ON v.tenant_id = i.tenant_id AND v.id = i.vendor_id
		WHERE i.tenant_id = $1 AND i.state = 'posted' AND i.booking_intent_id IS NOT NULL AND ` + remainingSQL + ` > 0
		ORDER BY lower(v.name), v.id, i.due_date, i.invoice_number`
	return s.invoices(ctx, "postgres.OpenInvoices", tenantID, sql, []any{tenantID})
}

// Invoice implements payables.ReviewStore.
func (s *Store) Invoice(ctx context.Context, tenantID, id string) (payables.InvoiceRecord, error) {
	sql := `SELECT ` + invoiceColumns + ` FROM payables.incoming_invoices i JOIN payables.vendors v ON v.tenant_id = i.tenant_id AND v.id = i.vendor_id
		WHERE i.tenant_id = $1 AND i.id = $2 AND i.state <> 'void'`
	rs, err := s.invoices(ctx, "postgres.Invoice", tenantID, sql, []any{tenantID, id})
	if err != nil {
		return payables.InvoiceRecord{}, err
	}
	if len(rs) == 0 {
		return payables.InvoiceRecord{}, errs.NotFoundf("invoice %s not found", id)
	}
	return rs[0], nil
}

func (s *Store) invoices(ctx context.Context, op, tenantID, sql string, args []any) ([]payables.InvoiceRecord, error) {
	var out []payables.InvoiceRecord
	err := db.InTenant(ctx, s.pool, tenantID, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanInvoice)
		return err
	})
	if err != nil {
		return nil, errs.Wrap(op, err)
	}
	return out, nil
}
