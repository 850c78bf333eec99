package bank_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/bank"
)

const (
	giro   = "11111111-1111-4111-8111-111111111111"
	tagesg = "22222222-2222-4222-8222-222222222222"
	tx1    = "a0000000-0000-4000-8000-000000000001"
	tx2    = "a0000000-0000-4000-8000-000000000002"
	tx3    = "a0000000-0000-4000-8000-000000000003"
	inv1   = "b0000000-0000-4000-8000-000000000001"
	inv2   = "b0000000-0000-4000-8000-000000000002"
	usd    = "b0000000-0000-4000-8000-000000000003"
	bill   = "b0000000-0000-4000-8000-000000000004"
	usdB   = "b0000000-0000-4000-8000-000000000005"
	mixed  = "b0000000-0000-4000-8000-000000000006"
)

func amtp(s string) *money.Amount { a := money.MustParse(s); return &a }

// groupState is a tenant's state: transactions on the Girokonto (1800)
// unless changed, and open items.
func groupState() bank.GroupState {
	tx := func(id, amount, date string) bank.Transaction {
		return bank.Transaction{ID: id, BankAccountID: giro, TxDate: date, Amount: money.MustParse(amount), Currency: "EUR", Status: bankv1.StatusOpen}
	}
	item := func(intentID, account, dir, amount, ref string, split ...bank.TaxPart) bank.OpenItem {
		it := bank.OpenItem{IntentID: intentID, AccountNumber: account, Direction: dir, OriginalAmount: money.MustParse(amount),
			OpenAmount: money.MustParse(amount), Currency: "EUR", TaxSplit: split}
		if ref != "" {
			it.ExternalReference = &ref
		}
		return it
	}
	part := func(code, gross, tax, vat string) bank.TaxPart {
		return bank.TaxPart{TaxCode: code, Gross: money.MustParse(gross), Tax: money.MustParse(tax), VATAccount: vat}
	}
	st := bank.GroupState{
		Transactions:       map[string]bank.Transaction{},
		BankLedgerAccounts: map[string]string{giro: "1800", tagesg: "1810"},
		Items:              map[bank.ItemKey]bank.OpenItem{},
	}
	for _, t := range []bank.Transaction{tx(tx1, "300.00", "2026-03-10"), tx(tx2, "69.00", "2026-03-12"), tx(tx3, "-233.24", "2026-03-11")} {
		st.Transactions[t.ID] = t
	}
	for _, it := range []bank.OpenItem{
		item(inv1, "1200", bank.Receivable, "119.00", "RE-1", part("USt19", "119.00", "19.00", "3806")),
		item(inv2, "1200", bank.Receivable, "181.00", "RE-2"),
		item(mixed, "1200", bank.Receivable, "172.50", "RE-3", part("USt19", "119.00", "19.00", "3806"), part("USt7", "53.50", "3.50", "3801")),
		item(bill, "3300", bank.Payable, "238.00", "ER-9", part("VSt19", "238.00", "38.00", "1406")),
	} {
		st.Items[bank.ItemKey{IntentID: it.IntentID, Account: it.AccountNumber}] = it
	}
	fx := item(usd, "1200", bank.Receivable, "900.00", "INV-USD")
	fx.Currency, fx.OriginalDocAmount = "USD", amtp("1000.00")
	st.Items[bank.ItemKey{IntentID: usd, Account: "1200"}] = fx
	fxb := item(usdB, "70001", bank.Payable, "46.00", "")
	fxb.Currency, fxb.OriginalDocAmount = "USD", amtp("50.00")
	st.Items[bank.ItemKey{IntentID: usdB, Account: "70001"}] = fxb
	return st
}

func alloc(intentID, account, kind, bankAmount string, settled *money.Amount) bankv1.MatchGroupAllocation {
	return bankv1.MatchGroupAllocation{IntentID: intentID, CandidateKind: kind, OpenItemAccount: account, AllocatedBankAmount: amtp(bankAmount), SettledDocumentAmount: settled}
}

func recv(intentID, bankAmount string, settled *money.Amount) bankv1.MatchGroupAllocation {
	return alloc(intentID, "1200", bankv1.CandidateOpenReceivable, bankAmount, settled)
}

func adj(account, side, amount string) bankv1.MatchGroupAdjustment {
	return bankv1.MatchGroupAdjustment{AccountNumber: account, PostingSide: side, Amount: amtp(amount)}
}

func ln(debit, credit, amount, ref string) ledgerv1.Line {
	return ledgerv1.Line{AccountDebit: debit, AccountCredit: credit, Amount: money.MustParse(amount), ExternalReference: ref}
}

// TestPlanClearing: the clearing booking's lines, to the cent.
func TestPlanClearing(t *testing.T) {
	cases := []struct {
		name  string
		st    func(*bank.GroupState)
		in    bankv1.MatchGroupInput
		lines []ledgerv1.Line
	}{
		{
			name:  "two invoices paid by one transfer",
			in:    bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv1, "119.00", nil), recv(inv2, "181.00", nil)}},
			lines: []ledgerv1.Line{ln("1800", "1200", "119.00", "RE-1"), ln("1800", "1200", "181.00", "RE-2")},
		},
		{
			name: "one invoice paid by two transfers",
			st: func(st *bank.GroupState) {
				t := st.Transactions[tx1]
				t.Amount = money.MustParse("50.00")
				st.Transactions[tx1] = t
			},
			in:    bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1, tx2}, Allocations: []bankv1.MatchGroupAllocation{recv(inv1, "119.00", nil)}},
			lines: []ledgerv1.Line{ln("1800", "1200", "50.00", "RE-1"), ln("1800", "1200", "69.00", "RE-1")},
		},
		{
			// 100.00 invoiced, 98.00 arrive, the bank kept 2.00.
			name: "fee deducted",
			st: func(st *bank.GroupState) {
				t := st.Transactions[tx1]
				t.Amount = money.MustParse("98.00")
				st.Transactions[tx1] = t
				it := st.Items[bank.ItemKey{IntentID: inv2, Account: "1200"}]
				it.OriginalAmount, it.OpenAmount = money.MustParse("100.00"), money.MustParse("100.00")
				st.Items[bank.ItemKey{IntentID: inv2, Account: "1200"}] = it
			},
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv2, "98.00", amtp("100.00"))},
				Adjustments: []bankv1.MatchGroupAdjustment{adj("6855", "debit", "2.00")}},
			lines: []ledgerv1.Line{ln("1800", "1200", "98.00", "RE-2"), ln("6855", "1200", "2.00", "RE-2")},
		},
		{
			// 2 % Skonto on 119.00: 116.62 arrive; the 2.38 discount is
			// 2.00 net and 0.38 output VAT taken back.
			name: "Skonto on a 19 % invoice",
			st:   setTx(tx1, "116.62"),
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv1, "116.62", amtp("119.00"))},
				Adjustments: []bankv1.MatchGroupAdjustment{adj("4730", "debit", "2.38")}},
			lines: []ledgerv1.Line{ln("1800", "1200", "116.62", "RE-1"), ln("4730", "1200", "2.00", "RE-1"), ln("3806", "1200", "0.38", "RE-1")},
		},
		{
			// 5.18 discount on 119.00 (19 %) + 53.50 (7 %): 3.57 and 1.61
			// by gross (the cent left to the larger remainder), split into
			// 3.00 + 0.57 and 1.50 + 0.11.
			name: "Skonto on a mixed-rate invoice",
			st:   setTx(tx1, "167.32"),
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(mixed, "167.32", amtp("172.50"))},
				Adjustments: []bankv1.MatchGroupAdjustment{adj("4730", "debit", "5.18")}},
			lines: []ledgerv1.Line{ln("1800", "1200", "167.32", "RE-3"), ln("4730", "1200", "4.50", "RE-3"), ln("3806", "1200", "0.57", "RE-3"),
				ln("3801", "1200", "0.11", "RE-3")},
		},
		{
			name: "a discount on an untaxed invoice is not split",
			st:   setTx(tx1, "179.00"),
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv2, "179.00", amtp("181.00"))},
				Adjustments: []bankv1.MatchGroupAdjustment{adj("4730", "debit", "2.00")}},
			lines: []ledgerv1.Line{ln("1800", "1200", "179.00", "RE-2"), ln("4730", "1200", "2.00", "RE-2")},
		},
		{
			// Its composition nets the untaxed part below zero (a credit
			// line): no weights to split by, the discount stays as given.
			name: "a discount on an invoice with a credit line is not split",
			st: func(st *bank.GroupState) {
				setTx(tx1, "179.00")(st)
				k := bank.ItemKey{IntentID: inv2, Account: "1200"}
				it := st.Items[k]
				it.TaxSplit = []bank.TaxPart{{TaxCode: "USt19", Gross: money.MustParse("191.00"), Tax: money.MustParse("30.50"), VATAccount: "3806"},
					{Gross: money.MustParse("-10.00"), Tax: money.Zero}}
				st.Items[k] = it
			},
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv2, "179.00", amtp("181.00"))},
				Adjustments: []bankv1.MatchGroupAdjustment{adj("4730", "debit", "2.00")}},
			lines: []ledgerv1.Line{ln("1800", "1200", "179.00", "RE-2"), ln("4730", "1200", "2.00", "RE-2")},
		},
		{
			// USD 1000.00 carried at 900.00 EUR, paid in full with 950.00.
			name:  "USD invoice settled at a better rate",
			st:    setTx(tx1, "950.00"),
			in:    bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(usd, "950.00", amtp("1000.00"))}},
			lines: []ledgerv1.Line{ln("1800", "1200", "900.00", "INV-USD"), ln("1800", "4840", "50.00", "")},
		},
		{
			name:  "USD invoice settled at a worse rate",
			st:    setTx(tx1, "880.00"),
			in:    bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(usd, "880.00", amtp("1000.00"))}},
			lines: []ledgerv1.Line{ln("1800", "1200", "880.00", "INV-USD"), ln("6880", "1200", "20.00", "INV-USD")},
		},
		{
			// 333.33 of 1000.00 USD carry 299.997 -> 300.00 EUR.
			name:  "USD invoice settled in part: the carrying amount rounded",
			st:    setTx(tx1, "310.00"),
			in:    bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(usd, "310.00", amtp("333.33"))}},
			lines: []ledgerv1.Line{ln("1800", "1200", "300.00", "INV-USD"), ln("1800", "4840", "10.00", "")},
		},
		{
			// 2 % Skonto received on 238.00 (19 % input tax): 4.00 net on
			// 5730, 0.76 input VAT (1406) corrected, both credit.
			name: "payable with Skonto received",
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx3}, Allocations: []bankv1.MatchGroupAllocation{
				alloc(bill, "3300", bankv1.CandidateOpenLiability, "233.24", amtp("238.00"))},
				Adjustments: []bankv1.MatchGroupAdjustment{adj("5730", "credit", "4.76")}},
			lines: []ledgerv1.Line{ln("3300", "1800", "233.24", "ER-9"), ln("3300", "5730", "4.00", "ER-9"), ln("3300", "1406", "0.76", "ER-9")},
		},
		{
			// USD 50.00 carried at 46.00 EUR cost only 45.00: a gain.
			name: "USD payable settled at a better rate",
			st:   setTx(tx3, "-45.00"),
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx3}, Allocations: []bankv1.MatchGroupAllocation{
				alloc(usdB, "70001", bankv1.CandidateOpenLiability, "45.00", amtp("50.00"))}},
			lines: []ledgerv1.Line{ln("70001", "1800", "45.00", ""), ln("70001", "4840", "1.00", "")},
		},
		{
			name: "USD payable settled at a worse rate",
			st:   setTx(tx3, "-47.50"),
			in: bankv1.MatchGroupInput{BankTransactionIDs: []string{tx3}, Allocations: []bankv1.MatchGroupAllocation{
				alloc(usdB, "70001", bankv1.CandidateOpenLiability, "47.50", amtp("50.00"))}},
			lines: []ledgerv1.Line{ln("70001", "1800", "46.00", ""), ln("6880", "1800", "1.50", "")},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := groupState()
			if c.st != nil {
				c.st(&st)
			}
			in, err := bank.CheckGroupInput(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if err := bank.CheckGroupTargets(in, st); err != nil {
				t.Fatal(err)
			}
			cl, err := bank.PlanClearing(in, st)
			if err != nil {
				t.Fatal(err)
			}
			for i := range cl.Booking.Lines {
				cl.Booking.Lines[i].Description = "" // the adjustments' texts; not the point here
			}
			if diff := cmp.Diff(c.lines, cl.Booking.Lines, amountsEqual); diff != "" {
				t.Fatalf("lines (-want +got):\n%s", diff)
			}
			if !cl.Booking.SkipDuplicateCheck || cl.BankLedgerAccount == "" {
				t.Fatalf("booking %+v", cl)
			}
		})
	}
}

func setTx(id, amount string) func(*bank.GroupState) {
	return func(st *bank.GroupState) {
		t := st.Transactions[id]
		t.Amount = money.MustParse(amount)
		st.Transactions[id] = t
	}
}

// TestMatchGroupRefusals: every refusal with its code and, for input
// errors, the field.
func TestMatchGroupRefusals(t *testing.T) {
	ok := func() bankv1.MatchGroupInput {
		return bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv1, "119.00", nil), recv(inv2, "181.00", nil)}}
	}
	cases := []struct {
		name   string
		st     func(*bank.GroupState)
		in     func(*bankv1.MatchGroupInput)
		code   string
		fields []string
	}{
		{name: "no transactions", in: func(in *bankv1.MatchGroupInput) { in.BankTransactionIDs = nil }, code: errs.InvalidInput, fields: []string{"bank_transaction_ids"}},
		{name: "repeated transaction", in: func(in *bankv1.MatchGroupInput) { in.BankTransactionIDs = []string{tx1, tx1} }, code: errs.InvalidInput,
			fields: []string{"bank_transaction_ids[1]"}},
		{name: "no UUID", in: func(in *bankv1.MatchGroupInput) { in.BankTransactionIDs = []string{"x"} }, code: errs.InvalidInput, fields: []string{"bank_transaction_ids[0]"}},
		{name: "no allocations", in: func(in *bankv1.MatchGroupInput) { in.Allocations = nil }, code: errs.InvalidInput, fields: []string{"allocations"}},
		{name: "amount with 3 decimals", in: func(in *bankv1.MatchGroupInput) { in.Allocations[1].AllocatedBankAmount = amtp("1.001") }, code: errs.InvalidInput,
			fields: []string{"allocations[1].allocated_bank_amount"}},
		{name: "negative settled amount", in: func(in *bankv1.MatchGroupInput) { in.Allocations[0].SettledDocumentAmount = amtp("-1") }, code: errs.InvalidInput,
			fields: []string{"allocations[0].settled_document_amount"}},
		{name: "item twice", in: func(in *bankv1.MatchGroupInput) { in.Allocations[1] = in.Allocations[0] }, code: errs.InvalidInput, fields: []string{"allocations[1].intent_id"}},
		{name: "adjustment shape", in: func(in *bankv1.MatchGroupInput) {
			in.Adjustments = []bankv1.MatchGroupAdjustment{{AccountNumber: "48a", PostingSide: "left", Amount: amtp("0")}}
		}, code: errs.InvalidInput, fields: []string{"adjustments[0].account_number", "adjustments[0].posting_side", "adjustments[0].amount"}},
		{name: "bank booking", in: func(in *bankv1.MatchGroupInput) { in.Allocations[0].CandidateKind = bankv1.CandidateBankBooking }, code: errs.TargetKindUnsupported},
		{name: "unknown transaction", in: func(in *bankv1.MatchGroupInput) {
			in.BankTransactionIDs = []string{tx1, "a0000000-0000-4000-8000-00000000000f"}
		}, code: errs.NotFound},
		{name: "reconciled transaction", st: func(st *bank.GroupState) {
			t := st.Transactions[tx1]
			t.Status = bankv1.StatusReconciled
			st.Transactions[tx1] = t
		}, code: errs.Conflict},
		{name: "two bank accounts", st: func(st *bank.GroupState) {
			t := st.Transactions[tx2]
			t.BankAccountID = tagesg
			st.Transactions[tx2] = t
		}, in: func(in *bankv1.MatchGroupInput) { in.BankTransactionIDs = []string{tx1, tx2} }, code: errs.BankTxMixedBankAccounts},
		{name: "money in and out", in: func(in *bankv1.MatchGroupInput) { in.BankTransactionIDs = []string{tx1, tx3} }, code: errs.DirectionMismatch},
		{name: "transaction in USD", st: func(st *bank.GroupState) {
			t := st.Transactions[tx1]
			t.Currency = "USD"
			st.Transactions[tx1] = t
		}, code: errs.UnsupportedSettlementCurr},
		{name: "unknown item", in: func(in *bankv1.MatchGroupInput) { in.Allocations[0].IntentID = "b0000000-0000-4000-8000-00000000000f" }, code: errs.NotFound},
		{name: "payable for money in", in: func(in *bankv1.MatchGroupInput) {
			in.Allocations[0] = alloc(bill, "3300", bankv1.CandidateOpenLiability, "119.00", nil)
		}, code: errs.DirectionMismatch},
		{name: "wrong kind", in: func(in *bankv1.MatchGroupInput) { in.Allocations[0].CandidateKind = bankv1.CandidateOpenLiability }, code: errs.DirectionMismatch},
		{name: "EUR and USD items", in: func(in *bankv1.MatchGroupInput) { in.Allocations[1] = recv(usd, "181.00", amtp("200")) }, code: errs.MixedSettlementCurrency},
		{name: "USD item without settled amount", in: func(in *bankv1.MatchGroupInput) {
			in.Allocations = []bankv1.MatchGroupAllocation{recv(usd, "300.00", nil)}
		}, code: errs.SettledDocumentAmountNeeded},
		{name: "item in a currency that cannot be booked", st: func(st *bank.GroupState) {
			it := st.Items[bank.ItemKey{IntentID: usd, Account: "1200"}]
			it.Currency = "usd"
			st.Items[bank.ItemKey{IntentID: usd, Account: "1200"}] = it
		}, in: func(in *bankv1.MatchGroupInput) {
			in.Allocations = []bankv1.MatchGroupAllocation{recv(usd, "300.00", amtp("300"))}
		}, code: errs.UnsupportedSettlementCurr},
		{name: "EUR item beyond its open amount", in: func(in *bankv1.MatchGroupInput) { in.Allocations[0].SettledDocumentAmount = amtp("119.01") },
			code: errs.SettlementExceedsOpenAmount},
		{name: "USD item beyond its open amount", st: func(st *bank.GroupState) {
			it := st.Items[bank.ItemKey{IntentID: usd, Account: "1200"}]
			it.AllocatedDocAmount = money.MustParse("800")
			st.Items[bank.ItemKey{IntentID: usd, Account: "1200"}] = it
		}, in: func(in *bankv1.MatchGroupInput) {
			in.Allocations = []bankv1.MatchGroupAllocation{recv(usd, "300.00", amtp("200.01"))}
		}, code: errs.SettlementExceedsOpenAmount},
		{name: "allocations do not distribute the money", in: func(in *bankv1.MatchGroupInput) { in.Allocations[1].AllocatedBankAmount = amtp("180.00") },
			code: errs.GroupNotBalanced},
		{name: "booking does not balance", in: func(in *bankv1.MatchGroupInput) { in.Allocations[1].SettledDocumentAmount = amtp("180.00") },
			code: errs.GroupNotBalanced},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, in := groupState(), ok()
			if c.st != nil {
				c.st(&st)
			}
			if c.in != nil {
				c.in(&in)
			}
			err := func() error {
				in, err := bank.CheckGroupInput(in)
				if err != nil {
					return err
				}
				if err := bank.CheckGroupTargets(in, st); err != nil {
					return err
				}
				_, err = bank.PlanClearing(in, st)
				return err
			}()
			e := errs.As(err)
			if e == nil || e.Code != c.code {
				t.Fatalf("error %v, want %s", err, c.code)
			}
			if c.fields != nil {
				var got []string
				for _, d := range e.Details {
					got = append(got, d.Field)
				}
				if diff := cmp.Diff(c.fields, got); diff != "" {
					t.Fatalf("fields (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// fakeGroupStore is the store as CreateMatchGroup uses it: a fixed
// state; a claim is recorded pending, a confirmation or abandonment
// changes its state. The embedded interface is nil: other methods are
// not called.
type fakeGroupStore struct {
	bank.ReconcileStore
	st     bank.GroupState
	groups map[string]*bank.MatchGroup
}

func (f *fakeGroupStore) GroupState(context.Context, string, []string, []bank.ItemKey) (bank.GroupState, error) {
	st := f.st
	for _, g := range f.groups {
		if g.State == bank.StatePending {
			st.Pending = g
		}
	}
	return st, nil
}

func (f *fakeGroupStore) ClaimMatchGroup(_ context.Context, tenantID string, txIDs []string, _ []bank.ItemKey, hash string, _ bankv1.MatchGroupInput,
	decide func(bank.GroupState) (bank.Clearing, error)) (bank.MatchGroup, error) {
	cl, err := decide(f.st)
	if err != nil {
		return bank.MatchGroup{}, err
	}
	id := bank.MatchGroupID(tenantID, txIDs, 0)
	g := &bank.MatchGroup{ID: id, TenantID: tenantID, ClearingIntentID: bank.MatchGroupIntentID(tenantID, id), State: bank.StatePending, InputHash: hash, Clearing: cl}
	f.groups[id] = g
	return *g, nil
}

func (f *fakeGroupStore) ConfirmMatchGroup(_ context.Context, _, id string) error {
	f.groups[id].State = bank.StateActive
	return nil
}

func (f *fakeGroupStore) AbandonMatchGroup(_ context.Context, _, id string) error {
	f.groups[id].State = "abandoned"
	return nil
}

func (f *fakeGroupStore) UnmatchGroup(context.Context, string, string, string, *string) (bankv1.Unmatched, error) {
	return bankv1.Unmatched{}, errs.E(errs.Internal, "not in this test")
}

type fakeLedger struct {
	posts []ledgerv1.PostRequest
	err   error
}

func (l *fakeLedger) Post(_ context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error) {
	if l.err != nil {
		return ledgerv1.Posted{}, l.err
	}
	l.posts = append(l.posts, r)
	return ledgerv1.Posted{IntentID: r.IntentID}, nil
}

func (l *fakeLedger) Reverse(context.Context, string, string, ledgerv1.ReverseRequest) (ledgerv1.Reversed, error) {
	return ledgerv1.Reversed{}, errs.E(errs.Internal, "not in this test")
}

type fakeChart map[string]bool

func (c fakeChart) Account(_ context.Context, _, number string) (ledgerv1.Account, error) {
	if !c[number] {
		return ledgerv1.Account{}, errs.NotFoundf("account %s not found", number)
	}
	return ledgerv1.Account{Number: number}, nil
}

// TestCreateMatchGroup: the steps claim, post, confirm; a retry resumes
// the pending group; a refusal of the ledger abandons it; an adjustment
// account the chart lacks is refused before anything is claimed.
func TestCreateMatchGroup(t *testing.T) {
	in := bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv2, "298.00", amtp("181.00")), recv(inv1, "2.00", nil)},
		Adjustments: []bankv1.MatchGroupAdjustment{adj("6855", "debit", "1.00"), adj("9999", "credit", "1.00")}}
	// Refused for the unknown account 9999 before the balance is looked at.
	store := &fakeGroupStore{st: groupState(), groups: map[string]*bank.MatchGroup{}}
	l := &fakeLedger{}
	r := bank.NewReconciler(store, l).WithAccounts(fakeChart{"6855": true})
	_, err := r.CreateMatchGroup(context.Background(), tenant, in)
	if e := errs.As(err); e == nil || e.Code != errs.AdjustmentAccountNotFound || e.Details[0].Field != "adjustments[1].account_number" {
		t.Fatalf("unknown adjustment account: %v", err)
	}
	if len(store.groups) != 0 || len(l.posts) != 0 {
		t.Fatal("a refusal claimed or posted")
	}

	in = bankv1.MatchGroupInput{BankTransactionIDs: []string{tx1}, Allocations: []bankv1.MatchGroupAllocation{recv(inv1, "119.00", nil), recv(inv2, "181.00", nil)}}
	l.err = errs.E(errs.PeriodLocked, "locked")
	if _, err := r.CreateMatchGroup(context.Background(), tenant, in); !errs.Is(err, errs.PeriodLocked) {
		t.Fatalf("ledger refusal: %v", err)
	}
	for _, g := range store.groups {
		if g.State != "abandoned" {
			t.Fatalf("a refused group is %s", g.State)
		}
	}

	store.groups = map[string]*bank.MatchGroup{}
	l.err = errs.E(errs.Timeout, "slow")
	if _, err := r.CreateMatchGroup(context.Background(), tenant, in); !errs.Is(err, errs.Timeout) {
		t.Fatalf("ledger timeout: %v", err)
	}
	l.err = nil
	got, err := r.CreateMatchGroup(context.Background(), tenant, in) // the retry resumes
	if err != nil {
		t.Fatal(err)
	}
	if len(store.groups) != 1 || len(l.posts) != 1 {
		t.Fatalf("%d groups, %d posts", len(store.groups), len(l.posts))
	}
	g := store.groups[got.MatchGroupID]
	want := bankv1.MatchGroupCreated{OK: true, MatchGroupID: g.ID, IntentID: g.ClearingIntentID, Mode: "match_group"}
	if diff := cmp.Diff(want, got); diff != "" || g.State != bank.StateActive {
		t.Fatalf("created (-want +got):\n%s, state %s", diff, g.State)
	}
	p := l.posts[0]
	if p.IntentID != g.ClearingIntentID || p.Source != "bank" || p.Booking.BookingDate != "2026-03-10" || len(p.Booking.Lines) != 2 {
		t.Fatalf("posted %+v", p)
	}
}
