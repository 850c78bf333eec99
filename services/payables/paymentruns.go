package payables

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/payables/sepa"
)

// Limits of a payment run (the spec's payment-run limit; the rest are
// this service's bounds).
const (
	DefaultRunsLimit = 100
	MaxRunsLimit     = 500
	// MaxRunInvoices bounds one run: a bank takes a file of this many
	// transfers without splitting, and one request locks as many rows.
	MaxRunInvoices = 1000
	MaxLabelLength = 140
	// MaxReturnReasonLength bounds the reason of a returned transfer.
	MaxReturnReasonLength = 500
)

// PaymentRun is a payment run as the API shows it.
type PaymentRun = payablesv1.PaymentRun

// RunItem is one stored credit transfer of a run: the item the API shows
// and the creditor's address, which only the file carries.
type RunItem struct {
	payablesv1.PaymentRunItem
	Address payablesv1.Address
}

// Debtor is who pays a run: the bank account and the company holding it.
type Debtor struct {
	Name    string
	IBAN    string
	BIC     *string
	Address payablesv1.Address
}

// Actor is who acts on a run: the API key or user (auth.Claims.Actor),
// and whether they hold the admin scope, which makes them the tenant's
// owner.
type Actor struct {
	ID    string
	Owner bool
}

// NewRun is a checked payment run to create.
type NewRun struct {
	ID            string
	CreatedBy     string
	Label         *string
	BankAccountID string
	ExecutionDate time.Time
	Debtor        Debtor
	InvoiceIDs    []string
}

// OpenInvoice is an incoming invoice of a run's request with its vendor's
// payment details, as read (and locked) when the run is created.
type OpenInvoice struct {
	ID            string
	VendorID      string
	VendorName    string
	VendorIBAN    *string
	VendorBIC     *string
	VendorAddress payablesv1.Address
	InvoiceNumber string
	State         string
	Currency      string
	Gross, Paid   money.Amount
	// DiscountRate is the Skonto in percent, kept when paid on or before
	// DiscountUntil; nil for none.
	DiscountRate  *decimal.Decimal
	DiscountUntil *time.Time
}

// RunFile is a stored run with what its file needs: the items with their
// addresses, the debtor and, once exported, the file.
type RunFile struct {
	Run     PaymentRun
	Debtor  Debtor
	Items   []RunItem
	PainXML []byte
}

// Transition is the change of a run's status a rule decided: To, at At,
// with the exported file when To is exported.
type Transition struct {
	To      string
	At      time.Time
	PainXML []byte
	By      string // who approved, stored with an approval
}

// RunStore keeps payment runs; postgres.Store implements it.
type RunStore interface {
	// PaymentRuns lists the tenant's runs matching f, newest first,
	// without items.
	PaymentRuns(ctx context.Context, tenantID string, f payablesv1.PaymentRunFilter) ([]PaymentRun, error)
	// PaymentRun reads one run with its items; an unknown id is NOT_FOUND.
	PaymentRun(ctx context.Context, tenantID, id string) (RunFile, error)
	// CreatePaymentRun locks the requested invoices, hands them (those of
	// r.InvoiceIDs that exist in the tenant) to plan and stores the run
	// with the items plan returns, claiming and saving the request's
	// Idempotency-Key in the same transaction. An invoice in another
	// active run is INVOICE_ALREADY_IN_ACTIVE_RUN, decided under the
	// lock and by a unique index; an error of plan is returned unchanged,
	// with nothing written.
	CreatePaymentRun(ctx context.Context, tenantID string, r NewRun, plan func([]OpenInvoice) ([]RunItem, error)) (PaymentRun, error)
	// ChangePaymentRun applies decide to the locked run and stores the
	// transition it returns; a transition to the current status changes
	// nothing. Cancelling frees the run's invoices; a completed run keeps
	// them, so no other run pays them again. An unknown id is NOT_FOUND;
	// an error of decide is returned unchanged.
	ChangePaymentRun(ctx context.Context, tenantID, id string, decide func(RunFile) (Transition, error)) (RunFile, error)
	// ReturnPaymentRunItem marks the transfer of invoiceID in run id as
	// returned at at, with reason, once check accepts the locked run: the
	// item is no longer active, so the invoice may go into another run.
	// An unknown run is NOT_FOUND; an error of check is returned
	// unchanged, with nothing written.
	ReturnPaymentRunItem(ctx context.Context, tenantID, id, invoiceID string, reason *string, at time.Time, check func(RunFile) error) (RunFile, error)
}

// Banks is what payment runs ask the bank service: the account paid from.
// bankv1.Client implements it; an unknown account is NOT_FOUND.
type Banks interface {
	Account(ctx context.Context, tenantID, id string) (bankv1.Account, error)
}

// Tenants is what payment runs ask identity: the company holding the
// account. identityv1 implements it (payablesd adapts the client).
type Tenants interface {
	Tenant(ctx context.Context, tenantID string) (identityv1.Tenant, error)
}

// PaymentRuns holds the rules of payment runs.
type PaymentRuns struct {
	store   RunStore
	banks   Banks
	tenants Tenants
	now     func() time.Time
}

// NewPaymentRuns returns the payment runs on store, asking banks and
// tenants for the debtor; now is the clock (nil for time.Now).
func NewPaymentRuns(store RunStore, banks Banks, tenants Tenants, now func() time.Time) *PaymentRuns {
	if now == nil {
		now = time.Now
	}
	return &PaymentRuns{store: store, banks: banks, tenants: tenants, now: now}
}

// List lists the tenant's runs matching f, newest first.
func (p *PaymentRuns) List(ctx context.Context, tenantID string, f payablesv1.PaymentRunFilter) (payablesv1.PaymentRunList, error) {
	if f.Limit == 0 {
		f.Limit = DefaultRunsLimit
	}
	rs, err := p.store.PaymentRuns(ctx, tenantID, f)
	if err != nil {
		return payablesv1.PaymentRunList{}, err
	}
	if rs == nil {
		rs = []PaymentRun{}
	}
	return payablesv1.PaymentRunList{PaymentRuns: rs}, nil
}

// Get reads one run with its items.
func (p *PaymentRuns) Get(ctx context.Context, tenantID, id string) (PaymentRun, error) {
	if !ValidID(id) {
		return PaymentRun{}, runNotFound(id)
	}
	f, err := p.store.PaymentRun(ctx, tenantID, id)
	if err != nil {
		return PaymentRun{}, err
	}
	return f.Run, nil
}

// Create checks a new run, asks the bank service for the account paid
// from and identity for the company holding it, and stores the run in
// draft with one credit transfer per invoice.
func (p *PaymentRuns) Create(ctx context.Context, tenantID string, by Actor, in payablesv1.PaymentRunInput) (PaymentRun, error) {
	r, err := CheckRunInput(in, p.today())
	if err != nil {
		return PaymentRun{}, err
	}
	r.CreatedBy = by.ID
	// The peers are asked before any row is locked: no lock waits on
	// another service.
	acct, err := p.banks.Account(ctx, tenantID, r.BankAccountID)
	if e := errs.As(err); e != nil && e.Code == errs.NotFound {
		return PaymentRun{}, &errs.Error{Code: errs.BankAccountNotFound, Message: "bank account " + r.BankAccountID + " not found",
			Details: []errs.Detail{errs.Field("bank_account_id", "no bank account of the tenant has this id")}, Err: err}
	}
	if err != nil {
		return PaymentRun{}, errs.Wrap("payables.CreatePaymentRun: bank", err)
	}
	if acct.Currency != "" && acct.Currency != "EUR" {
		return PaymentRun{}, errs.Invalid("invalid payment run", errs.Field("bank_account_id", "a EUR account: SEPA credit transfers are in EUR, the account is in "+acct.Currency))
	}
	if err := sepa.ValidIBAN(acct.IBAN); err != nil {
		return PaymentRun{}, errs.Invalid("invalid payment run", errs.Field("bank_account_id", "the account's IBAN "+acct.IBAN+" cannot send SEPA transfers: "+err.Error()))
	}
	t, err := p.tenants.Tenant(ctx, tenantID)
	if err != nil {
		return PaymentRun{}, errs.Wrap("payables.CreatePaymentRun: tenant", err)
	}
	r.Debtor = Debtor{Name: strings.TrimSpace(t.CompanyName), IBAN: acct.IBAN, BIC: acct.BIC,
		Address: payablesv1.Address{Street: t.Address.Street, Zip: t.Address.Zip, City: t.Address.City, Country: t.Address.Country}}
	if r.Debtor.Name == "" {
		r.Debtor.Name = acct.Name
	}
	r.ID = uuid.NewString()
	return p.store.CreatePaymentRun(ctx, tenantID, r, func(invs []OpenInvoice) ([]RunItem, error) {
		items, err := PlanItems(r.ExecutionDate, r.InvoiceIDs, invs)
		if err != nil {
			return nil, err
		}
		// The file is written once now and thrown away, so that a run
		// that is created can be exported: what the bank would refuse
		// (a vendor's name with no letter of the SEPA set) is refused
		// here, naming the transfer.
		run := PaymentRun{ID: r.ID, ExecutionDate: r.ExecutionDate.Format(time.DateOnly)}
		if _, err := PainFile(RunFile{Run: run, Debtor: r.Debtor, Items: items}, p.now()); err != nil {
			return nil, byInvoice(err)
		}
		return items, nil
	})
}

// Approve releases a draft run for export (draft -> approved). Approving
// needs kreditoren:review, a scope apart from the kreditoren:write that
// creates a run, and someone other than who prepared it: the four-eyes
// principle of paying suppliers. The tenant's owner (the admin scope) may
// release their own run: a business of one has nobody else.
func (p *PaymentRuns) Approve(ctx context.Context, tenantID, id string, by Actor) (PaymentRun, error) {
	f, err := p.change(ctx, tenantID, id, func(f RunFile) (Transition, error) {
		t, err := p.step(f, "approve", payablesv1.RunApproved, payablesv1.RunDraft)
		if err != nil {
			return t, err
		}
		if c := f.Run.CreatedBy; c != nil && *c == by.ID && !by.Owner {
			return Transition{}, errs.E(errs.Forbidden,
				"payment run %s was prepared by the same %s; four eyes: someone else (with kreditoren:review) or the tenant's admin releases it",
				f.Run.ID, strings.SplitN(by.ID, ":", 2)[0])
		}
		t.By = by.ID
		return t, nil
	})
	return f.Run, err
}

// Export writes the pain.001.001.09 file of an approved run (approved ->
// exported) and stores it; exporting an exported run again answers the
// stored file, byte for byte.
func (p *PaymentRuns) Export(ctx context.Context, tenantID, id string) ([]byte, PaymentRun, error) {
	f, err := p.change(ctx, tenantID, id, func(f RunFile) (Transition, error) {
		if f.Run.Status == payablesv1.RunExported {
			return Transition{To: payablesv1.RunExported}, nil
		}
		t, err := p.step(f, "export", payablesv1.RunExported, payablesv1.RunApproved)
		if err != nil {
			return t, err
		}
		if t.PainXML, err = PainFile(f, t.At); err != nil {
			return Transition{}, fmt.Errorf("payables.Export: %w", err)
		}
		return t, nil
	})
	return f.PainXML, f.Run, err
}

// Complete records that the bank executed an exported run (exported ->
// completed): its invoices stay with it, so no other run pays them
// again; they count as paid once the bank statement's transfers are
// reconciled with them (the bank's events), as any payment does.
func (p *PaymentRuns) Complete(ctx context.Context, tenantID, id string) (PaymentRun, error) {
	f, err := p.change(ctx, tenantID, id, func(f RunFile) (Transition, error) {
		return p.step(f, "complete", payablesv1.RunCompleted, payablesv1.RunExported)
	})
	return f.Run, err
}

// Cancel cancels a draft, approved or exported run; its invoices may go
// into another run. (An exported file the bank already has must be
// withdrawn there as well.)
func (p *PaymentRuns) Cancel(ctx context.Context, tenantID, id string) (PaymentRun, error) {
	f, err := p.change(ctx, tenantID, id, func(f RunFile) (Transition, error) {
		return p.step(f, "cancel", payablesv1.RunCancelled, payablesv1.RunDraft, payablesv1.RunApproved, payablesv1.RunExported)
	})
	return f.Run, err
}

// Return records that the bank sent the transfer of one invoice of a
// completed run back (a closed account, a wrong IBAN): the run keeps the
// item with the return, and the invoice may go into another run. What is
// paid stays the bank's to say, as always: the transfer and its return on
// the statement, reconciled, net out.
func (p *PaymentRuns) Return(ctx context.Context, tenantID, id string, in payablesv1.PaymentRunReturn) (PaymentRun, error) {
	if !ValidID(id) {
		return PaymentRun{}, runNotFound(id)
	}
	var details []errs.Detail
	if !ValidID(in.InvoiceID) {
		details = append(details, errs.Field("invoice_id", "required: the id (UUID) of an invoice of the run"))
	}
	var reason *string
	if in.Reason != nil {
		r := strings.TrimSpace(*in.Reason)
		if r == "" || utf8.RuneCountInString(r) > MaxReturnReasonLength {
			details = append(details, errs.Field("reason", fmt.Sprintf("1 to %d characters", MaxReturnReasonLength)))
		}
		reason = &r
	}
	if len(details) > 0 {
		return PaymentRun{}, errs.Invalid("invalid return of a transfer", details...)
	}
	at := p.now().UTC().Truncate(time.Microsecond)
	f, err := p.store.ReturnPaymentRunItem(ctx, tenantID, id, in.InvoiceID, reason, at, func(f RunFile) error {
		if f.Run.Status != payablesv1.RunCompleted {
			return &errs.Error{Code: errs.InvalidStateTransition,
				Message: fmt.Sprintf("payment run %s is %s; only the transfers of a completed run can come back (a run the bank has not executed is cancelled instead)", f.Run.ID, f.Run.Status),
				Details: []errs.Detail{errs.Field("status", f.Run.Status)}}
		}
		for _, it := range f.Items {
			if it.InvoiceID != in.InvoiceID {
				continue
			}
			if it.ReturnedAt != nil {
				return errs.E(errs.Conflict, "the transfer of invoice %s was recorded as returned on %s", it.InvoiceNumber, it.ReturnedAt.Format(time.RFC3339))
			}
			return nil
		}
		return errs.NotFoundf("invoice %s is not in payment run %s", in.InvoiceID, f.Run.ID)
	})
	return f.Run, err
}

func (p *PaymentRuns) change(ctx context.Context, tenantID, id string, decide func(RunFile) (Transition, error)) (RunFile, error) {
	if !ValidID(id) {
		return RunFile{}, runNotFound(id)
	}
	return p.store.ChangePaymentRun(ctx, tenantID, id, decide)
}

// step is the transition to to from one of the statuses from, now;
// INVALID_STATE_TRANSITION from any other.
func (p *PaymentRuns) step(f RunFile, action, to string, from ...string) (Transition, error) {
	if !slices.Contains(from, f.Run.Status) {
		return Transition{}, &errs.Error{Code: errs.InvalidStateTransition,
			Message: fmt.Sprintf("payment run %s is %s; only a run that is %s can be %s", f.Run.ID, f.Run.Status, strings.Join(from, " or "), pastOf[action]),
			Details: []errs.Detail{errs.Field("status", f.Run.Status)}}
	}
	// Whole microseconds: the time stored is the time in the file.
	return Transition{To: to, At: p.now().UTC().Truncate(time.Microsecond)}, nil
}

var pastOf = map[string]string{"approve": "approved", "export": "exported", "complete": "completed", "cancel": "cancelled"}

// today is the current date in Germany, where the runs are executed.
func (p *PaymentRuns) today() time.Time {
	n := p.now().In(berlin)
	return time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC)
}

// CheckRunInput validates a new run, naming every field at fault; today
// is the first execution date allowed.
func CheckRunInput(in payablesv1.PaymentRunInput, today time.Time) (NewRun, error) {
	var c checker
	r := NewRun{BankAccountID: strings.ToLower(strings.TrimSpace(in.BankAccountID))}
	switch {
	case r.BankAccountID == "":
		c.bad("bank_account_id", "required")
	case !ValidID(r.BankAccountID):
		c.bad("bank_account_id", "a UUID")
	}
	switch d, err := time.Parse(time.DateOnly, in.ExecutionDate); {
	case in.ExecutionDate == "":
		c.bad("execution_date", "required")
	case err != nil:
		c.bad("execution_date", "a date YYYY-MM-DD")
	case d.Before(today):
		c.bad("execution_date", "not in the past (today is "+today.Format(time.DateOnly)+")")
	default:
		r.ExecutionDate = d
	}
	switch {
	case len(in.InvoiceIDs) == 0:
		c.bad("invoice_ids", "required: at least one invoice id")
	case len(in.InvoiceIDs) > MaxRunInvoices:
		c.bad("invoice_ids", "at most "+strconv.Itoa(MaxRunInvoices)+" invoices per run")
	default:
		seen := map[string]bool{}
		for i, id := range in.InvoiceIDs {
			f := "invoice_ids[" + strconv.Itoa(i) + "]"
			id = strings.ToLower(strings.TrimSpace(id))
			switch {
			case !ValidID(id):
				c.bad(f, "a UUID")
			case seen[id]:
				c.bad(f, "given twice")
			}
			seen[id] = true
			r.InvoiceIDs = append(r.InvoiceIDs, id)
		}
	}
	if in.Label != nil {
		if l := strings.TrimSpace(*in.Label); l != "" {
			switch {
			case utf8.RuneCountInString(l) > MaxLabelLength:
				c.bad("label", "at most 140 characters")
			case strings.ContainsFunc(l, unicode.IsControl):
				c.bad("label", "no control characters")
			}
			r.Label = &l
		}
	}
	if err := c.err("invalid payment run"); err != nil {
		return NewRun{}, err
	}
	return r, nil
}

// byInvoice names the transfers a file refused by the invoices they pay:
// transfer i pays invoice_ids[i].
func byInvoice(err error) error {
	e := errs.As(err)
	if e == nil || e.Code != errs.InvalidInput {
		return err
	}
	out := &errs.Error{Code: e.Code, Message: "the invoices cannot all be paid by SEPA credit transfer", Err: err}
	for _, d := range e.Details {
		if rest, ok := strings.CutPrefix(d.Field, "transfers["); ok {
			if n, _, ok := strings.Cut(rest, "]"); ok {
				d = errs.Field("invoice_ids["+n+"]", d.Issue)
			}
		}
		out.Details = append(out.Details, d)
	}
	return out
}

// PlanItems is one credit transfer per requested invoice, in the order
// requested: what is still open of the invoice less the cash discount
// still open at the execution date. An id without an open posted invoice
// of the tenant is INVOICE_NOT_FOUND; a vendor without a valid SEPA IBAN
// is VENDOR_IBAN_MISSING, naming every such vendor.
func PlanItems(execution time.Time, ids []string, invs []OpenInvoice) ([]RunItem, error) {
	byID := map[string]OpenInvoice{}
	for _, inv := range invs {
		byID[inv.ID] = inv
	}
	var missing, noIBAN, notEUR []errs.Detail
	ibanVendors := map[string]bool{}
	items := make([]RunItem, 0, len(ids))
	for i, id := range ids {
		f := "invoice_ids[" + strconv.Itoa(i) + "]"
		inv, ok := byID[id]
		if !ok || inv.State != "posted" || !inv.Gross.GreaterThan(inv.Paid.Decimal) {
			missing = append(missing, errs.Field(f, "no open posted invoice "+id))
			continue
		}
		if inv.Currency != "EUR" {
			notEUR = append(notEUR, errs.Field(f, "invoice "+inv.InvoiceNumber+" is in "+inv.Currency+"; SEPA credit transfers are in EUR"))
			continue
		}
		if inv.VendorIBAN == nil || sepa.ValidIBAN(*inv.VendorIBAN) != nil {
			if !ibanVendors[inv.VendorID] {
				ibanVendors[inv.VendorID] = true
				issue := "vendor " + inv.VendorName + " (" + inv.VendorID + ") has no IBAN"
				if inv.VendorIBAN != nil {
					issue = "vendor " + inv.VendorName + " (" + inv.VendorID + ") has no valid SEPA IBAN: " + sepa.ValidIBAN(*inv.VendorIBAN).Error()
				}
				noIBAN = append(noIBAN, errs.Field(f, issue))
			}
			continue
		}
		open := inv.Gross.Sub(inv.Paid)
		discount := Discount(open, inv.DiscountRate, inv.DiscountUntil, execution)
		items = append(items, RunItem{PaymentRunItem: payablesv1.PaymentRunItem{
			InvoiceID: inv.ID, VendorID: inv.VendorID, VendorName: inv.VendorName, InvoiceNumber: inv.InvoiceNumber,
			IBAN: *inv.VendorIBAN, BIC: inv.VendorBIC, Amount: open.Sub(discount), Discount: discount,
			Remittance: sepa.Remittance([]string{inv.InvoiceNumber}),
			// The invoice's id identifies the transfer end to end: unique,
			// 32 characters of the SEPA set, and found again in the
			// statement when the payment comes back.
			EndToEndID: strings.ReplaceAll(inv.ID, "-", ""),
		}, Address: inv.VendorAddress})
	}
	switch {
	case len(missing) > 0:
		return nil, &errs.Error{Code: errs.InvoiceNotFound, Message: fmt.Sprintf("%d of the invoices are not open posted invoices of the tenant", len(missing)), Details: missing}
	case len(notEUR) > 0:
		return nil, errs.Invalid("invalid payment run", notEUR...)
	case len(noIBAN) > 0:
		return nil, &errs.Error{Code: errs.VendorIBANMissing, Message: fmt.Sprintf("%d vendors of the invoices have no valid IBAN to pay to", len(noIBAN)), Details: noIBAN}
	}
	return items, nil
}

// Discount is the cash discount (Skonto) kept of open when paid on
// execution: rate percent of it, to the cent (half away from zero), if
// execution is on or before until; zero otherwise.
func Discount(open money.Amount, rate *decimal.Decimal, until *time.Time, execution time.Time) money.Amount {
	if rate == nil || until == nil || execution.After(*until) || !rate.IsPositive() {
		return money.Zero
	}
	return money.New(open.Mul(*rate).Div(decimal.NewFromInt(100)).Round(2))
}

// PainFile is the pain.001.001.09 file of a run, created at: the debtor
// account and company, one credit transfer per item on the execution
// date, remittance information the invoice number.
func PainFile(f RunFile, at time.Time) ([]byte, error) {
	exec, err := time.Parse(time.DateOnly, f.Run.ExecutionDate)
	if err != nil {
		return nil, fmt.Errorf("payables.PainFile: execution date %q: %w", f.Run.ExecutionDate, err)
	}
	debit := sepa.Account{IBAN: f.Debtor.IBAN, BIC: deref(f.Debtor.BIC)}
	p := sepa.Payment{MsgID: strings.ReplaceAll(f.Run.ID, "-", ""), CreatedAt: at,
		Debtor: sepa.Party{Name: f.Debtor.Name, Address: sepaAddress(f.Debtor.Address, f.Debtor.IBAN)}}
	for _, it := range f.Items {
		p.Transfers = append(p.Transfers, sepa.Transfer{ExecutionDate: exec, DebtorAccount: debit, EndToEndID: it.EndToEndID,
			Amount: it.Amount.Decimal, Creditor: sepa.Party{Name: it.VendorName, Address: sepaAddress(it.Address, it.IBAN)},
			CreditorAccount: sepa.Account{IBAN: it.IBAN, BIC: deref(it.BIC)}, InvoiceNumbers: []string{it.InvoiceNumber}})
	}
	return sepa.CreditTransfer(p)
}

// sepaAddress is a structured address for the file: none without a town
// (a structured address needs one; within the EEA none is needed), the
// IBAN's country when the address names none.
func sepaAddress(a payablesv1.Address, iban string) sepa.Address {
	if strings.TrimSpace(a.City) == "" {
		return sepa.Address{}
	}
	country := a.Country
	if country == "" && len(iban) >= 2 {
		country = iban[:2]
	}
	return sepa.Address{Street: a.Street, PostCode: a.Zip, Town: a.City, Country: country}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func runNotFound(id string) error { return errs.NotFoundf("payment run %s not found", id) }
