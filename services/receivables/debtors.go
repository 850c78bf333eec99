package receivables

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/contracts/receivablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Limits and defaults of a debtor's fields.
const (
	MaxNameLength       = 255
	MaxStreetLength     = 255
	MaxZipLength        = 16
	MaxCityLength       = 255
	MaxEmailLength      = 254 // RFC 5321's path limit less the angle brackets
	MaxTermDays         = 365
	DefaultCountry      = "DE"
	DefaultPaymentDays  = 14
	DefaultAccount      = "1200" // SKR04 Forderungen aus Lieferungen und Leistungen
	DefaultDebtorsLimit = 100
	MaxDebtorsLimit     = 500
	MaxSearchLength     = 100
)

var (
	customerNumberRe = regexp.MustCompile(`^[A-Za-z0-9_/.-]{1,20}$`)
	accountNumberRe  = regexp.MustCompile(`^[0-9]{1,8}$`)
	// emailRe is a sane address, not all RFC 5322 allows: an ASCII local
	// part without quotes and a domain of at least two labels (an
	// internationalised domain in its xn-- form).
	emailRe = regexp.MustCompile(`^[A-Za-z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]{1,64}@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}$`)
	hundred = decimal.NewFromInt(100)
)

// CheckDebtorInput validates and normalises a new debtor, naming every
// field at fault; omitted fields take their defaults.
func CheckDebtorInput(in receivablesv1.DebtorInput) (Debtor, error) {
	d := Debtor{Name: strings.TrimSpace(in.Name), ReceivableAccount: DefaultAccount, IsActive: true,
		Address:      receivablesv1.Address{Country: DefaultCountry},
		PaymentTerms: receivablesv1.PaymentTerms{Days: DefaultPaymentDays, CashDiscountRate: money.Zero}}
	var c checker
	if in.CustomerNumber != nil {
		d.CustomerNumber = c.customerNumber(*in.CustomerNumber)
	}
	c.text("name", d.Name, MaxNameLength, true)
	if in.Address == nil {
		c.bad("address", "required: street, zip and city of the debtor's invoice address")
	} else {
		for _, f := range []struct {
			name string
			v    *string
		}{{"street", in.Address.Street}, {"zip", in.Address.Zip}, {"city", in.Address.City}} {
			if f.v == nil {
				c.bad("address."+f.name, "required")
			}
		}
		d.Address = c.address(d.Address, in.Address)
	}
	d.VATID = c.vatID(in.VATID)
	d.Email = c.email(in.Email)
	d.LeitwegID = c.leitwegID(in.LeitwegID)
	if in.PaymentTerms != nil {
		d.PaymentTerms = c.terms(d.PaymentTerms, in.PaymentTerms, true)
	}
	if in.ReceivableAccount != nil {
		d.ReceivableAccount = c.account(*in.ReceivableAccount)
	}
	if err := c.err("invalid debtor"); err != nil {
		return Debtor{}, err
	}
	return d, nil
}

// DebtorPatch is a checked change of a debtor: nil leaves a field as it
// is; an empty VATID, Email or LeitwegID removes it.
type DebtorPatch struct {
	CustomerNumber, Name, VATID, Email, LeitwegID, ReceivableAccount *string
	Address                                                          *receivablesv1.AddressInput
	PaymentTerms                                                     *receivablesv1.PaymentTermsInput
	IsActive                                                         *bool
}

// CheckDebtorUpdate validates and normalises the fields a change gives;
// the rules that need the current debtor (Skonto days below the payment
// days) are Apply's.
func CheckDebtorUpdate(in receivablesv1.DebtorUpdate) (DebtorPatch, error) {
	p := DebtorPatch{Address: in.Address, PaymentTerms: in.PaymentTerms, IsActive: in.IsActive}
	var c checker
	if in.CustomerNumber != nil {
		n := c.customerNumber(*in.CustomerNumber)
		p.CustomerNumber = &n
	}
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		c.text("name", n, MaxNameLength, true)
		p.Name = &n
	}
	if in.Address != nil {
		a := c.address(receivablesv1.Address{}, in.Address)
		p.Address = &receivablesv1.AddressInput{}
		if in.Address.Street != nil {
			p.Address.Street = &a.Street
		}
		if in.Address.Zip != nil {
			p.Address.Zip = &a.Zip
		}
		if in.Address.City != nil {
			p.Address.City = &a.City
		}
		if in.Address.Country != nil {
			p.Address.Country = &a.Country
		}
	}
	// An empty text removes the optional field: emptied is "" then.
	emptied := func(v *string, check func(*string) *string) *string {
		if v == nil {
			return nil
		}
		if s := check(v); s != nil {
			return s
		}
		return new(string)
	}
	p.VATID = emptied(in.VATID, c.vatID)
	p.Email = emptied(in.Email, c.email)
	p.LeitwegID = emptied(in.LeitwegID, c.leitwegID)
	if in.PaymentTerms != nil {
		c.terms(receivablesv1.PaymentTerms{CashDiscountRate: money.Zero}, in.PaymentTerms, false)
	}
	if in.ReceivableAccount != nil {
		a := c.account(*in.ReceivableAccount)
		p.ReceivableAccount = &a
	}
	if err := c.err("invalid debtor change; nothing was changed"); err != nil {
		return DebtorPatch{}, err
	}
	return p, nil
}

// Apply returns cur changed by p: NO_CHANGES when no given field differs
// from cur, INVALID_INPUT when the payment terms it leaves break a rule.
func (p DebtorPatch) Apply(cur Debtor) (Debtor, error) {
	next := cur
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	optional := func(dst **string, v *string) {
		switch {
		case v == nil:
		case *v == "":
			*dst = nil
		default:
			*dst = v
		}
	}
	set(&next.CustomerNumber, p.CustomerNumber)
	set(&next.Name, p.Name)
	if p.Address != nil {
		set(&next.Address.Street, p.Address.Street)
		set(&next.Address.Zip, p.Address.Zip)
		set(&next.Address.City, p.Address.City)
		set(&next.Address.Country, p.Address.Country)
	}
	optional(&next.VATID, p.VATID)
	optional(&next.Email, p.Email)
	optional(&next.LeitwegID, p.LeitwegID)
	set(&next.ReceivableAccount, p.ReceivableAccount)
	if p.IsActive != nil {
		next.IsActive = *p.IsActive
	}
	var c checker
	if p.PaymentTerms != nil {
		next.PaymentTerms = c.terms(cur.PaymentTerms, p.PaymentTerms, true)
	}
	if Same(cur, next) {
		return cur, errs.E(errs.NoChanges, "the request changes nothing: no field was given or every value equals the current one")
	}
	if err := c.err("invalid debtor change; nothing was changed"); err != nil {
		return cur, err
	}
	return next, nil
}

// Same reports whether two states of a debtor have the same fields, times
// aside.
func Same(a, b Debtor) bool {
	eq := func(x, y *string) bool { return (x == nil && y == nil) || (x != nil && y != nil && *x == *y) }
	return a.CustomerNumber == b.CustomerNumber && a.Name == b.Name && a.Address == b.Address &&
		eq(a.VATID, b.VATID) && eq(a.Email, b.Email) && eq(a.LeitwegID, b.LeitwegID) &&
		a.PaymentTerms.Days == b.PaymentTerms.Days && a.PaymentTerms.CashDiscountDays == b.PaymentTerms.CashDiscountDays &&
		a.PaymentTerms.CashDiscountRate.Equal(b.PaymentTerms.CashDiscountRate.Decimal) &&
		a.ReceivableAccount == b.ReceivableAccount && a.IsActive == b.IsActive
}

// checker gathers the problems of one request, one detail per field.
type checker struct{ details []errs.Detail }

func (c *checker) bad(field, issue string) { c.details = append(c.details, errs.Field(field, issue)) }

func (c *checker) err(msg string) error {
	if len(c.details) == 0 {
		return nil
	}
	return errs.Invalid(msg, c.details...)
}

// text checks a trimmed text field.
func (c *checker) text(field, s string, max int, required bool) {
	switch {
	case s == "" && required:
		c.bad(field, "required")
	case utf8.RuneCountInString(s) > max:
		c.bad(field, "at most "+itoa(max)+" characters")
	case strings.ContainsFunc(s, unicode.IsControl):
		c.bad(field, "no control characters")
	}
}

func (c *checker) customerNumber(s string) string {
	if !customerNumberRe.MatchString(s) {
		c.bad("customer_number", "1 to 20 letters, digits or the characters - _ / .")
	}
	return s
}

// address applies the given fields of in to a, trimmed and checked.
func (c *checker) address(a receivablesv1.Address, in *receivablesv1.AddressInput) receivablesv1.Address {
	field := func(name string, v *string, max int, dst *string) {
		if v == nil {
			return
		}
		s := strings.TrimSpace(*v)
		c.text("address."+name, s, max, true)
		*dst = s
	}
	field("street", in.Street, MaxStreetLength, &a.Street)
	field("zip", in.Zip, MaxZipLength, &a.Zip)
	field("city", in.City, MaxCityLength, &a.City)
	if in.Country != nil {
		a.Country = strings.TrimSpace(*in.Country)
		if !ValidCountry(a.Country) {
			c.bad("address.country", "an ISO 3166-1 alpha-2 country code in upper case, e.g. DE")
		}
	}
	return a
}

// vatID returns the normalised VAT ID, nil for none.
func (c *checker) vatID(v *string) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	id := NormalizeVATID(*v)
	if issue := CheckVATID(id); issue != "" {
		c.bad("vat_id", issue)
	}
	return &id
}

func (c *checker) email(v *string) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	e := strings.TrimSpace(*v)
	switch {
	case len(e) > MaxEmailLength:
		c.bad("email", "at most 254 characters")
	case !emailRe.MatchString(e):
		c.bad("email", "an e-mail address such as buchhaltung@example.de")
	}
	return &e
}

func (c *checker) leitwegID(v *string) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	id := strings.TrimSpace(*v)
	if issue := CheckLeitwegID(id); issue != "" {
		c.bad("leitweg_id", issue)
	}
	return &id
}

func (c *checker) account(s string) string {
	if !accountNumberRe.MatchString(s) {
		c.bad("receivable_account", "an SKR04 account number of 1 to 8 digits, e.g. 1200")
	}
	return s
}

// terms applies the given fields of in to t and checks the result: days
// from 0 to 365, a Skonto rate from 0 to 100 percent with at most two
// decimals, and with a rate, Skonto days below the payment days.
// A change's fields are checked alone first (combined false), since the
// rule across them needs the current terms.
func (c *checker) terms(t receivablesv1.PaymentTerms, in *receivablesv1.PaymentTermsInput, combined bool) receivablesv1.PaymentTerms {
	ok := true
	days := func(name string, v *int, dst *int) {
		if v == nil {
			return
		}
		if *v < 0 || *v > MaxTermDays {
			c.bad("payment_terms."+name, "an integer from 0 to 365")
			ok = false
		}
		*dst = *v
	}
	days("days", in.Days, &t.Days)
	days("cash_discount_days", in.CashDiscountDays, &t.CashDiscountDays)
	if in.CashDiscountRate != nil {
		r := *in.CashDiscountRate
		if r.IsNegative() || r.GreaterThan(hundred) || r.Places() > 2 {
			c.bad("payment_terms.cash_discount_rate", "a percentage from 0 to 100 with at most 2 decimals")
			ok = false
		}
		t.CashDiscountRate = r
	}
	if ok && combined && t.CashDiscountRate.IsPositive() && t.CashDiscountDays >= t.Days {
		c.bad("payment_terms.cash_discount_days", "with a cash discount rate, fewer than the payment days ("+itoa(t.Days)+")")
	}
	return t
}
