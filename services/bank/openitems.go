package bank

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Open items come from the ledger itself (issue 10): the bank projects the
// ledger's intent_posted events, so it can suggest and reconcile before a
// payables or receivables service exists.

// Directions of an open item, as the bank sees the money move.
const (
	// Receivable: the party owes the tenant; the money will come in.
	Receivable = "receivable"
	// Payable: the tenant owes the party; the money will go out.
	Payable = "payable"
)

// Parties of an open-item account.
const (
	Debtor   = "debtor"
	Creditor = "creditor"
)

// OpenItem is what one intent left open on one receivable or payable
// account. OpenAmount is OriginalAmount less what reconciliation has
// allocated to it; both are positive, the sign being in Direction.
type OpenItem struct {
	IntentID          string
	AccountNumber     string
	Party             string // Debtor or Creditor
	Direction         string // Receivable or Payable
	BookingDate       string // YYYY-MM-DD
	Description       string
	ExternalReference *string // the invoice number, when the booking names one
	JournalNumber     int64   // the intent's first journal number, for a stable order
	OriginalAmount    money.Amount
	OpenAmount        money.Amount
	// Currency is the document currency: EUR, or the fx_currency that
	// every line of the intent on the account carries. OriginalDocAmount
	// is the amount in it (nil for EUR), AllocatedDocAmount what match
	// groups have settled of it.
	Currency           string
	OriginalDocAmount  *money.Amount
	AllocatedDocAmount money.Amount
	// TaxSplit is the item's composition by tax code, nil when no part of
	// it is tax: a cash discount on the item corrects the VAT by it.
	TaxSplit []TaxPart
}

// TaxPart is the part of an open item booked under one tax code (""
// for untaxed lines): Gross is net plus tax, Tax the part booked against
// VATAccount. Amounts are EUR and positive in the item's direction.
type TaxPart struct {
	TaxCode    string       `json:"tax_code"`
	Gross      money.Amount `json:"gross"`
	Tax        money.Amount `json:"tax"`
	VATAccount string       `json:"vat_account,omitempty"`
}

// VATAccount reports whether an SKR04 account holds VAT: input tax
// (Vorsteuer) 1400-1439, output tax (Umsatzsteuer) 3800-3869. The bank
// does not know the tenant's tax codes; a taxed line's tax part is the
// event with the line's tax code whose other side is such an account (the
// ledger books it there, see ledger.expandLine).
func VATAccount(account string) bool {
	n, ok := accountNumber(account)
	return ok && len(account) == 4 && (n >= 1400 && n <= 1439 || n >= 3800 && n <= 3869)
}

// LedgerBooking is one intent's net movement on a liquid-funds account,
// signed as the bank sees it: positive is money in (a debit of the
// account), negative money out. Those on a bank account's linked ledger
// account that no bank transaction explains yet are the bank_booking
// candidates of reconciliation.
type LedgerBooking struct {
	IntentID          string
	AccountNumber     string
	BookingDate       string
	Description       string
	ExternalReference *string
	JournalNumber     int64
	Amount            money.Amount
}

// PostedIntent is a consumed intent_posted event with its id, which the
// inbox records so a redelivery changes nothing.
type PostedIntent struct {
	EventID string
	Intent  ledgerv1.IntentPosted
}

// Projection is what one intent_posted event does to the projection: a
// reversal only cancels the intent it reverses (its mirrored lines would
// otherwise open the opposite item); any other intent adds its items and
// bookings.
type Projection struct {
	IntentID string
	Reverses string
	Items    []OpenItem
	Bookings []LedgerBooking
}

// ClearingSource is the source of the clearing bookings the bank posts.
const ClearingSource = "bank"

// ErrMalformedEvent marks an intent_posted event that can never be
// projected; redelivering it cannot help.
var ErrMalformedEvent = errors.New("malformed intent_posted event")

// OpenItemParty says whether an SKR04 account holds open items and whose:
// trade receivables 1200-1299 and debtors' personal accounts 10000-69999
// are Debtor, trade payables 3300-3399 and creditors' personal accounts
// 70000-99999 Creditor.
func OpenItemParty(account string) (string, bool) {
	n, ok := accountNumber(account)
	if !ok {
		return "", false
	}
	switch {
	case len(account) == 4 && n >= 1200 && n <= 1299, len(account) == 5 && n >= 10000 && n <= 69999:
		return Debtor, true
	case len(account) == 4 && n >= 3300 && n <= 3399, len(account) == 5 && n >= 70000 && n <= 99999:
		return Creditor, true
	}
	return "", false
}

// LiquidFunds reports whether an SKR04 account is cash or bank (1550-1899,
// balance sheet item B.IV). Money on such an account has moved already: a
// line between it and a receivable or payable account is a payment, not
// an open item, and the bank records it as a booking instead.
func LiquidFunds(account string) bool {
	n, ok := accountNumber(account)
	return ok && len(account) == 4 && n >= 1550 && n <= 1899
}

func accountNumber(s string) (int, bool) {
	if s == "" || len(s) > 8 {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Project is the projection of one intent_posted event. settlement says
// which accounts money moves through (LiquidFunds, and the accounts linked
// to the tenant's bank accounts); nil means LiquidFunds.
//
// Per intent and account it nets the lines: on an open-item account, the
// lines against anything but a settlement account (a taxed invoice puts
// its net and its tax on the receivable: both count) make one item whose
// sign gives its direction: a debit balance is receivable (an outgoing
// invoice, or a supplier's credit note), a credit balance payable. On a
// settlement account the net of all lines is the booking. Accounts that
// net to zero leave nothing.
func Project(ev ledgerv1.IntentPosted, settlement func(string) bool) (Projection, error) {
	if err := checkIntent(ev); err != nil {
		return Projection{}, err
	}
	if settlement == nil {
		settlement = LiquidFunds
	}
	p := Projection{IntentID: ev.IntentID, Reverses: ev.Reverses}
	if ev.Reverses != "" {
		return p, nil
	}
	type sum struct {
		amount money.Amount
		ref    *string
		// Document currency: currency of the first line, fx its signed sum;
		// mixed once a line has another currency or none.
		currency string
		fx       money.Amount
		mixed    bool
		lines    int
		taxOrder []string
		taxes    map[string]*TaxPart // signed, by tax code
	}
	var itemOrder, bookingOrder []string
	items, bookings := map[string]*sum{}, map[string]*sum{}
	add := func(m map[string]*sum, order *[]string, account string, amt money.Amount, ref *string) *sum {
		s, ok := m[account]
		if !ok {
			s = &sum{amount: money.Zero, fx: money.Zero, taxes: map[string]*TaxPart{}}
			m[account] = s
			*order = append(*order, account)
		}
		s.amount = s.amount.Add(amt)
		if s.ref == nil && ref != nil && *ref != "" {
			r := *ref
			s.ref = &r
		}
		return s
	}
	// item adds a line's share to the item on account: its amount, its
	// foreign-currency amount and its tax part; other is the line's other
	// account, sign +1 for a debit of account, -1 for a credit.
	item := func(account, other string, l ledgerv1.EventLine, amt money.Amount, neg bool) {
		signed := amt
		if neg {
			signed = amt.Neg()
		}
		s := add(items, &itemOrder, account, signed, l.ExternalReference)
		s.lines++
		var fx money.Amount
		var fxOK bool
		if l.FXCurrency != nil && l.FXAmount != nil {
			if a, err := money.Parse(*l.FXAmount); err == nil && a.IsPositive() && a.Places() <= 2 {
				fx, fxOK = a, true
			}
		}
		switch {
		case !fxOK || *l.FXCurrency == DefaultCurrency:
			s.mixed = true
		case s.lines == 1:
			s.currency = *l.FXCurrency
		case s.currency != *l.FXCurrency:
			s.mixed = true
		}
		if fxOK {
			if neg {
				fx = fx.Neg()
			}
			s.fx = s.fx.Add(fx)
		}
		code := ""
		if l.TaxCode != nil {
			code = *l.TaxCode
		}
		p, ok := s.taxes[code]
		if !ok {
			p = &TaxPart{TaxCode: code, Gross: money.Zero, Tax: money.Zero}
			s.taxes[code] = p
			s.taxOrder = append(s.taxOrder, code)
		}
		p.Gross = p.Gross.Add(signed)
		if code != "" && VATAccount(other) {
			p.Tax, p.VATAccount = p.Tax.Add(signed), other
		}
	}
	for _, l := range ev.Events {
		amt, _ := money.Parse(l.Amount) // checked by checkIntent
		d, c := l.AccountDebit, l.AccountCredit
		sd, sc := settlement(d), settlement(c)
		if sd {
			add(bookings, &bookingOrder, d, amt, l.ExternalReference)
		}
		if sc {
			add(bookings, &bookingOrder, c, amt.Neg(), l.ExternalReference)
		}
		if ev.Source == ClearingSource {
			// The bank's own clearing booking settles items and opens none:
			// a match group's discount, fee or FX line against the item's
			// account is part of the settlement, not a new item.
			continue
		}
		if _, ok := OpenItemParty(d); ok && !sc {
			item(d, c, l, amt, false)
		}
		if _, ok := OpenItemParty(c); ok && !sd {
			item(c, d, l, amt, true)
		}
	}
	desc := ev.Description
	if desc == "" && len(ev.Events) > 0 {
		desc = ev.Events[0].Description
	}
	for _, account := range itemOrder {
		s := items[account]
		if s.amount.IsZero() {
			continue
		}
		party, _ := OpenItemParty(account)
		it := OpenItem{IntentID: ev.IntentID, AccountNumber: account, Party: party, Direction: Receivable, BookingDate: ev.BookingDate,
			Description: desc, ExternalReference: s.ref, JournalNumber: ev.FirstNumber, OriginalAmount: s.amount}
		neg := s.amount.IsNegative()
		if neg {
			it.Direction, it.OriginalAmount = Payable, s.amount.Neg()
		}
		it.OpenAmount = it.OriginalAmount
		it.Currency = DefaultCurrency
		// A document currency only when every line on the account is in
		// it and its amount moves the same way as the EUR amount; anything
		// else (an FX invoice with a VAT line, which the ledger books in
		// EUR) is an EUR item.
		if fx := s.fx; !s.mixed && s.currency != "" && !fx.IsZero() && fx.IsNegative() == neg {
			if neg {
				fx = fx.Neg()
			}
			it.Currency, it.OriginalDocAmount = s.currency, &fx
		}
		taxed := false
		var split []TaxPart
		for _, code := range s.taxOrder {
			p := *s.taxes[code]
			if neg {
				p.Gross, p.Tax = p.Gross.Neg(), p.Tax.Neg()
			}
			if p.Gross.IsZero() {
				continue
			}
			taxed = taxed || !p.Tax.IsZero()
			split = append(split, p)
		}
		if taxed {
			it.TaxSplit = split
		}
		p.Items = append(p.Items, it)
	}
	for _, account := range bookingOrder {
		s := bookings[account]
		if s.amount.IsZero() {
			continue
		}
		p.Bookings = append(p.Bookings, LedgerBooking{IntentID: ev.IntentID, AccountNumber: account, BookingDate: ev.BookingDate,
			Description: desc, ExternalReference: s.ref, JournalNumber: ev.FirstNumber, Amount: s.amount})
	}
	return p, nil
}

// checkIntent refuses an event the projection cannot key or sum.
func checkIntent(ev ledgerv1.IntentPosted) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: intent %q: %s", ErrMalformedEvent, ev.IntentID, fmt.Sprintf(format, args...))
	}
	switch {
	case !ValidID(ev.TenantID):
		return bad("tenant_id %q is no UUID", ev.TenantID)
	case !ValidID(ev.IntentID):
		return bad("intent_id is no UUID")
	case ev.Reverses != "" && !ValidID(ev.Reverses):
		return bad("reverses %q is no UUID", ev.Reverses)
	}
	if _, err := time.Parse(time.DateOnly, ev.BookingDate); err != nil {
		return bad("booking_date %q is no date", ev.BookingDate)
	}
	for i, l := range ev.Events {
		amt, err := money.Parse(l.Amount)
		if err != nil || amt.IsNegative() || amt.Places() > 2 {
			return bad("line %d: amount %q is no amount of cents", i, l.Amount)
		}
		if _, ok := accountNumber(l.AccountDebit); !ok {
			return bad("line %d: account_debit %q", i, l.AccountDebit)
		}
		if _, ok := accountNumber(l.AccountCredit); !ok {
			return bad("line %d: account_credit %q", i, l.AccountCredit)
		}
	}
	return nil
}

// OpenItemStore keeps the projection; postgres.Store implements it.
type OpenItemStore interface {
	// ApplyIntents projects the events of one tenant in the order given,
	// in one transaction, skipping those the inbox has seen.
	ApplyIntents(ctx context.Context, tenantID string, evs []PostedIntent) error
	// OpenItems lists the tenant's items with an amount still open and
	// not reversed, oldest first; direction "" is both.
	OpenItems(ctx context.Context, tenantID, direction string) ([]OpenItem, error)
	// BankBookings lists the bookings on the linked ledger account of a
	// bank account that are not reversed and that no bank transaction
	// explains yet, oldest first; an unknown bank account is NOT_FOUND.
	BankBookings(ctx context.Context, tenantID, bankAccountID string) ([]LedgerBooking, error)
}

// OpenItems is the open-items projection and its read side.
type OpenItems struct{ store OpenItemStore }

// NewOpenItems returns the projection on store.
func NewOpenItems(store OpenItemStore) *OpenItems { return &OpenItems{store: store} }

// Apply projects a tenant's intent_posted events, in stream order. An
// event that can never be projected is ErrMalformedEvent and nothing of
// the call is applied.
func (o *OpenItems) Apply(ctx context.Context, tenantID string, evs ...PostedIntent) error {
	for _, e := range evs {
		if e.EventID == "" {
			return fmt.Errorf("%w: intent %q: no event id", ErrMalformedEvent, e.Intent.IntentID)
		}
		if e.Intent.TenantID != tenantID {
			return fmt.Errorf("%w: intent %q of tenant %q among tenant %q's", ErrMalformedEvent, e.Intent.IntentID, e.Intent.TenantID, tenantID)
		}
		if err := checkIntent(e.Intent); err != nil {
			return err
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return o.store.ApplyIntents(ctx, tenantID, evs)
}

// List reads the tenant's open items, oldest first; direction is
// Receivable, Payable or "" for both.
func (o *OpenItems) List(ctx context.Context, tenantID, direction string) ([]OpenItem, error) {
	switch direction {
	case "", Receivable, Payable:
	default:
		return nil, errs.Invalid("invalid direction", errs.Field("direction", "receivable or payable"))
	}
	return o.store.OpenItems(ctx, tenantID, direction)
}

// BankBookings reads the bank_booking candidates of one of the tenant's
// bank accounts: ledger bookings on its linked account that no bank
// transaction explains yet.
func (o *OpenItems) BankBookings(ctx context.Context, tenantID, bankAccountID string) ([]LedgerBooking, error) {
	if !ValidID(bankAccountID) {
		return nil, notFound(bankAccountID)
	}
	return o.store.BankBookings(ctx, tenantID, bankAccountID)
}
