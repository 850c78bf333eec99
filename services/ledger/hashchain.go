package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// HashVersion is the chain formula new events are written with. Each event
// stores its version and verifies by it, so events of an older formula keep
// verifying after the formula grows.
const HashVersion = 2

// ChainIntent is what the chain covers of an event's intent beyond the
// event's own columns: every column of the intents row that carries
// meaning. CreatedAt is the posting transaction's time, the same instant
// as the events' capture time.
type ChainIntent struct {
	Period      string
	Description string
	Source      string
	Category    string
	Fingerprint string
	DocumentID  *string
	Reverses    *string
	Provenance  Provenance
	FirstNumber int64
	EventCount  int
	CreatedAt   time.Time
}

// HashOf computes an event's chain hash by the formula of version.
func HashOf(version int, prev []byte, tenantID string, in *ChainIntent, e *Event) ([]byte, error) {
	switch version {
	case 1:
		return ChainHash(prev, tenantID, e), nil
	case 2:
		return chainHashV2(prev, tenantID, in, e), nil
	}
	return nil, fmt.Errorf("ledger: unknown hash version %d", version)
}

// ChainHash is the version 1 formula: the SHA-256 of an event's content and
// the previous event's hash. Every field is length-prefixed so no two
// events encode alike; the capture time is part of the content so
// back-dating a row breaks the chain. It leaves the intent's own columns
// (period, document, reversal link, provenance) out; version 2 covers them.
func ChainHash(prev []byte, tenantID string, e *Event) []byte {
	h := sha256.New()
	field := func(s string) { writeField(h, s) }
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
	field(timeText(e.CapturedAt))
	field(string(prev))
	return h.Sum(nil)
}

// chainHashV2 covers the event and its intent. A tag opens the encoding so
// no version-1 input can collide with it; an optional field is a presence
// byte and, when present, its value, so NULL and "" differ.
func chainHashV2(prev []byte, tenantID string, in *ChainIntent, e *Event) []byte {
	h := sha256.New()
	field := func(s string) { writeField(h, s) }
	opt := func(s *string) {
		if s == nil {
			h.Write([]byte{0})
			return
		}
		h.Write([]byte{1})
		field(*s)
	}
	field("ledger-chain-v2")
	field(tenantID)
	writeNum(h, e.JournalNumber)
	field(string(prev))
	// The event.
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
	var fx *string
	if e.FXAmount != nil {
		s := e.FXAmount.String()
		fx = &s
	}
	opt(fx)
	opt(e.ExternalReference)
	if len(e.CustomMetadata) == 0 { // stored as NULL
		opt(nil)
	} else {
		s := string(e.CustomMetadata)
		opt(&s)
	}
	field(timeText(e.CapturedAt))
	// Its intent.
	field(in.Period)
	field(in.Description)
	field(in.Source)
	field(in.Category)
	field(in.Fingerprint)
	opt(in.DocumentID)
	opt(in.Reverses)
	p := in.Provenance
	for _, s := range []string{p.Surface, p.Channel, p.ActorType, p.ActorID, p.Label, p.KeyPrefix} {
		field(s)
	}
	writeNum(h, in.FirstNumber)
	writeNum(h, int64(in.EventCount))
	field(timeText(in.CreatedAt))
	return h.Sum(nil)
}

// timeText is a timestamp as Postgres keeps it: UTC, microseconds.
func timeText(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}

func writeField(h io.Writer, s string) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

func writeNum(h io.Writer, n int64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
