package bank

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Match groups (issue 10): several bank transactions of one bank account
// settle several open items with ONE clearing booking, balanced to the
// cent through the allocations, FX gains and losses (SKR04 4840/6880) and
// adjustment lines (fees, write-offs, cash discounts). A cash discount
// (Skonto) against taxed items corrects the VAT proportionally: the
// discount is split into net and tax by the items' tax composition.
//
// It runs in the three crash-safe steps of a single reconciliation
// (see reconcile.go): the claim records the group pending, raises the
// items' allocations and reconciles each transaction (mode match_group)
// in one transaction under the rows' locks; the ledger posts the clearing
// booking under an intent id derived from the group id, itself derived
// from the transactions; the confirmation marks it active and writes one
// transaction_reconciled event per transaction. A retry of the same body
// finds the pending group and resumes it.

// ItemKey names an open item: an intent's item on one account.
type ItemKey struct{ IntentID, Account string }

// GroupState is what a match group is decided on: the transactions and
// open items it names, as the store holds them (items not reversed).
// Pending is the group these transactions are claimed by, pending, when
// all of them are claimed by the same one and no others are in it: a
// retry resumes it.
type GroupState struct {
	Transactions       map[string]Transaction
	BankLedgerAccounts map[string]string // bank account id -> linked ledger account
	Items              map[ItemKey]OpenItem
	Pending            *MatchGroup
}

// GroupAllocation is what a group settles of one open item: BankAmount
// of the bank money, Settled in EUR off the item's account (an FX item's
// carrying amount), DocAmount in the document currency (FX items only).
type GroupAllocation struct {
	Item          ItemKey
	CandidateKind string
	BankAmount    money.Amount
	Settled       money.Amount
	Currency      string
	DocAmount     *money.Amount
}

// GroupTx is one transaction of a group with its amount (positive).
type GroupTx struct {
	ID     string
	Amount money.Amount
	Status string // before the claim: open or evidenced
}

// Clearing is the decided group: its clearing booking (without intent
// id), what it allocates and the transactions it reconciles.
type Clearing struct {
	BankAccountID     string
	BankLedgerAccount string
	Booking           ledgerv1.Booking
	Allocations       []GroupAllocation
	Transactions      []GroupTx
}

// MatchGroup is a claimed group.
type MatchGroup struct {
	ID               string
	TenantID         string
	ClearingIntentID string
	State            string // pending, active, unmatched, abandoned
	InputHash        string
	Clearing         Clearing
}

// MatchGroupStore is what match groups need of the store; postgres.Store
// implements it.
type MatchGroupStore interface {
	// GroupState reads the transactions and items named, without locks:
	// the refusals are decided on it first, before the ledger is asked
	// about adjustment accounts.
	GroupState(ctx context.Context, tenantID string, txIDs []string, items []ItemKey) (GroupState, error)
	// ClaimMatchGroup locks the transactions (in id order) and the items,
	// lets decide decide on them and records the group pending with its
	// allocations and reconciliations. A pending group of the same
	// transactions and input hash is returned as it is, for the retry to
	// resume.
	ClaimMatchGroup(ctx context.Context, tenantID string, txIDs []string, items []ItemKey, inputHash string, input bankv1.MatchGroupInput,
		decide func(GroupState) (Clearing, error)) (MatchGroup, error)
	// ConfirmMatchGroup marks a pending group active and writes one event
	// per transaction; an active one is left as it is; CONFLICT when it
	// was undone meanwhile.
	ConfirmMatchGroup(ctx context.Context, tenantID, groupID string) error
	// AbandonMatchGroup gives a pending group up when the ledger refused
	// its clearing booking: allocations released, transactions open again.
	AbandonMatchGroup(ctx context.Context, tenantID, groupID string) error
	// UnmatchGroup undoes the whole group of the transaction txID: every
	// allocation released, every transaction back to its prior status and
	// one unmatched event per transaction (if the group was announced).
	UnmatchGroup(ctx context.Context, tenantID, txID, groupID string, reversalIntentID *string) (bankv1.Unmatched, error)
}

// MatchGroupID derives a group's id from the tenant, its sorted
// transaction ids and seq, the first transaction's next reconciliation
// sequence number: the same request names the same group until it is
// undone.
func MatchGroupID(tenantID string, sortedTxIDs []string, seq int) string {
	return uuid.NewSHA1(clearingSpace, []byte(tenantID+"/match-group/"+strings.Join(sortedTxIDs, ",")+"/"+itoa(seq))).String()
}

// MatchGroupIntentID is the intent id of a group's clearing booking.
func MatchGroupIntentID(tenantID, groupID string) string {
	return uuid.NewSHA1(clearingSpace, []byte(tenantID+"/"+groupID+"/match-group")).String()
}

// Accounts of the clearing booking (SKR04).
const (
	AccountFXGain = "4840" // Erträge aus Kursdifferenzen
	AccountFXLoss = "6880" // Aufwendungen aus Kursdifferenzen
)

// CashDiscountAccount reports whether an SKR04 account takes cash
// discounts: granted 4730-4749, received 5730-5749. An adjustment on one
// against taxed items is split into net and tax.
func CashDiscountAccount(account string) bool {
	n, ok := accountNumber(account)
	return ok && len(account) == 4 && (n >= 4730 && n <= 4749 || n >= 5730 && n <= 5749)
}

var (
	adjustmentAccountRe = regexp.MustCompile(`^[0-9]{1,8}$`)
	currencyRe          = regexp.MustCompile(`^[A-Z]{3}$`)
)

// maxAdjustmentDescription bounds an adjustment's description as the
// ledger bounds a line's (in characters).
const maxAdjustmentDescription = 500

// CheckGroupInput checks the shape of a match group request and
// normalises it (UUIDs in lower case, texts trimmed): INVALID_INPUT with
// field paths, then TARGET_KIND_UNSUPPORTED for a candidate kind that is
// no open item.
func CheckGroupInput(in bankv1.MatchGroupInput) (bankv1.MatchGroupInput, error) {
	var details []errs.Detail
	bad := func(field, issue string) { details = append(details, errs.Field(field, issue)) }
	amount := func(field string, a *money.Amount, required bool) {
		switch {
		case a == nil && required:
			bad(field, "required")
		case a != nil && !a.ValidEUR():
			bad(field, "must be positive with at most 2 decimals")
		}
	}
	out := bankv1.MatchGroupInput{}
	switch n := len(in.BankTransactionIDs); {
	case n == 0:
		bad("bank_transaction_ids", "at least one bank transaction")
	case n > bankv1.MaxGroupTransactions:
		bad("bank_transaction_ids", "at most "+itoa(bankv1.MaxGroupTransactions)+" bank transactions")
	}
	seen := map[string]bool{}
	for i, id := range in.BankTransactionIDs {
		id = strings.ToLower(id)
		f := "bank_transaction_ids[" + itoa(i) + "]"
		switch {
		case !ValidID(id):
			bad(f, "must be a UUID")
		case seen[id]:
			bad(f, "repeats a transaction")
		}
		seen[id] = true
		out.BankTransactionIDs = append(out.BankTransactionIDs, id)
	}
	switch n := len(in.Allocations); {
	case n == 0:
		bad("allocations", "at least one allocation")
	case n > bankv1.MaxGroupAllocations:
		bad("allocations", "at most "+itoa(bankv1.MaxGroupAllocations)+" allocations")
	}
	items := map[ItemKey]bool{}
	var unsupported []errs.Detail
	for i, a := range in.Allocations {
		at := "allocations[" + itoa(i) + "]."
		a.IntentID = strings.ToLower(a.IntentID)
		switch {
		case a.IntentID == "":
			bad(at+"intent_id", "required")
		case !ValidID(a.IntentID):
			bad(at+"intent_id", "must be a UUID")
		}
		switch a.CandidateKind {
		case "":
			bad(at+"candidate_kind", "required: open_receivable or open_liability")
		case bankv1.CandidateOpenReceivable, bankv1.CandidateOpenLiability:
		case bankv1.CandidateBankBooking:
			unsupported = append(unsupported, errs.Field(at+"candidate_kind", "a match group settles open items: open_receivable or open_liability"))
		default:
			bad(at+"candidate_kind", "open_receivable or open_liability")
		}
		if _, ok := OpenItemParty(a.OpenItemAccount); !ok {
			bad(at+"open_item_account", "required: an SKR04 receivable or payable account (1200-1299, 3300-3399, 10000-99999)")
		}
		amount(at+"allocated_bank_amount", a.AllocatedBankAmount, true)
		amount(at+"settled_document_amount", a.SettledDocumentAmount, false)
		k := ItemKey{a.IntentID, a.OpenItemAccount}
		if items[k] {
			bad(at+"intent_id", "the open item is allocated once per group")
		}
		items[k] = true
		out.Allocations = append(out.Allocations, a)
	}
	if len(in.Adjustments) > bankv1.MaxGroupAdjustments {
		bad("adjustments", "at most "+itoa(bankv1.MaxGroupAdjustments)+" adjustment lines")
	}
	for i, a := range in.Adjustments {
		at := "adjustments[" + itoa(i) + "]."
		if !adjustmentAccountRe.MatchString(a.AccountNumber) {
			bad(at+"account_number", "required: an account number of 1 to 8 digits")
		}
		switch a.PostingSide {
		case bankv1.SideDebit, bankv1.SideCredit:
		default:
			bad(at+"posting_side", "debit or credit")
		}
		amount(at+"amount", a.Amount, true)
		if a.Description != nil {
			d := strings.TrimSpace(*a.Description)
			if utf8.RuneCountInString(d) > maxAdjustmentDescription {
				bad(at+"description", "at most "+itoa(maxAdjustmentDescription)+" characters")
			}
			a.Description = &d
			if d == "" {
				a.Description = nil
			}
		}
		out.Adjustments = append(out.Adjustments, a)
	}
	if len(details) > 0 {
		return out, errs.Invalid("invalid match group", details...)
	}
	if len(unsupported) > 0 {
		return out, &errs.Error{Code: errs.TargetKindUnsupported, Message: "a match group settles open receivables and liabilities only; reconcile a bank booking on its own",
			Details: unsupported}
	}
	return out, nil
}

// GroupInputHash fingerprints a normalised input: a retry resumes a
// pending group only with the same request (the transactions in any
// order).
func GroupInputHash(in bankv1.MatchGroupInput) string {
	in.BankTransactionIDs = slices.Sorted(slices.Values(in.BankTransactionIDs))
	b, _ := json.Marshal(in) // strings and amounts: cannot fail
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ItemKeys are the open items an input allocates to.
func ItemKeys(in bankv1.MatchGroupInput) []ItemKey {
	keys := make([]ItemKey, len(in.Allocations))
	for i, a := range in.Allocations {
		keys[i] = ItemKey{a.IntentID, a.OpenItemAccount}
	}
	return keys
}

// CheckGroupTargets decides whether the transactions and items of a
// (normalised) input can form a group, in the order of the rules:
// transactions unknown, not open, of several bank accounts, of both
// directions, not in EUR; then items unknown, of the wrong direction or
// kind, in several currencies, in a foreign currency without the settled
// document amount, in a currency that cannot be booked, settled beyond
// what is open.
func CheckGroupTargets(in bankv1.MatchGroupInput, st GroupState) error {
	txs := make([]Transaction, len(in.BankTransactionIDs))
	for i, id := range in.BankTransactionIDs {
		t, ok := st.Transactions[id]
		if !ok {
			return &errs.Error{Code: errs.NotFound, Message: "bank transaction " + id + " not found",
				Details: []errs.Detail{errs.Field("bank_transaction_ids["+itoa(i)+"]", "no such bank transaction")}}
		}
		txs[i] = t
	}
	for i, t := range txs {
		if t.Status == bankv1.StatusReconciled {
			return &errs.Error{Code: errs.Conflict, Message: "bank transaction " + t.ID + " is already reconciled; unmatch it first",
				Details: []errs.Detail{errs.Field("bank_transaction_ids["+itoa(i)+"]", "already reconciled")}}
		}
	}
	for i, t := range txs {
		if t.BankAccountID != txs[0].BankAccountID {
			return &errs.Error{Code: errs.BankTxMixedBankAccounts, Message: "the transactions of a group are of one bank account; " + t.ID + " is of another than " + txs[0].ID,
				Details: []errs.Detail{errs.Field("bank_transaction_ids["+itoa(i)+"]", "of another bank account")}}
		}
	}
	in0 := !txs[0].Amount.IsNegative()
	for i, t := range txs {
		if !t.Amount.IsNegative() != in0 {
			return &errs.Error{Code: errs.DirectionMismatch, Message: "the transactions of a group move money one way; " + t.ID + " " + direction(t.Amount) + ", " + txs[0].ID + " not",
				Details: []errs.Detail{errs.Field("bank_transaction_ids["+itoa(i)+"]", "the other direction")}}
		}
	}
	for i, t := range txs {
		if t.Currency != DefaultCurrency {
			return &errs.Error{Code: errs.UnsupportedSettlementCurr, Message: "only EUR transactions settle open items; " + t.ID + " is in " + t.Currency,
				Details: []errs.Detail{errs.Field("bank_transaction_ids["+itoa(i)+"]", "not in EUR")}}
		}
	}
	items := make([]OpenItem, len(in.Allocations))
	for i, a := range in.Allocations {
		it, ok := st.Items[ItemKey{a.IntentID, a.OpenItemAccount}]
		if !ok {
			return &errs.Error{Code: errs.NotFound, Message: "intent " + a.IntentID + " has no open item on account " + a.OpenItemAccount,
				Details: []errs.Detail{errs.Field("allocations["+itoa(i)+"].intent_id", "no open item (or reversed)")}}
		}
		items[i] = it
	}
	want := Receivable
	if !in0 {
		want = Payable
	}
	for i, it := range items {
		at := "allocations[" + itoa(i) + "]."
		if it.Direction != want {
			return &errs.Error{Code: errs.DirectionMismatch, Message: "the transactions " + direction(txs[0].Amount) + " but the open item of intent " + it.IntentID + " is a " + it.Direction,
				Details: []errs.Detail{errs.Field(at+"intent_id", "money in settles receivables, money out payables")}}
		}
		if k := in.Allocations[i].CandidateKind; k != KindOf(it) {
			return &errs.Error{Code: errs.DirectionMismatch, Message: "candidate_kind is " + k + " but the open item of intent " + it.IntentID + " is a " + it.Direction,
				Details: []errs.Detail{errs.Field(at+"candidate_kind", "must be "+KindOf(it))}}
		}
	}
	for i, it := range items {
		if currencyOf(it) != currencyOf(items[0]) {
			return &errs.Error{Code: errs.MixedSettlementCurrency, Message: "the open items of a group are in one document currency; " + currencyOf(items[0]) + " and " + currencyOf(it),
				Details: []errs.Detail{errs.Field("allocations["+itoa(i)+"].intent_id", "in "+currencyOf(it))}}
		}
	}
	for i, it := range items {
		if currencyOf(it) != DefaultCurrency && in.Allocations[i].SettledDocumentAmount == nil {
			return &errs.Error{Code: errs.SettledDocumentAmountNeeded, Message: "the open item of intent " + it.IntentID + " is in " + currencyOf(it) + ": name the document amount settled",
				Details: []errs.Detail{errs.Field("allocations["+itoa(i)+"].settled_document_amount", "required for a foreign-currency item")}}
		}
	}
	for _, it := range items {
		if c := currencyOf(it); !currencyRe.MatchString(c) || (c != DefaultCurrency && it.OriginalDocAmount == nil) {
			return &errs.Error{Code: errs.UnsupportedSettlementCurr, Message: "the open item of intent " + it.IntentID + " is in " + c + ", which cannot be booked"}
		}
	}
	for i, it := range items {
		a := in.Allocations[i]
		at := "allocations[" + itoa(i) + "]."
		if currencyOf(it) == DefaultCurrency {
			settled := *a.AllocatedBankAmount
			if a.SettledDocumentAmount != nil {
				settled = *a.SettledDocumentAmount
			}
			if settled.GreaterThan(it.OpenAmount.Decimal) {
				return &errs.Error{Code: errs.SettlementExceedsOpenAmount, Message: "settling " + settled.StringFixed(2) + " of the open item of intent " + it.IntentID + " exceeds the amount still open " + it.OpenAmount.StringFixed(2),
					Details: []errs.Detail{errs.Field(at+"allocated_bank_amount", "open amount "+it.OpenAmount.StringFixed(2))}}
			}
			continue
		}
		open := it.OriginalDocAmount.Sub(it.AllocatedDocAmount)
		if a.SettledDocumentAmount.GreaterThan(open.Decimal) || !it.OpenAmount.IsPositive() {
			return &errs.Error{Code: errs.SettlementExceedsOpenAmount, Message: "settling " + a.SettledDocumentAmount.StringFixed(2) + " " + it.Currency + " of the open item of intent " + it.IntentID + " exceeds the amount still open " + open.StringFixed(2) + " " + it.Currency,
				Details: []errs.Detail{errs.Field(at+"settled_document_amount", "open amount "+open.StringFixed(2)+" "+it.Currency)}}
		}
	}
	return nil
}

func currencyOf(it OpenItem) string {
	if it.Currency == "" {
		return DefaultCurrency
	}
	return it.Currency
}

// leg is one side of the clearing booking before the legs are paired
// into ledger lines.
type leg struct {
	account string
	amount  money.Amount
	ref     string
	desc    string
}

// PlanClearing computes the clearing booking of a group whose targets
// CheckGroupTargets accepted, or GROUP_NOT_BALANCED: (a) the allocations
// must distribute exactly the transactions' money, and (b) the booking
// must balance. Money in debits the bank's ledger account with each
// transaction and credits each item what leaves it (c: an EUR item its
// settled amount, an FX item its EUR carrying amount), the FX effect
// allocated - c going to 4840 (gain) or 6880 (loss); money out mirrors it.
// Adjustments are posted on their side; a cash discount against taxed
// items is split into net (on the adjustment's account) and tax (on the
// items' VAT accounts, same side).
func PlanClearing(in bankv1.MatchGroupInput, st GroupState) (Clearing, error) {
	var cl Clearing
	first := st.Transactions[in.BankTransactionIDs[0]]
	moneyIn := !first.Amount.IsNegative()
	cl.BankAccountID = first.BankAccountID
	cl.BankLedgerAccount = st.BankLedgerAccounts[first.BankAccountID]
	bankTotal, allocated := money.Zero, money.Zero
	var debits, credits []leg
	// bankSide puts a leg on the bank's side of the booking (debit for
	// money in), itemSide on the items' side.
	bankSide := func(l leg) {
		if moneyIn {
			debits = append(debits, l)
		} else {
			credits = append(credits, l)
		}
	}
	itemSide := func(l leg) {
		if moneyIn {
			credits = append(credits, l)
		} else {
			debits = append(debits, l)
		}
	}
	date := ""
	for _, id := range in.BankTransactionIDs {
		t := st.Transactions[id]
		a := money.New(t.Amount.Abs())
		bankTotal = bankTotal.Add(a)
		cl.Transactions = append(cl.Transactions, GroupTx{ID: id, Amount: a, Status: t.Status})
		if t.TxDate > date {
			date = t.TxDate
		}
		bankSide(leg{account: cl.BankLedgerAccount, amount: a})
	}
	for _, a := range in.Allocations {
		allocated = allocated.Add(*a.AllocatedBankAmount)
	}
	if !allocated.Equal(bankTotal.Decimal) {
		return Clearing{}, &errs.Error{Code: errs.GroupNotBalanced, Message: "the allocations distribute " + allocated.StringFixed(2) +
			" but the transactions move " + bankTotal.StringFixed(2) + " (difference " + allocated.Sub(bankTotal).StringFixed(2) + ")",
			Details: []errs.Detail{errs.Field("allocations", "allocated_bank_amount must add up to the transactions' "+bankTotal.StringFixed(2))}}
	}
	fxGain, fxLoss := money.Zero, money.Zero
	type weighted struct {
		TaxPart
		weight decimal.Decimal
	}
	var parts []*weighted // the settled items' composition, by tax code and VAT account
	for i, a := range in.Allocations {
		k := ItemKey{a.IntentID, a.OpenItemAccount}
		it := st.Items[k]
		ga := GroupAllocation{Item: k, CandidateKind: a.CandidateKind, BankAmount: *a.AllocatedBankAmount, Currency: currencyOf(it)}
		ref := ""
		if it.ExternalReference != nil {
			ref = *it.ExternalReference
		}
		if ga.Currency == DefaultCurrency {
			ga.Settled = ga.BankAmount
			if a.SettledDocumentAmount != nil {
				ga.Settled = *a.SettledDocumentAmount
			}
		} else {
			doc := *a.SettledDocumentAmount
			ga.DocAmount = &doc
			if doc.Equal(it.OriginalDocAmount.Sub(it.AllocatedDocAmount).Decimal) {
				// Settled in full: what is still open, no rounding residue.
				ga.Settled = it.OpenAmount
			} else {
				ga.Settled = money.New(it.OriginalAmount.Mul(doc.Decimal).Div(it.OriginalDocAmount.Decimal)).RoundEUR()
				if ga.Settled.GreaterThan(it.OpenAmount.Decimal) {
					ga.Settled = it.OpenAmount
				}
			}
			if !ga.Settled.IsPositive() {
				return Clearing{}, errs.Invalid("the settled document amount is worth less than a cent",
					errs.Field("allocations["+itoa(i)+"].settled_document_amount", "too small"))
			}
			// The company gains when a receivable brings more EUR than it
			// carries or a payable costs fewer.
			diff := ga.BankAmount.Sub(ga.Settled)
			if !moneyIn {
				diff = diff.Neg()
			}
			if diff.IsPositive() {
				fxGain = fxGain.Add(diff)
			} else {
				fxLoss = fxLoss.Sub(diff)
			}
		}
		itemSide(leg{account: k.Account, amount: ga.Settled, ref: ref})
		cl.Allocations = append(cl.Allocations, ga)
		share := ga.Settled.Div(it.OriginalAmount.Decimal)
		for _, p := range it.TaxSplit {
			w := p.Gross.Mul(share)
			j := slices.IndexFunc(parts, func(q *weighted) bool { return q.TaxCode == p.TaxCode && q.VATAccount == p.VATAccount })
			if j < 0 {
				parts = append(parts, &weighted{TaxPart: TaxPart{TaxCode: p.TaxCode, VATAccount: p.VATAccount, Gross: money.Zero, Tax: money.Zero}, weight: decimal.Zero})
				j = len(parts) - 1
			}
			parts[j].Gross, parts[j].Tax, parts[j].weight = parts[j].Gross.Add(p.Gross), parts[j].Tax.Add(p.Tax), parts[j].weight.Add(w)
		}
	}
	// A split needs tax to split and weights to split by: an item whose
	// composition nets a tax code to zero or below (a credit line larger
	// than its invoice line) leaves the discount as given.
	taxed := slices.ContainsFunc(parts, func(p *weighted) bool { return !p.Tax.IsZero() }) &&
		!slices.ContainsFunc(parts, func(p *weighted) bool { return !p.weight.IsPositive() || !p.Gross.IsPositive() })
	for _, a := range in.Adjustments {
		side := &debits
		if a.PostingSide == bankv1.SideCredit {
			side = &credits
		}
		desc := ""
		if a.Description != nil {
			desc = *a.Description
		}
		if !CashDiscountAccount(a.AccountNumber) || !taxed {
			*side = append(*side, leg{account: a.AccountNumber, amount: *a.Amount, desc: desc})
			continue
		}
		weights := make([]decimal.Decimal, len(parts))
		for j, p := range parts {
			weights[j] = p.weight
		}
		net := money.Zero
		var taxLegs []leg
		for j, share := range distribute(*a.Amount, weights) {
			p := parts[j]
			if p.Tax.IsZero() || share.IsZero() {
				net = net.Add(share)
				continue
			}
			n := money.New(share.Mul(p.Gross.Sub(p.Tax).Decimal).Div(p.Gross.Decimal)).RoundEUR()
			net = net.Add(n)
			if tax := share.Sub(n); !tax.IsZero() {
				k := slices.IndexFunc(taxLegs, func(l leg) bool { return l.account == p.VATAccount })
				if k < 0 {
					taxLegs = append(taxLegs, leg{account: p.VATAccount, amount: money.Zero, desc: desc})
					k = len(taxLegs) - 1
				}
				taxLegs[k].amount = taxLegs[k].amount.Add(tax)
			}
		}
		*side = append(*side, leg{account: a.AccountNumber, amount: net, desc: desc})
		*side = append(*side, taxLegs...)
	}
	if fxLoss.IsPositive() {
		debits = append(debits, leg{account: AccountFXLoss, amount: fxLoss, desc: "Kursdifferenz"})
	}
	if fxGain.IsPositive() {
		credits = append(credits, leg{account: AccountFXGain, amount: fxGain, desc: "Kursdifferenz"})
	}
	dsum, csum := sumLegs(debits), sumLegs(credits)
	if !dsum.Equal(csum.Decimal) {
		return Clearing{}, &errs.Error{Code: errs.GroupNotBalanced, Message: "the clearing booking does not balance: debits " + dsum.StringFixed(2) +
			", credits " + csum.StringFixed(2) + " (difference " + dsum.Sub(csum).StringFixed(2) + "); add adjustment lines for fees, discounts or differences",
			Details: []errs.Detail{errs.Field("adjustments", "debits and credits differ by "+dsum.Sub(csum).Abs().StringFixed(2))}}
	}
	desc := groupDescription(in, st)
	cl.Booking = ledgerv1.Booking{BookingDate: date, Description: desc, Lines: pairLegs(debits, credits), SkipDuplicateCheck: true}
	return cl, nil
}

func sumLegs(ls []leg) money.Amount {
	s := money.Zero
	for _, l := range ls {
		s = s.Add(l.amount)
	}
	return s
}

// distribute splits amount over weights to the cent, proportionally,
// the cents left by rounding down going to the largest remainders (the
// earlier first on a tie), so the parts add up exactly.
func distribute(amount money.Amount, weights []decimal.Decimal) []money.Amount {
	total := decimal.Zero
	for _, w := range weights {
		total = total.Add(w)
	}
	out := make([]money.Amount, len(weights))
	if total.IsZero() {
		return out
	}
	cents := amount.Shift(2)
	rem := make([]decimal.Decimal, len(weights))
	left := cents
	for i, w := range weights {
		exact := cents.Mul(w).Div(total)
		fl := exact.Floor()
		out[i], rem[i] = money.New(fl), exact.Sub(fl)
		left = left.Sub(fl)
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rem[b].Cmp(rem[a]) })
	for _, i := range order {
		if !left.IsPositive() {
			break
		}
		out[i] = out[i].Add(money.New(decimal.NewFromInt(1)))
		left = left.Sub(decimal.NewFromInt(1))
	}
	for i := range out {
		out[i] = money.New(out[i].Shift(-2))
	}
	return out
}

// pairLegs turns the debit and credit legs into ledger lines, pairing
// them in order: a line takes what is left of the current debit and
// credit leg, whichever is smaller. Both sides add up to the same sum.
func pairLegs(debits, credits []leg) []ledgerv1.Line {
	var lines []ledgerv1.Line
	debits, credits = slices.Clone(debits), slices.Clone(credits)
	i, j := 0, 0
	for i < len(debits) && j < len(credits) {
		d, c := &debits[i], &credits[j]
		if !d.amount.IsPositive() {
			i++
			continue
		}
		if !c.amount.IsPositive() {
			j++
			continue
		}
		amt := d.amount
		if c.amount.LessThan(amt.Decimal) {
			amt = c.amount
		}
		l := ledgerv1.Line{AccountDebit: d.account, AccountCredit: c.account, Amount: amt}
		l.ExternalReference = clip(cmpOr(d.ref, c.ref), 100)
		l.Description = clip(cmpOr(d.desc, c.desc), 500)
		lines = append(lines, l)
		d.amount, c.amount = d.amount.Sub(amt), c.amount.Sub(amt)
	}
	return lines
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// groupDescription is the clearing booking's text: the counterparties
// and references of the transactions.
func groupDescription(in bankv1.MatchGroupInput, st GroupState) string {
	desc := "Bankabgleich Sammelzahlung"
	var seen []string
	for _, id := range in.BankTransactionIDs {
		t := st.Transactions[id]
		for _, p := range []*string{t.CounterpartyName, t.Reference} {
			if p != nil && *p != "" && !slices.Contains(seen, *p) {
				seen = append(seen, *p)
				desc += " " + *p
			}
		}
	}
	return clip(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, desc), 500)
}

// AccountChecker is what a match group asks the ledger about its
// adjustment accounts; ledgerv1.Client implements it.
type AccountChecker interface {
	Account(ctx context.Context, tenantID, number string) (ledgerv1.Account, error)
}

// WithAccounts lets the reconciler create match groups, checking their
// adjustment accounts in the tenant's chart.
func (r *Reconciler) WithAccounts(a AccountChecker) *Reconciler {
	r.accounts = a
	return r
}

// groupStore is the store as match groups use it.
func (r *Reconciler) groupStore() (MatchGroupStore, error) {
	gs, ok := r.store.(MatchGroupStore)
	if !ok || r.accounts == nil {
		return nil, errs.E(errs.Internal, "match groups are not configured")
	}
	return gs, nil
}

// CreateMatchGroup reconciles several transactions against several open
// items with one clearing booking. Every refusal changes nothing.
func (r *Reconciler) CreateMatchGroup(ctx context.Context, tenantID string, raw bankv1.MatchGroupInput) (bankv1.MatchGroupCreated, error) {
	store, err := r.groupStore()
	if err != nil {
		return bankv1.MatchGroupCreated{}, err
	}
	in, err := CheckGroupInput(raw)
	if err != nil {
		return bankv1.MatchGroupCreated{}, err
	}
	hash, keys := GroupInputHash(in), ItemKeys(in)
	st, err := store.GroupState(ctx, tenantID, in.BankTransactionIDs, keys)
	if err != nil {
		return bankv1.MatchGroupCreated{}, err
	}
	var g MatchGroup
	if st.Pending != nil && st.Pending.InputHash == hash {
		g = *st.Pending // a retry after a crash or a timeout: resume it
	} else {
		if err := CheckGroupTargets(in, st); err != nil {
			return bankv1.MatchGroupCreated{}, err
		}
		if err := r.checkAdjustmentAccounts(ctx, tenantID, in); err != nil {
			return bankv1.MatchGroupCreated{}, err
		}
		if _, err := PlanClearing(in, st); err != nil {
			return bankv1.MatchGroupCreated{}, err
		}
		// Decided again under the locks: the state may have moved.
		g, err = store.ClaimMatchGroup(ctx, tenantID, in.BankTransactionIDs, keys, hash, in, func(st GroupState) (Clearing, error) {
			if err := CheckGroupTargets(in, st); err != nil {
				return Clearing{}, err
			}
			return PlanClearing(in, st)
		})
		if err != nil {
			return bankv1.MatchGroupCreated{}, err
		}
	}
	if g.State == StatePending {
		if err := r.postGroup(ctx, store, tenantID, g); err != nil {
			return bankv1.MatchGroupCreated{}, err
		}
	}
	return bankv1.MatchGroupCreated{OK: true, MatchGroupID: g.ID, IntentID: g.ClearingIntentID, Mode: bankv1.ModeMatchGroup}, nil
}

// postGroup posts a pending group's clearing booking and confirms it,
// or gives the claim up when the ledger refuses for good.
func (r *Reconciler) postGroup(ctx context.Context, store MatchGroupStore, tenantID string, g MatchGroup) error {
	req := ledgerv1.PostRequest{TenantID: tenantID, IntentID: g.ClearingIntentID, Source: ClearingSource, Booking: g.Clearing.Booking}
	if _, err := r.ledger.Post(ctx, req); err != nil {
		if definitive(err) {
			if aerr := store.AbandonMatchGroup(ctx, tenantID, g.ID); aerr != nil {
				return aerr
			}
		}
		return err
	}
	if err := store.ConfirmMatchGroup(ctx, tenantID, g.ID); err != nil {
		if errs.Is(err, errs.Conflict) {
			// Unmatched while the posting was in flight, with nothing to
			// reverse then: reverse it now, under the unmatch's key.
			if _, rerr := r.ledger.Reverse(ctx, tenantID, UnmatchKey(g.ID), groupReversal(g.ClearingIntentID)); rerr != nil && !errs.Is(rerr, errs.AlreadyReversed) {
				return rerr
			}
		}
		return err
	}
	return nil
}

func groupReversal(clearingIntentID string) ledgerv1.ReverseRequest {
	return ledgerv1.ReverseRequest{IntentID: clearingIntentID, Reason: "Bankabgleich (Gruppe) aufgehoben"}
}

// checkAdjustmentAccounts asks the ledger for each adjustment account:
// one the tenant's chart lacks is ADJUSTMENT_ACCOUNT_NOT_FOUND.
func (r *Reconciler) checkAdjustmentAccounts(ctx context.Context, tenantID string, in bankv1.MatchGroupInput) error {
	checked := map[string]bool{}
	for i, a := range in.Adjustments {
		if checked[a.AccountNumber] {
			continue
		}
		checked[a.AccountNumber] = true
		_, err := r.accounts.Account(ctx, tenantID, a.AccountNumber)
		if errs.Is(err, errs.NotFound) || errs.Is(err, errs.AccountNotFound) {
			return &errs.Error{Code: errs.AdjustmentAccountNotFound, Message: "account " + a.AccountNumber + " does not exist in the chart of accounts",
				Details: []errs.Detail{errs.Field("adjustments["+itoa(i)+"].account_number", "not in the chart of accounts")}, Err: err}
		}
		if err != nil {
			return errs.Wrap("bank.CreateMatchGroup: ledger", err)
		}
	}
	return nil
}
