package bank

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Deduper names each entry of one statement (or one JSON batch) by the key
// under which a bank account stores it only once (the unique index on
// transactions.dedup_key). The key is, in order:
//
//   - "ref:" + the bank's reference (camt AcctSvcrRef, MT940 bank
//     reference) unless it is absent or a placeholder (NONREF,
//     NOTPROVIDED);
//   - else "e2e:" + the EndToEndId unless absent or NOTPROVIDED;
//   - else "fp:" + SHA-256 of booking date, amount, counterparty IBAN and
//     reference, + ":" + n, n counting equal fingerprints within the
//     statement from 1.
//
// Counting within the statement is what lets two genuinely identical
// transactions on one day both import, while the same statement again,
// or an overlapping one (an intraday camt.052 and the day's camt.053),
// yields the same keys and imports nothing twice. A bank reference or
// EndToEndId that repeats within one statement (a batch booking whose
// details share the entry's reference) is numbered the same way, from
// its second occurrence: "ref:X", "ref:X#2", ...
type Deduper struct{ seen map[string]int }

// NewDeduper starts a statement or batch.
func NewDeduper() *Deduper { return &Deduper{seen: map[string]int{}} }

// Key returns the dedup key of e, the next entry of the statement.
func (d *Deduper) Key(e Entry) string {
	if ref := usableRef(e.BankReference, "NONREF", "NOTPROVIDED"); ref != "" {
		return d.numbered("ref:" + ref)
	}
	if e2e := usableRef(e.EndToEndID, "NOTPROVIDED"); e2e != "" {
		return d.numbered("e2e:" + e2e)
	}
	fp := "fp:" + Fingerprint(e)
	d.seen[fp]++
	return fp + ":" + strconv.Itoa(d.seen[fp])
}

func (d *Deduper) numbered(key string) string {
	d.seen[key]++
	if n := d.seen[key]; n > 1 {
		return key + "#" + strconv.Itoa(n)
	}
	return key
}

// Fingerprint is the hex SHA-256 of what identifies an entry without a
// reference of the bank: booking date, amount (exact, without trailing
// zeros, so 10.5 and 10.50 agree), counterparty IBAN and reference.
func Fingerprint(e Entry) string {
	s := e.BookingDate + "|" + e.Amount.String() + "|" + strings.ToUpper(strings.Join(strings.Fields(e.CounterpartyIBAN), "")) + "|" + strings.Join(strings.Fields(e.Reference), " ")
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// usableRef is ref trimmed, or "" when it is empty or one of the
// placeholders banks write for "none".
func usableRef(ref string, placeholders ...string) string {
	ref = strings.TrimSpace(ref)
	for _, p := range placeholders {
		if strings.EqualFold(ref, p) {
			return ""
		}
	}
	return ref
}
