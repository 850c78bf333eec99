package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// fakeLedger stands in for the ledger service: it keeps the postings by
// intent id, as the ledger's PostFor does (the same id answers the intent
// already posted), and the reversals by idempotency key.
type fakeLedger struct {
	mu        sync.Mutex
	posts     map[string]ledgerv1.PostRequest
	postCalls int
	reversals map[string]ledgerv1.ReverseRequest // by key
	fail      string                             // an error code to answer the next Post with
	onPost    func()                             // runs before a Post is recorded, once
}

func (f *fakeLedger) Post(_ context.Context, r ledgerv1.PostRequest) (ledgerv1.Posted, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.postCalls++
	if hook := f.onPost; hook != nil {
		f.onPost = nil
		f.mu.Unlock()
		hook()
		f.mu.Lock()
	}
	if f.fail != "" {
		code := f.fail
		f.fail = ""
		return ledgerv1.Posted{}, errs.E(code, "the ledger says no")
	}
	if _, ok := f.posts[r.IntentID]; !ok {
		f.posts[r.IntentID] = r
	}
	return ledgerv1.Posted{IntentID: r.IntentID, EventCount: len(r.Booking.Lines)}, nil
}

func (f *fakeLedger) Reverse(_ context.Context, _, key string, r ledgerv1.ReverseRequest) (ledgerv1.Reversed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.posts[r.IntentID]; !ok {
		return ledgerv1.Reversed{}, errs.NotFoundf("intent %s not found", r.IntentID)
	}
	f.reversals[key] = r
	return ledgerv1.Reversed{ReversalIntentID: uuid.NewSHA1(uuid.Nil, []byte(key)).String(), OriginalIntentID: r.IntentID, EventCount: 1}, nil
}

type reconcileEnv struct {
	t       *testing.T
	ctx     context.Context
	store   *postgres.Store
	owner   *pgxpool.Pool
	items   *bank.OpenItems
	rec     *bank.Reconciler
	ledger  *fakeLedger
	tenant  string
	account string
}

func newReconcileEnv(t *testing.T) *reconcileEnv {
	t.Helper()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, testkit.Postgres(t, postgres.Schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	pool, err := migrate.ServicePool(ctx, owner, "", postgres.Schema.Role, 4, postgres.Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store := postgres.New(pool)
	l := &fakeLedger{posts: map[string]ledgerv1.PostRequest{}, reversals: map[string]ledgerv1.ReverseRequest{}}
	e := &reconcileEnv{t: t, ctx: ctx, store: store, owner: owner, items: bank.NewOpenItems(store), rec: bank.NewReconciler(store, l), ledger: l,
		tenant: uuid.NewString()}
	acc, err := store.CreateAccount(ctx, e.tenant, bank.Account{ID: uuid.NewString(), Name: "Giro", IBAN: "DE89370400440532013000", AccountNumber: "1800", Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	e.account = acc.ID
	return e
}

// intent projects an intent_posted event of the tenant and returns its id.
func (e *reconcileEnv) intent(date string, lines ...ledgerv1.EventLine) string {
	e.t.Helper()
	id := uuid.NewString()
	if err := e.items.Apply(e.ctx, e.tenant, intentOf(e.tenant, id, date, "Rechnung", 1, lines...)); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// tx imports one bank transaction and returns its id.
func (e *reconcileEnv) tx(amount, ref string) string {
	e.t.Helper()
	r, err := e.store.ImportStatements(e.ctx, e.tenant, e.account, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceJSON},
		[]bank.ParsedStatement{{Entries: []bank.Entry{{BookingDate: "2026-03-10", Amount: decimal.RequireFromString(amount), Currency: "EUR",
			Reference: ref, BankReference: ref, CounterpartyName: "Müller KG"}}}})
	if err != nil || r.Imported != 1 {
		e.t.Fatalf("import: %+v %v", r, err)
	}
	var id string
	if err := e.owner.QueryRow(e.ctx, `SELECT id FROM bank.transactions WHERE tenant_id = $1 AND bank_reference = $2`, e.tenant, ref).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *reconcileEnv) str(q string, args ...any) string {
	e.t.Helper()
	var s string
	if err := e.owner.QueryRow(e.ctx, q, args...).Scan(&s); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return s
}

func (e *reconcileEnv) status(tx string) string {
	return e.str(`SELECT status FROM bank.transactions WHERE id = $1`, tx)
}

func (e *reconcileEnv) allocated(intent string) string {
	return e.str(`SELECT allocated_amount::text FROM bank.open_items WHERE intent_id = $1`, intent)
}

func (e *reconcileEnv) events(subject string) []bankv1.TransactionReconciled {
	e.t.Helper()
	rows, err := e.owner.Query(e.ctx, `SELECT payload FROM bank.outbox WHERE subject = $1 ORDER BY created_at`, subject)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []bankv1.TransactionReconciled
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			e.t.Fatal(err)
		}
		var ev bankv1.TransactionReconciled
		if err := json.Unmarshal(b, &ev); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if !errs.Is(err, code) {
		t.Fatalf("got %v, want %s", err, code)
	}
}

// TestReconcileOpenItem: a payment settles a receivable through one
// clearing booking, a retry posts nothing more, unmatch reverses it once
// and frees the item, and a new reconciliation posts a new clearing.
func TestReconcileOpenItem(t *testing.T) {
	e := newReconcileEnv(t)
	inv := e.intent("2026-03-02", ln("1200", "4400", "100.00", "RE-1"), ln("1200", "3806", "19.00", "RE-1"))
	tx := e.tx("50.00", "Abschlag RE-1")

	got, err := e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: inv, CandidateKind: bankv1.CandidateOpenReceivable})
	if err != nil {
		t.Fatal(err)
	}
	clearing := bank.ClearingIntentID(e.tenant, tx, 0)
	if got != (bankv1.Reconciled{OK: true, Mode: bankv1.ModeOpenItem, IntentID: clearing, BankTransactionID: tx, MatchedIntentID: inv}) {
		t.Fatalf("reconciled %+v", got)
	}
	p := e.ledger.posts[clearing]
	if len(e.ledger.posts) != 1 || p.Source != "bank" || p.Booking.BookingDate != "2026-03-10" || len(p.Booking.Lines) != 1 {
		t.Fatalf("posts %+v", e.ledger.posts)
	}
	if l := p.Booking.Lines[0]; l.AccountDebit != "1800" || l.AccountCredit != "1200" || l.Amount.StringFixed(2) != "50.00" || l.ExternalReference != "RE-1" {
		t.Fatalf("clearing line %+v", l)
	}
	if e.status(tx) != bankv1.StatusReconciled || e.allocated(inv) != "50.00" {
		t.Fatalf("status %s, allocated %s", e.status(tx), e.allocated(inv))
	}
	evs := e.events(bankv1.EventTransactionReconciled)
	if len(evs) != 1 || evs[0].IntentID != clearing || evs[0].BankAccountID != e.account || len(evs[0].Allocations) != 1 ||
		evs[0].Allocations[0] != (bankv1.Allocation{IntentID: inv, CandidateKind: bankv1.CandidateOpenReceivable, OpenItemAccount: "1200", Amount: evs[0].Allocations[0].Amount, Currency: "EUR"}) ||
		evs[0].Allocations[0].Amount.StringFixed(2) != "50.00" {
		t.Fatalf("events %+v", evs)
	}

	// Again: refused, nothing posted.
	_, err = e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: inv})
	wantCode(t, err, errs.Conflict)
	if e.ledger.postCalls != 1 {
		t.Fatalf("%d posts", e.ledger.postCalls)
	}

	// The projection of the clearing booking is explained by the transaction.
	if err := e.items.Apply(e.ctx, e.tenant, intentOf(e.tenant, clearing, "2026-03-10", "Bankabgleich", 2, ln("1800", "1200", "50.00", "RE-1"))); err != nil {
		t.Fatal(err)
	}
	if bs, err := e.items.BankBookings(e.ctx, e.tenant, e.account); err != nil || len(bs) != 0 {
		t.Fatalf("bank bookings %+v %v", bs, err)
	}

	// Unmatch reverses the clearing booking under the reconciliation's key.
	un, err := e.rec.Unmatch(e.ctx, e.tenant, tx)
	if err != nil {
		t.Fatal(err)
	}
	if !un.OK || un.Status != bankv1.StatusOpen || un.ReversalIntentID == nil || un.Mode != bankv1.ModeOpenItem || len(e.ledger.reversals) != 1 {
		t.Fatalf("unmatched %+v, reversals %v", un, e.ledger.reversals)
	}
	recID := e.str(`SELECT id::text FROM bank.reconciliations WHERE bank_transaction_id = $1`, tx)
	if r, ok := e.ledger.reversals[bank.UnmatchKey(recID)]; !ok || r.IntentID != clearing {
		t.Fatalf("reversals %+v", e.ledger.reversals)
	}
	if e.status(tx) != bankv1.StatusOpen || e.allocated(inv) != "0.00" {
		t.Fatalf("after unmatch: %s %s", e.status(tx), e.allocated(inv))
	}
	if evs := e.events(bankv1.EventTransactionUnmatched); len(evs) != 1 || evs[0].ReversalIntentID != *un.ReversalIntentID || evs[0].Allocations[0].IntentID != inv {
		t.Fatalf("unmatched events %+v", evs)
	}
	_, err = e.rec.Unmatch(e.ctx, e.tenant, tx)
	wantCode(t, err, errs.Conflict)

	// Reconciled again: a new clearing booking under the next number.
	got, err = e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: inv})
	if err != nil || got.IntentID != bank.ClearingIntentID(e.tenant, tx, 1) || len(e.ledger.posts) != 2 {
		t.Fatalf("again: %+v %v, %d posts", got, err, len(e.ledger.posts))
	}
}

// TestReconcileRetry: a posting that timed out leaves the claim pending;
// the retry posts under the same intent id and finishes; a posting the
// ledger refuses gives the claim up.
func TestReconcileRetry(t *testing.T) {
	e := newReconcileEnv(t)
	bill := e.intent("2026-03-02", ln("6815", "3300", "238.00", "ER-9"))
	tx := e.tx("-238.00", "ER-9")

	e.ledger.fail = errs.Timeout
	_, err := e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: bill})
	wantCode(t, err, errs.Timeout)
	if st := e.str(`SELECT state FROM bank.reconciliations WHERE bank_transaction_id = $1`, tx); st != "pending" {
		t.Fatalf("state %s", st)
	}
	if len(e.events(bankv1.EventTransactionReconciled)) != 0 {
		t.Fatal("an event before the posting was confirmed")
	}
	got, err := e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: bill, CandidateKind: bankv1.CandidateOpenLiability})
	if err != nil || got.IntentID != bank.ClearingIntentID(e.tenant, tx, 0) {
		t.Fatalf("%+v %v", got, err)
	}
	if len(e.ledger.posts) != 1 || e.allocated(bill) != "238.00" || len(e.events(bankv1.EventTransactionReconciled)) != 1 {
		t.Fatalf("posts %d, allocated %s", len(e.ledger.posts), e.allocated(bill))
	}
	if l := e.ledger.posts[got.IntentID].Booking.Lines[0]; l.AccountDebit != "3300" || l.AccountCredit != "1800" {
		t.Fatalf("money out debits the payable: %+v", l)
	}

	// A refusal: the claim is given up, the transaction open again.
	inv := e.intent("2026-03-02", ln("1200", "4400", "10.00", ""))
	tx2 := e.tx("10.00", "RE-2")
	e.ledger.fail = errs.PeriodLocked
	_, err = e.rec.Reconcile(e.ctx, e.tenant, tx2, bankv1.ReconcileInput{IntentID: inv})
	wantCode(t, err, errs.PeriodLocked)
	if e.status(tx2) != bankv1.StatusOpen || e.allocated(inv) != "0.00" {
		t.Fatalf("after refusal: %s %s", e.status(tx2), e.allocated(inv))
	}
	got, err = e.rec.Reconcile(e.ctx, e.tenant, tx2, bankv1.ReconcileInput{IntentID: inv})
	if err != nil || got.IntentID != bank.ClearingIntentID(e.tenant, tx2, 1) {
		t.Fatalf("%+v %v", got, err)
	}
}

// TestReconcileRefusals: each rule with its code, and nothing changes.
func TestReconcileRefusals(t *testing.T) {
	e := newReconcileEnv(t)
	inv := e.intent("2026-03-02", ln("1200", "4400", "119.00", ""))
	bill := e.intent("2026-03-02", ln("6815", "3300", "50.00", ""))
	two := e.intent("2026-03-02", ln("1200", "4400", "10.00", ""), ln("10001", "4400", "10.00", ""))
	in, out, big := e.tx("20.00", "in"), e.tx("-20.00", "out"), e.tx("500.00", "big")
	cases := []struct {
		name string
		tx   string
		in   bankv1.ReconcileInput
		code string
	}{
		{"money in against a payable", in, bankv1.ReconcileInput{IntentID: bill}, errs.DirectionMismatch},
		{"money out against a receivable", out, bankv1.ReconcileInput{IntentID: inv}, errs.DirectionMismatch},
		{"kind not the item's", in, bankv1.ReconcileInput{IntentID: inv, CandidateKind: bankv1.CandidateOpenLiability}, errs.DirectionMismatch},
		{"above the open amount", big, bankv1.ReconcileInput{IntentID: inv}, errs.SettlementExceedsOpenAmount},
		{"unknown transaction", uuid.NewString(), bankv1.ReconcileInput{IntentID: inv}, errs.NotFound},
		{"malformed transaction id", "nope", bankv1.ReconcileInput{IntentID: inv}, errs.NotFound},
		{"unknown intent", in, bankv1.ReconcileInput{IntentID: uuid.NewString()}, errs.NotFound},
		{"not a bank booking", in, bankv1.ReconcileInput{IntentID: inv, CandidateKind: bankv1.CandidateBankBooking}, errs.NotFound},
		{"several accounts", in, bankv1.ReconcileInput{IntentID: two}, errs.InvalidInput},
		{"no intent", in, bankv1.ReconcileInput{}, errs.InvalidInput},
		{"bad kind", in, bankv1.ReconcileInput{IntentID: inv, CandidateKind: "invoice"}, errs.InvalidInput},
	}
	for _, c := range cases {
		_, err := e.rec.Reconcile(e.ctx, e.tenant, c.tx, c.in)
		if !errs.Is(err, c.code) {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if len(e.ledger.posts) != 0 || e.str(`SELECT count(*)::text FROM bank.reconciliations`) != "0" || e.allocated(inv) != "0.00" {
		t.Fatal("a refusal changed something")
	}
	// Another tenant's transaction is unknown.
	_, err := e.rec.Reconcile(e.ctx, uuid.NewString(), in, bankv1.ReconcileInput{IntentID: inv})
	wantCode(t, err, errs.NotFound)
	// With the account named, the intent of two items settles one.
	if _, err := e.rec.Reconcile(e.ctx, e.tenant, e.tx("10.00", "two"), bankv1.ReconcileInput{IntentID: two, OpenItemAccount: "10001"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.rec.Unmatch(e.ctx, e.tenant, in)
	wantCode(t, err, errs.Conflict)
	_, err = e.rec.Unmatch(e.ctx, e.tenant, uuid.NewString())
	wantCode(t, err, errs.NotFound)
}

// TestReconcileBankBooking: a booking already on the bank's ledger
// account is linked, nothing is posted, and unmatch only unlinks.
func TestReconcileBankBooking(t *testing.T) {
	e := newReconcileEnv(t)
	bk := e.intent("2026-03-09", ln("1800", "1200", "20.00", ""))
	fee := e.intent("2026-03-31", ln("6855", "1800", "9.90", ""))
	tx := e.tx("20.00", "Zahlung")

	_, err := e.rec.Reconcile(e.ctx, e.tenant, e.tx("-20.00", "neg"), bankv1.ReconcileInput{IntentID: bk})
	wantCode(t, err, errs.DirectionMismatch)
	_, err = e.rec.Reconcile(e.ctx, e.tenant, e.tx("-10.00", "fee"), bankv1.ReconcileInput{IntentID: fee})
	wantCode(t, err, errs.SettlementExceedsOpenAmount)
	_, err = e.rec.Reconcile(e.ctx, e.tenant, e.tx("-5.00", "fee small"), bankv1.ReconcileInput{IntentID: fee, CandidateKind: bankv1.CandidateBankBooking})
	wantCode(t, err, errs.InvalidInput)

	got, err := e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: bk})
	if err != nil || got != (bankv1.Reconciled{OK: true, Mode: bankv1.ModeBankBooking, IntentID: bk, BankTransactionID: tx, MatchedIntentID: bk}) {
		t.Fatalf("%+v %v", got, err)
	}
	if e.ledger.postCalls != 0 || e.str(`SELECT explained_by::text FROM bank.ledger_bookings WHERE intent_id = $1`, bk) != tx {
		t.Fatal("the link")
	}
	// The booking explains one transaction only.
	_, err = e.rec.Reconcile(e.ctx, e.tenant, e.tx("20.00", "zweite"), bankv1.ReconcileInput{IntentID: bk, CandidateKind: bankv1.CandidateBankBooking})
	wantCode(t, err, errs.Conflict)

	un, err := e.rec.Unmatch(e.ctx, e.tenant, tx)
	if err != nil || un.ReversalIntentID != nil || un.Status != bankv1.StatusOpen || len(e.ledger.reversals) != 0 {
		t.Fatalf("%+v %v", un, err)
	}
	if bs, _ := e.items.BankBookings(e.ctx, e.tenant, e.account); len(bs) != 2 {
		t.Fatalf("bookings after unmatch %+v", bs)
	}
	if evs := e.events(bankv1.EventTransactionUnmatched); len(evs) != 1 || evs[0].Mode != bankv1.ModeBankBooking || evs[0].Allocations[0].IntentID != bk {
		t.Fatalf("%+v", evs)
	}
}

// TestBatchReconcile: each pair on its own.
func TestBatchReconcile(t *testing.T) {
	e := newReconcileEnv(t)
	inv := e.intent("2026-03-02", ln("1200", "4400", "100.00", ""))
	a, b := e.tx("30.00", "a"), e.tx("-30.00", "b")
	got, err := e.rec.BatchReconcile(e.ctx, e.tenant, bankv1.BatchReconcileInput{Pairs: []bankv1.BatchPair{
		{BankTransactionID: a, IntentID: inv, CandidateKind: bankv1.CandidateOpenReceivable, OpenItemAccount: "1200"},
		{BankTransactionID: b, IntentID: inv, CandidateKind: bankv1.CandidateOpenReceivable},
	}})
	if err != nil || got.Reconciled != 1 || len(got.Errors) != 1 || got.Errors[0].Index != 1 || got.Errors[0].Code != errs.DirectionMismatch || got.Errors[0].BankTransactionID != b {
		t.Fatalf("%+v %v", got, err)
	}
	_, err = e.rec.BatchReconcile(e.ctx, e.tenant, bankv1.BatchReconcileInput{})
	wantCode(t, err, errs.InvalidInput)
	_, err = e.rec.BatchReconcile(e.ctx, e.tenant, bankv1.BatchReconcileInput{Pairs: []bankv1.BatchPair{{BankTransactionID: b, IntentID: inv}}})
	wantCode(t, err, errs.InvalidInput)
}

// TestEvidence: the rules of the evidence types; evidence posts nothing
// and makes an open transaction evidenced.
func TestEvidence(t *testing.T) {
	e := newReconcileEnv(t)
	tx := e.tx("-4.50", "Parken")
	if got, err := e.rec.Evidence(e.ctx, e.tenant, tx); err != nil || got.Evidence != nil {
		t.Fatalf("%+v %v", got, err)
	}
	s := func(v string) *string { return &v }
	for _, in := range []bankv1.EvidenceInput{
		{EvidenceType: bankv1.EvidenceEigenbeleg},
		{EvidenceType: bankv1.EvidenceEigenbeleg, Note: s("  ")},
		{EvidenceType: bankv1.EvidenceUploadedDocument},
		{EvidenceType: bankv1.EvidenceUploadedDocument, DocumentID: s("nope")},
		{EvidenceType: "receipt"},
		{EvidenceType: bankv1.EvidenceBankStatement, Title: s(strings.Repeat("x", 201))},
		{EvidenceType: bankv1.EvidenceBankStatement, Metadata: json.RawMessage(`[1]`)},
	} {
		_, err := e.rec.PutEvidence(e.ctx, e.tenant, tx, in)
		wantCode(t, err, errs.InvalidInput)
	}
	if e.status(tx) != bankv1.StatusOpen {
		t.Fatal("a refusal changed the status")
	}
	got, err := e.rec.PutEvidence(e.ctx, e.tenant, tx, bankv1.EvidenceInput{EvidenceType: bankv1.EvidenceEigenbeleg, Title: s("Parkgebühr"), Note: s("Automat ohne Beleg"),
		Metadata: json.RawMessage(`{"ort":"Köln"}`)})
	if err != nil || got.Evidence == nil || got.Evidence.Note == nil || *got.Evidence.Note != "Automat ohne Beleg" {
		t.Fatalf("%+v %v", got, err)
	}
	if e.status(tx) != bankv1.StatusEvidenced || e.ledger.postCalls != 0 {
		t.Fatal("evidenced")
	}
	doc := uuid.NewString()
	again, err := e.rec.PutEvidence(e.ctx, e.tenant, tx, bankv1.EvidenceInput{EvidenceType: bankv1.EvidenceUploadedDocument, DocumentID: &doc})
	if err != nil || again.Evidence.ID != got.Evidence.ID || again.Evidence.Note != nil {
		t.Fatalf("replaced: %+v %v", again, err)
	}
	read, err := e.rec.Evidence(e.ctx, e.tenant, tx)
	if err != nil || !cmp.Equal(read.Evidence, again.Evidence) || *read.Evidence.DocumentID != doc || read.Evidence.EvidenceType != bankv1.EvidenceUploadedDocument {
		t.Fatalf("%+v %v", read, err)
	}
	_, err = e.rec.Evidence(e.ctx, e.tenant, uuid.NewString())
	wantCode(t, err, errs.NotFound)
	_, err = e.rec.PutEvidence(e.ctx, uuid.NewString(), tx, bankv1.EvidenceInput{EvidenceType: bankv1.EvidenceBankStatement})
	wantCode(t, err, errs.NotFound)

	// An evidenced transaction can still be reconciled; unmatch brings it
	// back to evidenced.
	bill := e.intent("2026-03-02", ln("6815", "3300", "4.50", ""))
	if _, err := e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: bill}); err != nil {
		t.Fatal(err)
	}
	if un, err := e.rec.Unmatch(e.ctx, e.tenant, tx); err != nil || un.Status != bankv1.StatusEvidenced {
		t.Fatalf("%+v %v", un, err)
	}
}

// TestReconcileForeignCurrency: the ledger books in EUR, so a USD
// transaction settles no open item.
func TestReconcileForeignCurrency(t *testing.T) {
	e := newReconcileEnv(t)
	usd, err := e.store.CreateAccount(e.ctx, e.tenant, bank.Account{ID: uuid.NewString(), Name: "USD", IBAN: "DE02120300000000202051", AccountNumber: "1810", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	e.account = usd.ID
	inv := e.intent("2026-03-02", ln("1200", "4400", "100.00", ""))
	r, err := e.store.ImportStatements(e.ctx, e.tenant, usd.ID, bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceJSON},
		[]bank.ParsedStatement{{Entries: []bank.Entry{{BookingDate: "2026-03-10", Amount: decimal.RequireFromString("50.00"), Currency: "USD", BankReference: "usd"}}}})
	if err != nil || r.Imported != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	tx := e.str(`SELECT id::text FROM bank.transactions WHERE bank_reference = 'usd'`)
	_, err = e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: inv})
	wantCode(t, err, errs.UnsupportedSettlementCurr)
	if errs.Status(errs.UnsupportedSettlementCurr) != 422 || e.ledger.postCalls != 0 {
		t.Fatal("422, nothing posted")
	}
}

// TestReconcileUnmatchedInFlight: an unmatch that releases a claim while
// its posting is in flight finds nothing to reverse; the reconcile then
// reverses the clearing booking itself and answers the conflict.
func TestReconcileUnmatchedInFlight(t *testing.T) {
	e := newReconcileEnv(t)
	inv := e.intent("2026-03-02", ln("1200", "4400", "100.00", ""))
	tx := e.tx("40.00", "flug")
	e.ledger.onPost = func() {
		if _, err := e.rec.Unmatch(e.ctx, e.tenant, tx); err != nil {
			t.Errorf("unmatch in flight: %v", err)
		}
	}
	_, err := e.rec.Reconcile(e.ctx, e.tenant, tx, bankv1.ReconcileInput{IntentID: inv})
	wantCode(t, err, errs.Conflict)
	recID := e.str(`SELECT id::text FROM bank.reconciliations WHERE bank_transaction_id = $1`, tx)
	if r, ok := e.ledger.reversals[bank.UnmatchKey(recID)]; !ok || r.IntentID != bank.ClearingIntentID(e.tenant, tx, 0) || len(e.ledger.posts) != 1 {
		t.Fatalf("posts %d, reversals %+v", len(e.ledger.posts), e.ledger.reversals)
	}
	if e.status(tx) != bankv1.StatusOpen || e.allocated(inv) != "0.00" || len(e.events(bankv1.EventTransactionReconciled)) != 0 ||
		len(e.events(bankv1.EventTransactionUnmatched)) != 0 {
		t.Fatal("the transaction is not open again, or an event announced what never was")
	}
}
