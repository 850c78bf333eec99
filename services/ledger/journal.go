package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// JournalStore appends to and reads the journal.
type JournalStore interface {
	// Post appends an intent; a non-nil IdemRecord replays an earlier
	// response for the same idempotency key.
	Post(ctx context.Context, in *Intent) (Posted, *IdemRecord, error)
	IntentDetail(ctx context.Context, tenant, id string) (*IntentDetail, error)
	Journal(ctx context.Context, tenant string, f JournalFilter) ([]JournalEntry, error)
	// Verify checks the chain from the newest good checkpoint (all of it
	// with full), checking checkpoint signatures with keys.
	Verify(ctx context.Context, tenant string, full bool, keys Keyring) (Verification, error)
	// AddCheckpoint stores a signed checkpoint of a stored event.
	AddCheckpoint(ctx context.Context, c Checkpoint) error
	// Checkpoints lists a tenant's checkpoints, oldest first.
	Checkpoints(ctx context.Context, tenant string) ([]Checkpoint, error)
	// HeadsMoved lists the tenants whose head is past their newest checkpoint.
	HeadsMoved(ctx context.Context) ([]string, error)
	// SetPeriodLock records a period's lock state; with cp it signs a
	// checkpoint of the head in the same transaction, and records nothing
	// when that fails.
	SetPeriodLock(ctx context.Context, tenant, period, status, by string, cp *HeadCheckpoint) error
	JournalFeed(ctx context.Context, tenant string, after int64, limit int, from, to *time.Time) (ledgerv1.JournalFeed, error)
}

// JournalEntry is a line of the journal listing.
type JournalEntry struct {
	Event
	ProvenanceSummary ProvenanceSummary `json:"provenance_summary"`
}

// ProvenanceSummary says who posted an entry and through which surface.
type ProvenanceSummary struct {
	Surface        string `json:"surface"`
	SurfaceLabel   string `json:"surface_label"`
	Channel        string `json:"channel"`
	ChannelLabel   string `json:"channel_label"`
	ActorType      string `json:"actor_type"`
	ActorLabel     string `json:"actor_label"`
	ActorKeyPrefix string `json:"actor_key_prefix"`
	ActorDisplay   string `json:"actor_display"`
}

var surfaceLabels = map[string]string{"api": "REST API", "mcp": "MCP tools", "system": "System"}
var channelLabels = map[string]string{"rest": "Direct booking", "review_queue": "Review queue", "reversal": "Reversal",
	"bank": "Bank reconciliation", "receivables": "Receivables", "payables": "Payables", "document": "Booking with document"}

// Summary turns stored provenance into the listing's summary.
func (p Provenance) Summary() ProvenanceSummary {
	s := ProvenanceSummary{Surface: p.Surface, SurfaceLabel: surfaceLabels[p.Surface], Channel: p.Channel,
		ChannelLabel: channelLabels[p.Channel], ActorType: p.ActorType, ActorLabel: p.Label, ActorKeyPrefix: p.KeyPrefix}
	s.ActorDisplay = p.Label
	if p.KeyPrefix != "" {
		s.ActorDisplay += " (" + p.KeyPrefix + "…)"
	}
	return s
}

// JournalFilter selects journal entries.
type JournalFilter struct {
	Account           string
	From, To          *time.Time
	Search            string
	ExternalReference string
	Limit, Offset     int
}

// IntentDetail is one intent with its entries and links.
type IntentDetail struct {
	IntentID      string         `json:"intent_id"`
	BookingDate   string         `json:"booking_date"`
	Period        string         `json:"period"`
	Description   string         `json:"description"`
	Source        string         `json:"source"`
	Category      string         `json:"category"`
	DocumentID    *string        `json:"document_id"`
	Reverses      *string        `json:"reverses"`
	ReversedBy    *string        `json:"reversed_by"`
	CreatedAt     time.Time      `json:"created_at"`
	Entries       []JournalEntry `json:"entries"`
	Summary       IntentSummary  `json:"summary"`
	LinkedIntents []LinkedIntent `json:"linked_intents"`
}

// IntentSummary totals an intent.
type IntentSummary struct {
	EventCount  int          `json:"event_count"`
	TotalAmount money.Amount `json:"total_amount"`
	Debit       money.Amount `json:"total_debit"`
	Credit      money.Amount `json:"total_credit"`
	Balanced    bool         `json:"balanced"`
}

// LinkedIntent names a related intent.
type LinkedIntent struct {
	IntentID string `json:"intent_id"`
	Relation string `json:"relation"` // reversed_by or reverses
}

// Request carries what a command needs besides its body.
type Request struct {
	Claims         *auth.Claims
	IdempotencyKey string
	Body           []byte // raw body, hashed for idempotency
	Channel        string // rest, review_queue, ...
}

func provenance(c *auth.Claims, channel string) Provenance {
	p := Provenance{Surface: c.Surface, Channel: channel, KeyPrefix: c.KeyPrefix}
	if p.Surface == "" {
		p.Surface = "system"
	}
	switch {
	case c.KeyID != "":
		p.ActorType, p.ActorID, p.Label = "api_key", c.KeyID, c.Label
	case c.UserID != "":
		p.ActorType, p.ActorID, p.Label = "user", c.UserID, c.Email
	default:
		p.ActorType, p.Label = "service", "system"
	}
	return p
}

// Book validates and posts a booking.
func (s *Service) Book(ctx context.Context, r Request, b Booking, documentID, category string) (Posted, *IdemRecord, error) {
	return s.book(ctx, r, b, &Intent{DocumentID: documentID, Category: category})
}

// book validates b and posts it with the category and document (an id, or
// a new document to store with the posting) that link holds.
func (s *Service) book(ctx context.Context, r Request, b Booking, link *Intent) (Posted, *IdemRecord, error) {
	tenant := r.Claims.TenantID
	chart, err := s.chart(ctx, tenant)
	if err != nil {
		return Posted{}, nil, err
	}
	date, events, err := Expand(b, chart)
	if err != nil {
		return Posted{}, nil, err
	}
	period, err := PeriodOf(date, b.Period)
	if err != nil {
		return Posted{}, nil, err
	}
	in := &Intent{
		ID: uuid.NewString(), TenantID: tenant, BookingDate: date, Period: period, Description: b.Description,
		Source: "api", Category: link.Category, DocumentID: link.DocumentID, Document: link.Document, Provenance: provenance(r.Claims, r.Channel), Events: events,
	}
	if r.Channel != "rest" && r.Channel != "" {
		in.Source = r.Channel
	}
	in.Fingerprint = Fingerprint(date, b.Description, events)
	in.SkipDuplicateCheck = b.SkipDuplicateCheck
	s.idempotent(in, r)
	return s.store.Post(ctx, in)
}

func (s *Service) idempotent(in *Intent, r Request) {
	if r.IdempotencyKey == "" {
		return
	}
	in.IdemScope = r.Claims.Actor()
	in.IdemKey = r.IdempotencyKey
	in.IdemHash = RequestHash([]byte(r.Channel), r.Body)
}

var sourceRe = regexp.MustCompile(`^[a-z][a-z_]{0,39}$`)

// PostFor posts a booking for another service (ledgerv1.SubjectPost), for
// example a bank clearing. The intent id is the command's idempotency key:
// a retried command answers the intent already posted under it. Problems
// with the booking name their field under booking.
func (s *Service) PostFor(ctx context.Context, p ledgerv1.PostRequest) (Posted, error) {
	var details []errs.Detail
	if !ValidID(p.TenantID) {
		details = append(details, errs.Field("tenant_id", "required UUID"))
	}
	if !ValidID(p.IntentID) {
		details = append(details, errs.Field("intent_id", "required UUID, derived from the command so a retry posts once"))
	}
	if !sourceRe.MatchString(p.Source) {
		details = append(details, errs.Field("source", "required: the posting service, such as bank"))
	}
	if p.DocumentID != "" && !ValidID(p.DocumentID) {
		details = append(details, errs.Field("document_id", "must be a UUID"))
	}
	if len(details) > 0 {
		return Posted{}, errs.Invalid("the posting command is invalid; nothing was posted", details...)
	}
	in := &Intent{ID: p.IntentID, Source: p.Source, DocumentID: p.DocumentID, Provenance: provenance(&auth.Claims{}, p.Source)}
	if p.Booking.Period != "" {
		date, _ := ParseDate(p.Booking.BookingDate)
		var err error
		if in.Period, err = PeriodOf(date, p.Booking.Period); err != nil {
			return Posted{}, under("booking", err)
		}
	}
	posted, err := s.postAs(ctx, p.TenantID, p.Booking, in)
	return posted, under("booking", err)
}

// under puts the fields named by an INVALID_INPUT error under the field
// prefix: "lines[0].amount" under "booking" is "booking.lines[0].amount",
// "[0].amount" under "lines" is "lines[0].amount".
func under(prefix string, err error) error {
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.InvalidInput {
		return err
	}
	out := *e
	out.Details = make([]errs.Detail, len(e.Details))
	for i, d := range e.Details {
		field := prefix
		switch {
		case d.Field == "":
		case strings.HasPrefix(d.Field, "["):
			field += d.Field
		default:
			field += "." + d.Field
		}
		out.Details[i] = errs.Field(field, d.Issue)
	}
	return &out
}

// ReverseRequest is the body of POST /v1/journal/reverse.
type ReverseRequest struct {
	IntentID    string `json:"intent_id"`
	Reason      string `json:"reason,omitempty"`
	BookingDate string `json:"booking_date,omitempty"`
}

// Reversed is the answer to a reversal.
type Reversed struct {
	ReversalIntentID string `json:"reversal_intent_id"`
	OriginalIntentID string `json:"original_intent_id"`
	EventCount       int    `json:"event_count"`
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidID reports whether s is a UUID.
func ValidID(s string) bool { return uuidRe.MatchString(s) }

// Reverse posts the mirror image of an intent, linked to it. Reversing
// twice, or reversing a reversal, is a conflict.
func (s *Service) Reverse(ctx context.Context, r Request, rr ReverseRequest) (Reversed, *IdemRecord, error) {
	tenant := r.Claims.TenantID
	if !ValidID(rr.IntentID) {
		return Reversed{}, nil, errs.Invalid("intent_id must be a UUID", errs.Field("intent_id", "required UUID"))
	}
	if len(rr.Reason) > MaxDescription {
		return Reversed{}, nil, errs.Invalid("reason is too long", errs.Field("reason", "at most 500 characters"))
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return Reversed{}, nil, err
	}
	orig, err := s.store.IntentDetail(ctx, tenant, rr.IntentID)
	if err != nil {
		return Reversed{}, nil, err
	}
	if orig.Reverses != nil {
		return Reversed{}, nil, errs.E(errs.CannotReverseReversal, "intent %s is itself a reversal and cannot be reversed", rr.IntentID)
	}
	var already error
	if orig.ReversedBy != nil {
		already = errs.E(errs.AlreadyReversed, "intent %s has already been reversed by %s", rr.IntentID, *orig.ReversedBy)
		// A retry with the Idempotency-Key of the reversal gets its answer
		// again; the store decides, as it holds the key.
		if r.IdempotencyKey == "" {
			return Reversed{}, nil, already
		}
	}
	date, _ := ParseDate(orig.BookingDate)
	if rr.BookingDate != "" {
		var ok bool
		if date, ok = ParseDate(rr.BookingDate); !ok {
			return Reversed{}, nil, errs.Invalid("booking_date must be a real calendar date", errs.Field("booking_date", "YYYY-MM-DD"))
		}
	}
	desc := "Storno: " + orig.Description
	if rr.Reason != "" {
		desc += " (" + rr.Reason + ")"
	}
	period := date.Format("2006-01")
	if orig.Period != "" && rr.BookingDate == "" {
		period = orig.Period // a closing entry is reversed in its adjustment period
	}
	in := &Intent{
		ID: uuid.NewString(), TenantID: tenant, BookingDate: date, Period: period, Description: truncate(desc, MaxDescription),
		Source: "reversal", Reverses: orig.IntentID, Provenance: provenance(r.Claims, "reversal"),
	}
	for _, e := range orig.Entries {
		m := e.Event
		m.ID, m.JournalNumber, m.Hash = "", 0, ""
		m.AccountDebit, m.AccountCredit = e.AccountCredit, e.AccountDebit
		m.Description = truncate("Storno: "+e.Description, MaxDescription)
		in.Events = append(in.Events, m)
	}
	s.idempotent(in, r)
	posted, replay, err := s.store.Post(ctx, in)
	switch {
	case replay != nil:
		return Reversed{}, reversalReplay(replay, orig.IntentID), nil
	case already != nil && !errs.Is(err, errs.IdempotencyKeyReused):
		return Reversed{}, nil, already
	case err != nil:
		return Reversed{}, nil, err
	}
	return Reversed{ReversalIntentID: posted.IntentID, OriginalIntentID: orig.IntentID, EventCount: posted.EventCount}, nil, nil
}

// reversalReplay turns the posting the store recorded for a reversal's
// Idempotency-Key back into the answer the first request got.
func reversalReplay(rec *IdemRecord, original string) *IdemRecord {
	var p Posted
	if json.Unmarshal(rec.Body, &p) != nil || p.IntentID == "" {
		return rec
	}
	b, err := json.Marshal(Reversed{ReversalIntentID: p.IntentID, OriginalIntentID: original, EventCount: p.EventCount})
	if err != nil {
		return rec
	}
	return &IdemRecord{Hash: rec.Hash, Status: rec.Status, Body: b}
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// Journal lists entries.
func (s *Service) Journal(ctx context.Context, tenant string, f JournalFilter) ([]JournalEntry, error) {
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return nil, err
	}
	return s.store.Journal(ctx, tenant, f)
}

// Intent returns one intent.
func (s *Service) Intent(ctx context.Context, tenant, id string) (*IntentDetail, error) {
	if !ValidID(id) {
		return nil, errs.NotFoundf("intent %s not found", id)
	}
	return s.store.IntentDetail(ctx, tenant, id)
}

// Verify checks the tenant's hash chain from its newest good checkpoint,
// or from the first event when full.
func (s *Service) Verify(ctx context.Context, tenant string, full bool) (Verification, error) {
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return Verification{}, err
	}
	return s.store.Verify(ctx, tenant, full, s.keys.Verify)
}

// PeriodOf is the accounting period of a posting: the booking month, or the
// requested adjustment period YYYY-13 of the booking date's year.
func PeriodOf(date time.Time, requested string) (string, error) {
	if requested == "" {
		return date.Format("2006-01"), nil
	}
	if requested != date.Format("2006")+"-13" {
		return "", errs.Invalid("period must be the adjustment period of the booking date's year",
			errs.Field("period", "expected "+date.Format("2006")+"-13 or no period"))
	}
	return requested, nil
}

var periodRe = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-3])$`)

// SetPeriodLock applies a lock state decided by the periods service.
func (s *Service) SetPeriodLock(ctx context.Context, tenant, period, status, by string) error {
	if !ValidID(tenant) {
		return errs.Invalid("tenant_id must be a UUID", errs.Field("tenant_id", "required"))
	}
	if !periodRe.MatchString(period) {
		return errs.Invalid("period must be YYYY-MM", errs.Field("period", "YYYY-MM or YYYY-13"))
	}
	switch status {
	case "open", "soft-locked", "hard-locked":
	default:
		return errs.Invalid("status must be open, soft-locked or hard-locked", errs.Field("status", "unknown value"))
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return err
	}
	if status == "open" {
		return s.store.SetPeriodLock(ctx, tenant, period, status, by, nil)
	}
	// The lock and its checkpoint commit together, holding the journal
	// head: the checkpoint covers every posting of the period, and when it
	// cannot be signed (no key, a chain that does not verify) the lock is
	// not set either, so a refused command changes nothing.
	if s.keys.Signer == nil {
		return errs.Wrap("ledger.SetPeriodLock", errors.New("no checkpoint key"))
	}
	reason := "lock " + period + " " + status
	return s.store.SetPeriodLock(ctx, tenant, period, status, by, &HeadCheckpoint{Keys: s.keys.Verify,
		Sign: func(v Verification) (*Checkpoint, error) { return s.signHead(tenant, reason, v) }})
}

// MaxFeedPage bounds one page of the journal feed.
const MaxFeedPage = 5000

// JournalFeed pages through a tenant's journal for projections and exports.
func (s *Service) JournalFeed(ctx context.Context, r ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error) {
	if !ValidID(r.TenantID) {
		return ledgerv1.JournalFeed{}, errs.Invalid("tenant_id must be a UUID", errs.Field("tenant_id", "required"))
	}
	if r.Limit < 1 || r.Limit > MaxFeedPage || r.After < 0 {
		return ledgerv1.JournalFeed{}, errs.Invalid("limit must be 1 to 5000 and after not negative", errs.Field("limit", "1..5000"))
	}
	var from, to *time.Time
	for _, d := range []struct {
		s   string
		dst **time.Time
	}{{r.From, &from}, {r.To, &to}} {
		if d.s == "" {
			continue
		}
		t, ok := ParseDate(d.s)
		if !ok {
			return ledgerv1.JournalFeed{}, errs.Invalid("from and to must be dates YYYY-MM-DD", errs.Field("from", "YYYY-MM-DD"))
		}
		*d.dst = &t
	}
	if err := s.ensureTenant(ctx, r.TenantID); err != nil {
		return ledgerv1.JournalFeed{}, err
	}
	return s.store.JournalFeed(ctx, r.TenantID, r.After, r.Limit, from, to)
}
