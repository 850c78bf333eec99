package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"time"
)

// ChainHash is the SHA-256 of an event's content and the previous event's
// hash. Every field is length-prefixed so no two events encode alike; the
// capture time is part of the content so back-dating a row breaks the chain.
func ChainHash(prev []byte, tenantID string, e *Event) []byte {
	h := sha256.New()
	field := func(s string) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	opt := func(s *string) {
		if s == nil {
			field("\x00")
			return
		}
		field(*s)
	}
	writeNum(h, e.JournalNumber)
	field(tenantID)
	field(e.ID)
	field(e.IntentID)
	field(e.BookingDate)
	field(e.AccountDebit)
	field(e.AccountCredit)
	field(e.Amount.StringFixed(2))
	opt(e.TaxCode)
	field(e.Description)
	field(e.Source)
	opt(e.FXCurrency)
	if e.FXAmount != nil {
		field(e.FXAmount.String())
	} else {
		field("\x00")
	}
	opt(e.ExternalReference)
	field(string(e.CustomMetadata))
	field(e.CapturedAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano))
	field(string(prev))
	return h.Sum(nil)
}

func writeNum(h hash.Hash, n int64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
