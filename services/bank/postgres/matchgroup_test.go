package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
)

// chart is the tenant's chart as the adjustment check sees it.
type chart map[string]bool

func (c chart) Account(_ context.Context, _, number string) (ledgerv1.Account, error) {
	if !c[number] {
		return ledgerv1.Account{}, errs.NotFoundf("account %s not found", number)
	}
	return ledgerv1.Account{Number: number}, nil
}

func (e *reconcileEnv) groups() *bank.Reconciler {
	return e.rec.WithAccounts(chart{"4730": true, "6855": true, "4840": true, "6880": true})
}

func taxed(l ledgerv1.EventLine, code string) ledgerv1.EventLine { l.TaxCode = &code; return l }

func amount(s string) *money.Amount { a := money.MustParse(s); return &a }

func allocation(intentID, bankAmount string, settled *money.Amount) bankv1.MatchGroupAllocation {
	return bankv1.MatchGroupAllocation{IntentID: intentID, CandidateKind: bankv1.CandidateOpenReceivable, OpenItemAccount: "1200",
		AllocatedBankAmount: amount(bankAmount), SettledDocumentAmount: settled}
}

// lineTexts are lines as the assertions read them.
func lineTexts(ls []ledgerv1.Line) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s %s %s %s", l.AccountDebit, l.AccountCredit, l.Amount.StringFixed(2), l.ExternalReference))
	}
	return out
}

// TestMatchGroup: two transfers pay two invoices, one of them less 2 %
// Skonto; one clearing booking, one event per transaction with the
// group's allocations; a retry is refused; unmatch of one member undoes
// the whole group with one reversal; a new group posts anew.
func TestMatchGroup(t *testing.T) {
	e := newReconcileEnv(t)
	r := e.groups()
	inv1 := e.intent("2026-03-02", taxed(ln("1200", "4400", "100.00", "RE-1"), "USt19"), taxed(ln("1200", "3806", "19.00", "RE-1"), "USt19"))
	inv2 := e.intent("2026-03-03", ln("1200", "4400", "50.00", "RE-2"))
	a, b := e.tx("100.00", "Teil 1"), e.tx("66.62", "Teil 2")
	in := bankv1.MatchGroupInput{BankTransactionIDs: []string{b, a}, Allocations: []bankv1.MatchGroupAllocation{allocation(inv1, "116.62", amount("119.00")),
		allocation(inv2, "50.00", nil)}, Adjustments: []bankv1.MatchGroupAdjustment{{AccountNumber: "4730", PostingSide: "debit", Amount: amount("2.38")}}}

	got, err := r.CreateMatchGroup(e.ctx, e.tenant, in)
	if err != nil {
		t.Fatal(err)
	}
	groupID := e.str(`SELECT id::text FROM bank.match_groups WHERE tenant_id = $1`, e.tenant)
	if got != (bankv1.MatchGroupCreated{OK: true, MatchGroupID: groupID, IntentID: bank.MatchGroupIntentID(e.tenant, groupID), Mode: "match_group"}) {
		t.Fatalf("created %+v", got)
	}
	p, ok := e.ledger.posts[got.IntentID]
	if !ok || len(e.ledger.posts) != 1 || p.Source != "bank" || !p.Booking.SkipDuplicateCheck {
		t.Fatalf("posts %+v", e.ledger.posts)
	}
	// The transactions in the order given, paired with the items in order.
	want := []string{"1800 1200 66.62 RE-1", "1800 1200 52.38 RE-1", "1800 1200 47.62 RE-2", "4730 1200 2.00 RE-2", "3806 1200 0.38 RE-2"}
	if diff := cmp.Diff(want, lineTexts(p.Booking.Lines)); diff != "" {
		t.Fatalf("clearing lines (-want +got):\n%s", diff)
	}
	if e.status(a) != bankv1.StatusReconciled || e.status(b) != bankv1.StatusReconciled || e.allocated(inv1) != "119.00" || e.allocated(inv2) != "50.00" {
		t.Fatal("not reconciled or not allocated")
	}
	evs := e.events(bankv1.EventTransactionReconciled)
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	for _, ev := range evs {
		if ev.MatchGroupID != groupID || ev.Mode != "match_group" || ev.IntentID != got.IntentID || len(ev.Allocations) != 2 {
			t.Fatalf("event %+v", ev)
		}
		for _, al := range ev.Allocations {
			if al.IntentID == inv1 && (al.Amount.StringFixed(2) != "119.00" || al.BankAmount.StringFixed(2) != "116.62" || al.Currency != "EUR") {
				t.Fatalf("allocation %+v", al)
			}
		}
	}

	// Again, without an idempotency key: the transactions are reconciled.
	_, err = r.CreateMatchGroup(e.ctx, e.tenant, in)
	wantCode(t, err, errs.Conflict)
	if e.ledger.postCalls != 1 {
		t.Fatalf("%d posts", e.ledger.postCalls)
	}

	// Unmatch one member: the whole group goes, reversed once.
	un, err := r.Unmatch(e.ctx, e.tenant, a)
	if err != nil {
		t.Fatal(err)
	}
	if !un.OK || un.Mode != "match_group" || un.Status != bankv1.StatusOpen || un.ReversalIntentID == nil || len(e.ledger.reversals) != 1 {
		t.Fatalf("unmatched %+v, reversals %v", un, e.ledger.reversals)
	}
	if rv, ok := e.ledger.reversals[bank.UnmatchKey(groupID)]; !ok || rv.IntentID != got.IntentID {
		t.Fatalf("reversals %+v", e.ledger.reversals)
	}
	if e.status(a) != bankv1.StatusOpen || e.status(b) != bankv1.StatusOpen || e.allocated(inv1) != "0.00" || e.allocated(inv2) != "0.00" {
		t.Fatal("not all open again")
	}
	if evs := e.events(bankv1.EventTransactionUnmatched); len(evs) != 2 || evs[0].ReversalIntentID != *un.ReversalIntentID {
		t.Fatalf("unmatched events %+v", evs)
	}
	_, err = r.Unmatch(e.ctx, e.tenant, b)
	wantCode(t, err, errs.Conflict)

	// A new group of the same transactions: a new group, a new clearing.
	again, err := r.CreateMatchGroup(e.ctx, e.tenant, in)
	if err != nil || again.MatchGroupID == groupID || again.IntentID == got.IntentID || len(e.ledger.posts) != 2 {
		t.Fatalf("again %+v %v, %d posts", again, err, len(e.ledger.posts))
	}
}

// TestMatchGroupRetry: a posting that timed out leaves the group pending;
// the retry (same body) posts under the same intent and confirms; one
// the ledger refuses abandons the group and opens everything again.
func TestMatchGroupRetry(t *testing.T) {
	e := newReconcileEnv(t)
	r := e.groups()
	inv := e.intent("2026-03-02", ln("1200", "4400", "100.00", "RE-7"))
	tx := e.tx("98.00", "RE-7")
	in := bankv1.MatchGroupInput{BankTransactionIDs: []string{tx}, Allocations: []bankv1.MatchGroupAllocation{allocation(inv, "98.00", amount("100.00"))},
		Adjustments: []bankv1.MatchGroupAdjustment{{AccountNumber: "6855", PostingSide: "debit", Amount: amount("2.00")}}}

	e.ledger.fail = errs.PeriodLocked
	_, err := r.CreateMatchGroup(e.ctx, e.tenant, in)
	wantCode(t, err, errs.PeriodLocked)
	if s := e.str(`SELECT state FROM bank.match_groups WHERE tenant_id = $1`, e.tenant); s != "abandoned" || e.status(tx) != bankv1.StatusOpen || e.allocated(inv) != "0.00" {
		t.Fatalf("refused: group %s, tx %s, allocated %s", s, e.status(tx), e.allocated(inv))
	}

	e.ledger.fail = errs.Timeout
	_, err = r.CreateMatchGroup(e.ctx, e.tenant, in)
	wantCode(t, err, errs.Timeout)
	pending := e.str(`SELECT id::text FROM bank.match_groups WHERE tenant_id = $1 AND state = 'pending'`, e.tenant)
	if e.status(tx) != bankv1.StatusReconciled || e.allocated(inv) != "100.00" {
		t.Fatal("the pending claim does not hold")
	}
	// Another body for the same transaction is refused while it is pending.
	other := in
	other.Adjustments = []bankv1.MatchGroupAdjustment{{AccountNumber: "4730", PostingSide: "debit", Amount: amount("2.00")}}
	_, err = r.CreateMatchGroup(e.ctx, e.tenant, other)
	wantCode(t, err, errs.Conflict)
	got, err := r.CreateMatchGroup(e.ctx, e.tenant, in)
	if err != nil || got.MatchGroupID != pending || len(e.ledger.posts) != 1 {
		t.Fatalf("resumed %+v %v, %d posts", got, err, len(e.ledger.posts))
	}
	if s := e.str(`SELECT state FROM bank.match_groups WHERE id = $1`, pending); s != "active" || len(e.events(bankv1.EventTransactionReconciled)) != 1 {
		t.Fatalf("group %s", s)
	}
	if diff := cmp.Diff([]string{"1800 1200 98.00 RE-7", "6855 1200 2.00 RE-7"}, lineTexts(e.ledger.posts[got.IntentID].Booking.Lines)); diff != "" {
		t.Fatalf("lines (-want +got):\n%s", diff)
	}
}

// TestMatchGroupRaces: two groups claiming the same transaction: one
// wins, the other is a CONFLICT; two groups settling the same item
// beyond what is open: one wins, the other is refused; the item's
// allocation never exceeds it.
func TestMatchGroupRaces(t *testing.T) {
	e := newReconcileEnv(t)
	r := e.groups()
	inv1 := e.intent("2026-03-02", ln("1200", "4400", "119.00", "RE-1"))
	inv2 := e.intent("2026-03-02", ln("1200", "4400", "119.00", "RE-2"))
	shared := e.tx("80.00", "geteilt")
	x, y := e.tx("80.00", "x"), e.tx("80.00", "y")
	race := func(a, b bankv1.MatchGroupInput) []error {
		var wg sync.WaitGroup
		out := make([]error, 2)
		for i, in := range []bankv1.MatchGroupInput{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, out[i] = r.CreateMatchGroup(e.ctx, e.tenant, in)
			}()
		}
		wg.Wait()
		return out
	}
	group := func(tx, inv string) bankv1.MatchGroupInput {
		return bankv1.MatchGroupInput{BankTransactionIDs: []string{tx}, Allocations: []bankv1.MatchGroupAllocation{allocation(inv, "80.00", nil)}}
	}
	outcome := func(errors []error, code string) {
		t.Helper()
		wins, refused := 0, 0
		for _, err := range errors {
			switch {
			case err == nil:
				wins++
			case errs.Is(err, code):
				refused++
			default:
				t.Fatalf("unexpected %v", err)
			}
		}
		if wins != 1 || refused != 1 {
			t.Fatalf("%d won, %d refused with %s: %v", wins, refused, code, errors)
		}
	}
	outcome(race(group(shared, inv1), group(shared, inv2)), errs.Conflict)
	if n := e.str(`SELECT count(*)::text FROM bank.reconciliations WHERE bank_transaction_id = $1 AND state = 'active'`, shared); n != "1" {
		t.Fatalf("%s live reconciliations of the shared transaction", n)
	}
	// inv1 or inv2 has 39.00 left; settle 80.00 of the other twice.
	free := inv2
	if e.allocated(inv2) != "0.00" {
		free = inv1
	}
	outcome(race(group(x, free), group(y, free)), errs.SettlementExceedsOpenAmount)
	if e.allocated(free) != "80.00" {
		t.Fatalf("allocated %s", e.allocated(free))
	}
}

// TestMatchGroupForeignCurrency: an invoice of USD 1000.00 carried at
// 900.00 EUR is projected with its document amount; 400 USD paid with
// 370.00 EUR settle 360.00 EUR of it (a 10.00 gain on 4840), the rest
// paid with 520.00 EUR settles what is still open (540.00, a 20.00 loss).
func TestMatchGroupForeignCurrency(t *testing.T) {
	e := newReconcileEnv(t)
	r := e.groups()
	l := ln("1200", "4120", "900.00", "INV-9")
	cur, fx := "USD", "1000.00"
	l.FXCurrency, l.FXAmount = &cur, &fx
	inv := e.intent("2026-03-02", l)
	its, err := e.items.List(e.ctx, e.tenant, "")
	if err != nil || len(its) != 1 || its[0].Currency != "USD" || its[0].OriginalDocAmount == nil || its[0].OriginalDocAmount.StringFixed(2) != "1000.00" {
		t.Fatalf("items %+v %v", its, err)
	}
	usd := func(tx, bankAmount, doc string) bankv1.MatchGroupInput {
		var settled *money.Amount
		if doc != "" {
			settled = amount(doc)
		}
		return bankv1.MatchGroupInput{BankTransactionIDs: []string{tx}, Allocations: []bankv1.MatchGroupAllocation{allocation(inv, bankAmount, settled)}}
	}
	t1, t2 := e.tx("370.00", "usd-1"), e.tx("520.00", "usd-2")
	// A single reconcile cannot know the document amount: 422, use a group.
	_, err = e.rec.Reconcile(e.ctx, e.tenant, t1, bankv1.ReconcileInput{IntentID: inv})
	wantCode(t, err, errs.UnsupportedSettlementCurr)
	first, err := r.CreateMatchGroup(e.ctx, e.tenant, usd(t1, "370.00", "400.00"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1800 1200 360.00 INV-9", "1800 4840 10.00 "}, lineTexts(e.ledger.posts[first.IntentID].Booking.Lines)); diff != "" {
		t.Fatalf("lines (-want +got):\n%s", diff)
	}
	if e.allocated(inv) != "360.00" || e.str(`SELECT allocated_doc_amount::text FROM bank.open_items WHERE intent_id = $1`, inv) != "400.00" {
		t.Fatal("not allocated")
	}
	_, err = r.CreateMatchGroup(e.ctx, e.tenant, usd(t2, "520.00", "600.01"))
	wantCode(t, err, errs.SettlementExceedsOpenAmount)
	_, err = r.CreateMatchGroup(e.ctx, e.tenant, usd(t2, "520.00", ""))
	wantCode(t, err, errs.SettledDocumentAmountNeeded)
	rest, err := r.CreateMatchGroup(e.ctx, e.tenant, usd(t2, "520.00", "600.00"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1800 1200 520.00 INV-9", "6880 1200 20.00 INV-9"}, lineTexts(e.ledger.posts[rest.IntentID].Booking.Lines)); diff != "" {
		t.Fatalf("lines (-want +got):\n%s", diff)
	}
	if e.allocated(inv) != "900.00" || e.str(`SELECT allocated_doc_amount::text FROM bank.open_items WHERE intent_id = $1`, inv) != "1000.00" {
		t.Fatal("not settled in full")
	}
	evs := e.events(bankv1.EventTransactionReconciled)
	if len(evs) != 2 || evs[1].Allocations[0].Currency != "USD" || evs[1].Allocations[0].Amount.StringFixed(2) != "600.00" ||
		evs[1].Allocations[0].BankAmount.StringFixed(2) != "520.00" {
		t.Fatalf("events %+v", evs)
	}
}
