package payables

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledgerplatform/ledger/contracts/payablesv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/iban"
	"github.com/ledgerplatform/ledger/pkg/vatid"
)

// Limits and defaults of a vendor's fields (the spec's field lengths).
const (
	MaxNameLength       = 255
	MaxTaxIDLength      = 20
	MaxVATIDLength      = 20
	MaxIBANLength       = 34
	MaxBICLength        = 11
	MaxNotesLength      = 2000
	MaxStreetLength     = 255
	MaxZipLength        = 16
	MaxCityLength       = 255
	DefaultVendorsLimit = 50
	MaxVendorsLimit     = 500
	MaxSearchLength     = 100
)

var (
	// taxIDRe is a German Steuernummer as printed on an invoice (§14
	// UStG): digits in groups split by slashes ("143/123/45678", the
	// state's form) or all together (the 13-digit ELSTER form).
	taxIDRe         = regexp.MustCompile(`^[0-9]+(/[0-9]+)*$`)
	accountNumberRe = regexp.MustCompile(`^[0-9]{1,8}$`)
)

// CheckVendorInput validates and normalises a new vendor, naming every
// field at fault.
func CheckVendorInput(in payablesv1.VendorInput) (Vendor, error) {
	v := Vendor{Name: strings.TrimSpace(in.Name), IsActive: true}
	var c checker
	c.text("name", v.Name, MaxNameLength, true)
	v.TaxID = c.taxID(in.TaxID)
	v.VATID = c.vatID(in.VATID)
	v.IBAN = c.iban(in.IBAN)
	v.BIC = c.bic(in.BIC)
	if in.Address != nil {
		v.Address = c.address(nil, in.Address)
	}
	v.DefaultAccount = c.account(in.DefaultAccount)
	v.Notes = c.notes(in.Notes)
	if err := c.err("invalid vendor"); err != nil {
		return Vendor{}, err
	}
	return v, nil
}

// VendorPatch is a checked change of a vendor: nil leaves a field as it
// is; an empty optional text removes it.
type VendorPatch struct {
	Name                                           *string
	TaxID, VATID, IBAN, BIC, DefaultAccount, Notes *string
	Address                                        *payablesv1.AddressInput
	IsActive                                       *bool
}

// CheckVendorUpdate validates and normalises the fields a change gives.
func CheckVendorUpdate(in payablesv1.VendorUpdate) (VendorPatch, error) {
	p := VendorPatch{IsActive: in.IsActive}
	var c checker
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		c.text("name", n, MaxNameLength, true)
		p.Name = &n
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
	p.TaxID = emptied(in.TaxID, c.taxID)
	p.VATID = emptied(in.VATID, c.vatID)
	p.IBAN = emptied(in.IBAN, c.iban)
	p.BIC = emptied(in.BIC, c.bic)
	p.DefaultAccount = emptied(in.DefaultAccount, c.account)
	p.Notes = emptied(in.Notes, c.notes)
	if in.Address != nil {
		// Checked on its own here; Apply merges it into the current one.
		a := c.address(nil, in.Address)
		if a == nil {
			a = &payablesv1.Address{}
		}
		p.Address = &payablesv1.AddressInput{}
		pick := func(given *string, v string) *string {
			if given == nil {
				return nil
			}
			return &v
		}
		p.Address.Street = pick(in.Address.Street, a.Street)
		p.Address.Zip = pick(in.Address.Zip, a.Zip)
		p.Address.City = pick(in.Address.City, a.City)
		p.Address.Country = pick(in.Address.Country, a.Country)
	}
	if err := c.err("invalid vendor change; nothing was changed"); err != nil {
		return VendorPatch{}, err
	}
	return p, nil
}

// Apply returns cur changed by p: NO_CHANGES when no given field differs
// from cur.
func (p VendorPatch) Apply(cur Vendor) (Vendor, error) {
	next := cur
	optional := func(dst **string, v *string) {
		switch {
		case v == nil:
		case *v == "":
			*dst = nil
		default:
			*dst = v
		}
	}
	if p.Name != nil {
		next.Name = *p.Name
	}
	optional(&next.TaxID, p.TaxID)
	optional(&next.VATID, p.VATID)
	optional(&next.IBAN, p.IBAN)
	optional(&next.BIC, p.BIC)
	optional(&next.DefaultAccount, p.DefaultAccount)
	optional(&next.Notes, p.Notes)
	if p.Address != nil {
		a := payablesv1.Address{}
		if cur.Address != nil {
			a = *cur.Address
		}
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&a.Street, p.Address.Street)
		set(&a.Zip, p.Address.Zip)
		set(&a.City, p.Address.City)
		set(&a.Country, p.Address.Country)
		next.Address = nil
		if a != (payablesv1.Address{}) {
			next.Address = &a
		}
	}
	if p.IsActive != nil {
		next.IsActive = *p.IsActive
	}
	if Same(cur, next) {
		return cur, errs.E(errs.NoChanges, "the request changes nothing: no field was given or every value equals the current one")
	}
	return next, nil
}

// Same reports whether two states of a vendor have the same fields, times
// and open amount aside.
func Same(a, b Vendor) bool {
	eq := func(x, y *string) bool { return (x == nil && y == nil) || (x != nil && y != nil && *x == *y) }
	sameAddr := (a.Address == nil && b.Address == nil) || (a.Address != nil && b.Address != nil && *a.Address == *b.Address)
	return a.Name == b.Name && eq(a.TaxID, b.TaxID) && eq(a.VATID, b.VATID) && eq(a.IBAN, b.IBAN) && eq(a.BIC, b.BIC) &&
		sameAddr && eq(a.DefaultAccount, b.DefaultAccount) && eq(a.Notes, b.Notes) && a.IsActive == b.IsActive
}

// NormalizeTaxID removes the spaces people group a tax number with.
func NormalizeTaxID(s string) string { return strings.Join(strings.Fields(s), "") }

// TaxIDKey is the form in which tax numbers are compared for duplicates:
// its digits, so that "143/123/45678" and "14312345678" are one number.
func TaxIDKey(s string) string { return strings.ReplaceAll(s, "/", "") }

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
		c.bad(field, "at most "+strconv.Itoa(max)+" characters")
	case strings.ContainsFunc(s, unicode.IsControl):
		c.bad(field, "no control characters")
	}
}

// given returns the trimmed text of an optional field, nil for none.
func given(v *string) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	s := strings.TrimSpace(*v)
	return &s
}

func (c *checker) taxID(v *string) *string {
	if v = given(v); v == nil {
		return nil
	}
	id := NormalizeTaxID(*v)
	switch {
	case len(id) > MaxTaxIDLength:
		c.bad("tax_id", "at most 20 characters")
	case !taxIDRe.MatchString(id):
		c.bad("tax_id", "a tax number (Steuernummer) of digits and slashes, e.g. 143/123/45678 or 2181508150005")
	}
	return &id
}

// vatID returns the normalised VAT ID, nil for none.
func (c *checker) vatID(v *string) *string {
	if v = given(v); v == nil {
		return nil
	}
	id := vatid.Normalize(*v)
	if len(id) > MaxVATIDLength {
		c.bad("vat_id", "at most 20 characters")
	} else if issue := vatid.Check(id); issue != "" {
		c.bad("vat_id", issue)
	}
	return &id
}

func (c *checker) iban(v *string) *string {
	if v = given(v); v == nil {
		return nil
	}
	s := iban.Normalize(*v)
	if len(s) > MaxIBANLength {
		c.bad("iban", "at most 34 characters")
	} else if issue := iban.Check(s); issue != "" {
		c.bad("iban", issue)
	}
	return &s
}

func (c *checker) bic(v *string) *string {
	if v = given(v); v == nil {
		return nil
	}
	s := iban.NormalizeBIC(*v)
	if issue := iban.CheckBIC(s); issue != "" {
		c.bad("bic", issue)
	}
	return &s
}

func (c *checker) account(v *string) *string {
	if v = given(v); v == nil {
		return nil
	}
	if !accountNumberRe.MatchString(*v) {
		c.bad("default_account", "an SKR04 account number of 1 to 8 digits, e.g. 5400")
	}
	return v
}

func (c *checker) notes(v *string) *string {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil
	}
	// Notes keep their line breaks and inner spacing; only the ends are
	// trimmed.
	s := strings.TrimSpace(*v)
	if utf8.RuneCountInString(s) > MaxNotesLength {
		c.bad("notes", "at most 2000 characters")
	}
	return &s
}

// address returns a trimmed and checked a changed by in, nil when no part
// is left.
func (c *checker) address(a *payablesv1.Address, in *payablesv1.AddressInput) *payablesv1.Address {
	out := payablesv1.Address{}
	if a != nil {
		out = *a
	}
	field := func(name string, v *string, max int, dst *string) {
		if v == nil {
			return
		}
		s := strings.TrimSpace(*v)
		c.text("address."+name, s, max, false)
		*dst = s
	}
	field("street", in.Street, MaxStreetLength, &out.Street)
	field("zip", in.Zip, MaxZipLength, &out.Zip)
	field("city", in.City, MaxCityLength, &out.City)
	if in.Country != nil {
		out.Country = strings.TrimSpace(*in.Country)
		if out.Country != "" && !ValidCountry(out.Country) {
			c.bad("address.country", "an ISO 3166-1 alpha-2 country code in upper case, e.g. DE")
		}
	}
	if out == (payablesv1.Address{}) {
		return nil
	}
	return &out
}
