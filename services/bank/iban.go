package bank

import (
	"strings"

	"github.com/ledgerplatform/ledger/pkg/iban"
)

// The IBAN and BIC rules live in pkg/iban, shared with payables (its
// vendors' bank details); bank keeps its names for them.

// NormalizeIBAN removes spaces and upper-cases s (iban.Normalize).
func NormalizeIBAN(s string) string { return iban.Normalize(s) }

// CheckIBAN explains why a normalised IBAN is not valid, or returns ""
// (iban.Check: registry country and length, ISO 13616 mod 97).
func CheckIBAN(s string) string { return iban.Check(s) }

// NormalizeBIC trims and upper-cases s.
func NormalizeBIC(s string) string { return iban.NormalizeBIC(s) }

// CheckBIC explains why a normalised BIC (ISO 9362) is not valid, or
// returns "" (iban.CheckBIC).
func CheckBIC(bic string) string { return iban.CheckBIC(bic) }

// currencies are the ISO 4217 codes of circulating currencies (no funds,
// metals or test codes): what a bank account can be kept in.
var currencies = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL
		BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP
		GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD
		KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR
		NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN
		SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF
		YER ZAR ZMW ZWG ZWL`) {
		m[c] = true
	}
	return m
}()

// ValidCurrency reports whether c is the ISO 4217 code of a circulating
// currency, in upper case.
func ValidCurrency(c string) bool { return currencies[c] }
