package bank

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Reconciliation (issue 10): a bank transaction is explained either by a
// booking already on the bank's ledger account (bank_booking: linked, the
// ledger is not touched) or by settling an open item, for which the bank
// posts the clearing booking bank account <-> open-item account through
// the ledger.
//
// Settling an open item spans two stores, so it runs in three steps that
// each survive a crash: ClaimOpenItem records the reconciliation as
// pending and allocates the amount in one transaction (the locks decide
// races: a transaction is reconciled once, an item never beyond its open
// amount); the ledger posts the clearing booking under an intent id
// derived from the transaction and the reconciliation's sequence number,
// so a retry answers the intent already posted; ConfirmPosted marks it
// posted and writes the event. A retry of a reconcile whose process died
// finds the pending claim for the same target and resumes it; a posting
// the ledger refuses gives the claim up again.

// Reconciliation is one reconciliation of a bank transaction.
type Reconciliation struct {
	ID                string
	TenantID          string
	BankTransactionID string
	BankAccountID     string
	Seq               int
	Mode              string // bankv1.ModeBankBooking, ModeOpenItem or ModeMatchGroup
	CandidateKind     string
	IntentID          string // the matched intent: the booking's or the open item's
	OpenItemAccount   string // the open item's account; the bank's ledger account for a booking
	BankLedgerAccount string
	Amount            money.Amount // positive
	Currency          string
	ClearingIntentID  string // open items: the clearing booking's intent
	State             string // pending (clearing not confirmed yet), active
	Tx                Transaction
	OpenItemRef       *string
	MatchGroupID      string // mode match_group: the group, whose clearing intent ClearingIntentID is
}

// Reconciliation states.
const (
	StatePending = "pending"
	StateActive  = "active"
)

// ReconcileStore is what reconciliation needs of the store; postgres.Store
// implements it.
type ReconcileStore interface {
	// LinkBooking links the transaction to an unexplained booking on its
	// bank account's ledger account, in one transaction with the event;
	// CheckBooking decides under the rows' locks.
	LinkBooking(ctx context.Context, tenantID, txID, intentID string) (Reconciliation, error)
	// ClaimOpenItem allocates the transaction's amount to the open item
	// and records the reconciliation pending (CheckOpenItem decides under
	// the rows' locks). A pending claim of the same target is returned
	// as it is, for the retry to resume.
	ClaimOpenItem(ctx context.Context, tenantID, txID, intentID, account, kind string) (Reconciliation, error)
	// ConfirmPosted marks a pending reconciliation posted and writes its
	// event; a confirmed one is left as it is.
	ConfirmPosted(ctx context.Context, tenantID, reconciliationID string) error
	// AbandonClaim gives a pending claim up when the ledger refused its
	// posting: the allocation is released and the transaction open again.
	AbandonClaim(ctx context.Context, tenantID, reconciliationID string) error
	// ActiveReconciliation is the transaction's reconciliation that is not
	// undone: NOT_FOUND for an unknown transaction, CONFLICT for one not
	// reconciled.
	ActiveReconciliation(ctx context.Context, tenantID, txID string) (Reconciliation, error)
	// Unmatch undoes the reconciliation: releases the allocation or the
	// link, opens the transaction again and writes the event, in one
	// transaction. CONFLICT when it is no longer active.
	Unmatch(ctx context.Context, tenantID, txID, reconciliationID string, reversalIntentID *string) (bankv1.Unmatched, error)
	// PutEvidence stores (or replaces) a transaction's evidence; an open
	// transaction becomes evidenced.
	PutEvidence(ctx context.Context, tenantID, txID string, ev bankv1.Evidence, metadata json.RawMessage) (bankv1.Evidence, error)
	// Evidence reads a transaction's evidence, nil when none is stored;
	// NOT_FOUND for an unknown transaction.
	Evidence(ctx context.Context, tenantID, txID string) (*bankv1.Evidence, error)
}

// Ledger is what reconciliation asks of the ledger. Reverse carries the
// command's idempotency key, so a retried unmatch reverses once.
type Ledger interface {
	Post(ctx context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error)
	Reverse(ctx context.Context, tenantID, key string, r ledgerv1.ReverseRequest) (ledgerv1.Reversed, error)
}

// Reconciler reconciles bank transactions and keeps their evidence.
type Reconciler struct {
	store    ReconcileStore
	ledger   Ledger
	accounts AccountChecker // match groups' adjustment accounts
}

// NewReconciler returns a Reconciler on store posting through ledger.
func NewReconciler(store ReconcileStore, ledger Ledger) *Reconciler {
	return &Reconciler{store: store, ledger: ledger}
}

// ClearingIntentID is the intent id of the clearing booking of a
// transaction's seq-th reconciliation: derived, so that a retry or a
// crash never posts twice, and new after an unmatch.
func ClearingIntentID(tenantID, txID string, seq int) string {
	return uuid.NewSHA1(clearingSpace, []byte(tenantID+"/"+txID+"/reconcile/"+itoa(seq))).String()
}

// UnmatchKey is the ledger idempotency key of the reversal that undoes a
// reconciliation.
func UnmatchKey(reconciliationID string) string { return "bank-unmatch-" + reconciliationID }

// ErrNoBankBooking is inside the NOT_FOUND of LinkBooking when the
// intent left no unexplained booking on the bank's ledger account.
var ErrNoBankBooking = errors.New("no bank booking")

var clearingSpace = uuid.MustParse("6b1f3c0e-5a47-4a8e-9d0c-2f6e8b7a1c55")

// Reconcile reconciles one of the tenant's transactions against the
// intent the input names.
func (r *Reconciler) Reconcile(ctx context.Context, tenantID, txID string, in bankv1.ReconcileInput) (bankv1.Reconciled, error) {
	if !ValidID(txID) {
		return bankv1.Reconciled{}, txNotFound(txID)
	}
	var details []errs.Detail
	if in.IntentID == "" {
		details = append(details, errs.Field("intent_id", "required"))
	} else if !ValidID(in.IntentID) {
		details = append(details, errs.Field("intent_id", "must be a UUID"))
	}
	switch in.CandidateKind {
	case "", bankv1.CandidateBankBooking, bankv1.CandidateOpenReceivable, bankv1.CandidateOpenLiability:
	default:
		details = append(details, errs.Field("candidate_kind", "bank_booking, open_receivable or open_liability"))
	}
	if in.OpenItemAccount != "" {
		if _, ok := OpenItemParty(in.OpenItemAccount); !ok {
			details = append(details, errs.Field("open_item_account", "an SKR04 receivable or payable account (1200-1299, 3300-3399, 10000-99999)"))
		} else if in.CandidateKind == bankv1.CandidateBankBooking {
			details = append(details, errs.Field("open_item_account", "only for open items"))
		}
	}
	if len(details) > 0 {
		return bankv1.Reconciled{}, errs.Invalid("invalid reconciliation", details...)
	}
	if in.CandidateKind == bankv1.CandidateBankBooking {
		rec, err := r.store.LinkBooking(ctx, tenantID, txID, in.IntentID)
		if err != nil {
			return bankv1.Reconciled{}, err
		}
		return reconciled(rec), nil
	}
	if in.CandidateKind == "" && in.OpenItemAccount == "" {
		// No kind given: a booking on the bank's ledger account if the
		// intent is one, otherwise an open item.
		rec, err := r.store.LinkBooking(ctx, tenantID, txID, in.IntentID)
		if err == nil {
			return reconciled(rec), nil
		}
		if !errors.Is(err, ErrNoBankBooking) {
			return bankv1.Reconciled{}, err
		}
	}
	rec, err := r.store.ClaimOpenItem(ctx, tenantID, txID, in.IntentID, in.OpenItemAccount, in.CandidateKind)
	if err != nil {
		return bankv1.Reconciled{}, err
	}
	if rec.State == StatePending {
		if _, err := r.ledger.Post(ctx, clearingBooking(rec)); err != nil {
			if definitive(err) {
				if aerr := r.store.AbandonClaim(ctx, tenantID, rec.ID); aerr != nil {
					return bankv1.Reconciled{}, aerr
				}
			}
			return bankv1.Reconciled{}, err
		}
		if err := r.store.ConfirmPosted(ctx, tenantID, rec.ID); err != nil {
			if errs.Is(err, errs.Conflict) {
				// An unmatch released the claim while its posting was in
				// flight and found nothing to reverse: reverse it now, under
				// the same key, so no clearing booking is left unexplained.
				if _, rerr := r.ledger.Reverse(ctx, tenantID, UnmatchKey(rec.ID), unmatchReversal(rec)); rerr != nil && !errs.Is(rerr, errs.AlreadyReversed) {
					return bankv1.Reconciled{}, rerr
				}
			}
			return bankv1.Reconciled{}, err
		}
	}
	return reconciled(rec), nil
}

func reconciled(rec Reconciliation) bankv1.Reconciled {
	out := bankv1.Reconciled{OK: true, Mode: rec.Mode, IntentID: rec.IntentID, BankTransactionID: rec.BankTransactionID, MatchedIntentID: rec.IntentID}
	if rec.Mode == bankv1.ModeOpenItem {
		out.IntentID = rec.ClearingIntentID
	}
	return out
}

// definitive reports whether the ledger refused for good: nothing was
// posted and a retry would be refused again. A timeout or an outage may
// have posted; the claim stays for the retry.
func definitive(err error) bool {
	e := errs.As(err)
	if e == nil {
		return false
	}
	switch e.Code {
	case errs.Unavailable, errs.Timeout, errs.Internal:
		return false
	}
	return true
}

// clearingBooking is the ledger posting that settles an open item: money
// in debits the bank's ledger account and credits the receivable, money
// out debits the payable and credits the bank.
func clearingBooking(rec Reconciliation) ledgerv1.PostRequest {
	debit, credit := rec.BankLedgerAccount, rec.OpenItemAccount
	if rec.Tx.Amount.IsNegative() {
		debit, credit = credit, debit
	}
	desc := "Bankabgleich"
	for _, p := range []*string{rec.Tx.CounterpartyName, rec.Tx.Reference} {
		if p != nil && *p != "" {
			desc += " " + *p
		}
	}
	desc = clip(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, desc), 500)
	line := ledgerv1.Line{AccountDebit: debit, AccountCredit: credit, Amount: rec.Amount, Description: clip(desc, 500)}
	if rec.OpenItemRef != nil {
		line.ExternalReference = clip(*rec.OpenItemRef, 100)
	}
	return ledgerv1.PostRequest{TenantID: rec.TenantID, IntentID: rec.ClearingIntentID, Source: ClearingSource,
		Booking: ledgerv1.Booking{BookingDate: rec.Tx.TxDate, Description: desc, Lines: []ledgerv1.Line{line}, SkipDuplicateCheck: true}}
}

// clip cuts s to at most n bytes at a rune boundary (the ledger counts
// bytes).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// CheckBooking decides whether a ledger booking can explain a bank
// transaction: same direction and same amount, in EUR.
func CheckBooking(tx Transaction, bk LedgerBooking) error {
	if tx.Amount.IsNegative() != bk.Amount.IsNegative() {
		return &errs.Error{Code: errs.DirectionMismatch, Message: "the transaction " + direction(tx.Amount) + " but the booking " + direction(bk.Amount),
			Details: []errs.Detail{errs.Field("intent_id", "the booking moves money the other way")}}
	}
	switch c := tx.Amount.Abs().Cmp(bk.Amount.Abs()); {
	case c > 0:
		return &errs.Error{Code: errs.SettlementExceedsOpenAmount, Message: "the transaction's amount " + tx.Amount.Abs().StringFixed(2) + " exceeds the booking's " + bk.Amount.Abs().StringFixed(2),
			Details: []errs.Detail{errs.Field("intent_id", "the booking's amount is smaller than the transaction's")}}
	case c < 0:
		return errs.Invalid("the booking's amount "+bk.Amount.Abs().StringFixed(2)+" differs from the transaction's "+tx.Amount.Abs().StringFixed(2),
			errs.Field("intent_id", "a bank booking explains a transaction of the same amount"))
	}
	return nil
}

// CheckOpenItem decides whether a bank transaction can settle an open
// item: money in settles a receivable, money out a payable, at most the
// amount still open, in EUR; kind, when given, must be the item's.
func CheckOpenItem(tx Transaction, it OpenItem, kind string) error {
	if tx.Currency != DefaultCurrency {
		return &errs.Error{Code: errs.UnsupportedSettlementCurr, Message: "only EUR transactions settle open items; this one is in " + tx.Currency}
	}
	want := Receivable
	if tx.Amount.IsNegative() {
		want = Payable
	}
	if it.Direction != want {
		return &errs.Error{Code: errs.DirectionMismatch, Message: "the transaction " + direction(tx.Amount) + " but the open item is a " + it.Direction,
			Details: []errs.Detail{errs.Field("intent_id", "money in settles a receivable, money out a payable")}}
	}
	if kind != "" && kind != KindOf(it) {
		return &errs.Error{Code: errs.DirectionMismatch, Message: "candidate_kind is " + kind + " but the open item is a " + it.Direction,
			Details: []errs.Detail{errs.Field("candidate_kind", "must be "+KindOf(it))}}
	}
	if it.Currency != "" && it.Currency != DefaultCurrency {
		// What an FX item's EUR carrying amount is worth at the payment's
		// rate needs the settled document amount: a match group takes it.
		return &errs.Error{Code: errs.UnsupportedSettlementCurr, Message: "the open item is in " + it.Currency +
			"; settle it with a match group (POST /v1/bank-match-groups) naming the settled document amount"}
	}
	if tx.Amount.Abs().GreaterThan(it.OpenAmount.Decimal) {
		return &errs.Error{Code: errs.SettlementExceedsOpenAmount, Message: "the transaction's amount " + tx.Amount.Abs().StringFixed(2) + " exceeds the amount still open " + it.OpenAmount.StringFixed(2),
			Details: []errs.Detail{errs.Field("intent_id", "open amount "+it.OpenAmount.StringFixed(2))}}
	}
	return nil
}

// KindOf is the candidate kind of an open item.
func KindOf(it OpenItem) string {
	if it.Direction == Payable {
		return bankv1.CandidateOpenLiability
	}
	return bankv1.CandidateOpenReceivable
}

func direction(a money.Amount) string {
	if a.IsNegative() {
		return "is money out"
	}
	return "is money in"
}

// Unmatch undoes a transaction's reconciliation: a clearing booking is
// reversed through the ledger (under a key derived from the
// reconciliation, so a retry reverses once), then the link or allocation
// goes and the transaction is open again.
func (r *Reconciler) Unmatch(ctx context.Context, tenantID, txID string) (bankv1.Unmatched, error) {
	if !ValidID(txID) {
		return bankv1.Unmatched{}, txNotFound(txID)
	}
	rec, err := r.store.ActiveReconciliation(ctx, tenantID, txID)
	if err != nil {
		return bankv1.Unmatched{}, err
	}
	if rec.Mode == bankv1.ModeMatchGroup {
		return r.unmatchGroup(ctx, tenantID, txID, rec)
	}
	var reversal *string
	if rec.Mode == bankv1.ModeOpenItem {
		rv, err := r.ledger.Reverse(ctx, tenantID, UnmatchKey(rec.ID), unmatchReversal(rec))
		switch {
		case err == nil:
			reversal = &rv.ReversalIntentID
		case rec.State == StatePending && errs.Is(err, errs.NotFound):
			// The claim's posting never reached the ledger: nothing to reverse.
		case errs.Is(err, errs.AlreadyReversed):
			// Someone reversed the clearing booking in the journal already;
			// the link is all that is left to undo.
		default:
			return bankv1.Unmatched{}, err
		}
	}
	return r.store.Unmatch(ctx, tenantID, txID, rec.ID, reversal)
}

// unmatchGroup undoes the whole group a transaction was reconciled in:
// its one clearing booking is reversed (under a key derived from the
// group, so a retry or an unmatch through another member reverses once),
// then every member is open again.
func (r *Reconciler) unmatchGroup(ctx context.Context, tenantID, txID string, rec Reconciliation) (bankv1.Unmatched, error) {
	store, err := r.groupStore()
	if err != nil {
		return bankv1.Unmatched{}, err
	}
	var reversal *string
	rv, err := r.ledger.Reverse(ctx, tenantID, UnmatchKey(rec.MatchGroupID), groupReversal(rec.ClearingIntentID))
	switch {
	case err == nil:
		reversal = &rv.ReversalIntentID
	case rec.State == StatePending && errs.Is(err, errs.NotFound):
		// The claim's posting never reached the ledger: nothing to reverse.
	case errs.Is(err, errs.AlreadyReversed):
	default:
		return bankv1.Unmatched{}, err
	}
	return store.UnmatchGroup(ctx, tenantID, txID, rec.MatchGroupID, reversal)
}

// unmatchReversal is the reversal of a reconciliation's clearing booking;
// always the same body, so its key replays it.
func unmatchReversal(rec Reconciliation) ledgerv1.ReverseRequest {
	return ledgerv1.ReverseRequest{IntentID: rec.ClearingIntentID, Reason: "Bankabgleich aufgehoben"}
}

// BatchReconcile reconciles each pair on its own: one refused pair does
// not stop the others.
func (r *Reconciler) BatchReconcile(ctx context.Context, tenantID string, in bankv1.BatchReconcileInput) (bankv1.BatchReconciled, error) {
	switch {
	case len(in.Pairs) == 0:
		return bankv1.BatchReconciled{}, errs.Invalid("pairs is required", errs.Field("pairs", "at least one pair"))
	case len(in.Pairs) > bankv1.MaxBatchPairs:
		return bankv1.BatchReconciled{}, errs.Invalid("too many pairs", errs.Field("pairs", "at most "+itoa(bankv1.MaxBatchPairs)+" pairs"))
	}
	var details []errs.Detail
	for i, p := range in.Pairs {
		at := "pairs[" + itoa(i) + "]."
		if !ValidID(p.BankTransactionID) {
			details = append(details, errs.Field(at+"bank_transaction_id", "required UUID"))
		}
		if p.CandidateKind == "" {
			details = append(details, errs.Field(at+"candidate_kind", "required: bank_booking, open_receivable or open_liability"))
		}
	}
	if len(details) > 0 {
		return bankv1.BatchReconciled{}, errs.Invalid("invalid pairs", details...)
	}
	out := bankv1.BatchReconciled{Errors: []bankv1.BatchError{}}
	for i, p := range in.Pairs {
		_, err := r.Reconcile(ctx, tenantID, p.BankTransactionID, bankv1.ReconcileInput{IntentID: p.IntentID, CandidateKind: p.CandidateKind, OpenItemAccount: p.OpenItemAccount})
		if err == nil {
			out.Reconciled++
			continue
		}
		e := errs.As(err)
		if e == nil || !definitive(err) {
			return bankv1.BatchReconciled{}, err
		}
		msg := e.Message
		for _, d := range e.Details {
			msg += "; " + d.Field + ": " + d.Issue
		}
		out.Errors = append(out.Errors, bankv1.BatchError{Index: i, BankTransactionID: p.BankTransactionID, Code: e.Code, Error: msg})
	}
	return out, nil
}

// Limits of evidence (specification: Limits).
const (
	MaxEvidenceTitle = 200
	MaxEvidenceNote  = 4000
	// MaxEvidenceMetadata bounds metadata in bytes, as the ledger bounds a
	// booking's custom_metadata.
	MaxEvidenceMetadata = 4096
)

// PutEvidence stores the evidence of one of the tenant's transactions.
// It posts nothing and links no intent.
func (r *Reconciler) PutEvidence(ctx context.Context, tenantID, txID string, in bankv1.EvidenceInput) (bankv1.EvidenceReply, error) {
	if !ValidID(txID) {
		return bankv1.EvidenceReply{}, txNotFound(txID)
	}
	ev := bankv1.Evidence{ID: newID(), EvidenceType: in.EvidenceType}
	var details []errs.Detail
	switch in.EvidenceType {
	case "":
		details = append(details, errs.Field("evidence_type", "required"))
	case bankv1.EvidenceBankStatement, bankv1.EvidenceUploadedDocument, bankv1.EvidenceEigenbeleg:
	default:
		details = append(details, errs.Field("evidence_type", "bank_statement, uploaded_document or eigenbeleg"))
	}
	text := func(field string, p *string, max int) *string {
		if p == nil {
			return nil
		}
		s := strings.TrimSpace(*p)
		if utf8.RuneCountInString(s) > max {
			details = append(details, errs.Field(field, "at most "+itoa(max)+" characters"))
		}
		if s == "" {
			return nil
		}
		return &s
	}
	ev.Title = text("title", in.Title, MaxEvidenceTitle)
	ev.Note = text("note", in.Note, MaxEvidenceNote)
	if in.DocumentID != nil {
		if !ValidID(*in.DocumentID) {
			details = append(details, errs.Field("document_id", "must be a UUID"))
		}
		d := strings.ToLower(*in.DocumentID)
		ev.DocumentID = &d
	}
	if in.EvidenceType == bankv1.EvidenceEigenbeleg && ev.Note == nil {
		details = append(details, errs.Field("note", "required for an eigenbeleg: say what was paid and why no receipt exists"))
	}
	if in.EvidenceType == bankv1.EvidenceUploadedDocument && ev.DocumentID == nil {
		details = append(details, errs.Field("document_id", "required for an uploaded_document"))
	}
	var meta json.RawMessage
	if len(in.Metadata) > 0 && string(in.Metadata) != "null" {
		var m map[string]any
		if json.Unmarshal(in.Metadata, &m) != nil || m == nil {
			details = append(details, errs.Field("metadata", "must be an object"))
		} else if len(in.Metadata) > MaxEvidenceMetadata {
			details = append(details, errs.Field("metadata", "at most 4096 bytes"))
		}
		meta = in.Metadata
	}
	if len(details) > 0 {
		return bankv1.EvidenceReply{}, errs.Invalid("invalid evidence", details...)
	}
	stored, err := r.store.PutEvidence(ctx, tenantID, txID, ev, meta)
	if err != nil {
		return bankv1.EvidenceReply{}, err
	}
	return bankv1.EvidenceReply{Evidence: &stored}, nil
}

// Evidence reads the evidence of one of the tenant's transactions.
func (r *Reconciler) Evidence(ctx context.Context, tenantID, txID string) (bankv1.EvidenceReply, error) {
	if !ValidID(txID) {
		return bankv1.EvidenceReply{}, txNotFound(txID)
	}
	ev, err := r.store.Evidence(ctx, tenantID, txID)
	return bankv1.EvidenceReply{Evidence: ev}, err
}

func txNotFound(id string) error { return errs.NotFoundf("bank transaction %s not found", id) }
