package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// Review item statuses; ReviewAll is only a list filter.
const (
	ReviewPending    = "pending"
	ReviewConfirmed  = "confirmed"
	ReviewOverridden = "overridden"
	ReviewAll        = "all"
)

// Review operations that post a booking.
const (
	reviewConfirm  = "confirm"
	reviewOverride = "override"
)

// Limits of the review queue.
const (
	MaxReasons        = 20
	MaxReviewListSize = 200
	MaxSourceID       = 200
	// reviewClaimTTL is how long an interrupted posting of an item blocks
	// other postings of it; far above the request timeout, so a posting
	// still in flight is never taken over.
	reviewClaimTTL = 2 * time.Minute
)

// Suggestion is a review item's booking draft, the lou_suggestion.
type Suggestion struct {
	BookingDate string   `json:"booking_date"`
	Description string   `json:"description"`
	Lines       []Line   `json:"lines"`
	Confidence  float64  `json:"confidence"`
	Reasons     []string `json:"reasons"`
}

func (s Suggestion) clone() Suggestion {
	c := s
	c.Lines = append([]Line(nil), s.Lines...)
	c.Reasons = append([]string(nil), s.Reasons...)
	return c
}

// Booking is the booking the draft describes.
func (s Suggestion) Booking(skipDuplicateCheck bool) Booking {
	return Booking{BookingDate: s.BookingDate, Description: s.Description, Lines: s.Lines, SkipDuplicateCheck: skipDuplicateCheck}
}

// normalize trims texts and turns missing lists into empty ones.
func (s Suggestion) normalize() Suggestion {
	s = s.clone()
	s.BookingDate = strings.TrimSpace(s.BookingDate)
	s.Description = strings.TrimSpace(s.Description)
	if s.Lines == nil {
		s.Lines = []Line{}
	}
	for i := range s.Lines {
		l := &s.Lines[i]
		l.AccountDebit, l.AccountCredit = strings.TrimSpace(l.AccountDebit), strings.TrimSpace(l.AccountCredit)
		l.TaxCode, l.Description = strings.TrimSpace(l.TaxCode), strings.TrimSpace(l.Description)
		l.ExternalReference = strings.TrimSpace(l.ExternalReference)
	}
	reasons := make([]string, 0, len(s.Reasons))
	for _, r := range s.Reasons {
		if r = strings.TrimSpace(r); r != "" {
			reasons = append(reasons, r)
		}
	}
	s.Reasons = reasons
	return s
}

// checkShape validates what every draft must satisfy, complete or not.
func (s Suggestion) checkShape(field string) error {
	var details []errs.Detail
	if math.IsNaN(s.Confidence) || s.Confidence < 0 || s.Confidence > 1 {
		details = append(details, errs.Field(field+".confidence", "must be between 0 and 1"))
	}
	if len(s.Reasons) > MaxReasons {
		details = append(details, errs.Field(field+".reasons", fmt.Sprintf("at most %d reasons", MaxReasons)))
	}
	for i, r := range s.Reasons {
		if utf8.RuneCountInString(r) > MaxDescription {
			details = append(details, errs.Field(fmt.Sprintf("%s.reasons[%d]", field, i), fmt.Sprintf("at most %d characters", MaxDescription)))
		}
	}
	if len(s.Lines) > MaxLines {
		details = append(details, errs.Field(field+".lines", fmt.Sprintf("at most %d lines", MaxLines)))
	}
	if utf8.RuneCountInString(s.Description) > MaxDescription {
		details = append(details, errs.Field(field+".description", fmt.Sprintf("at most %d characters", MaxDescription)))
	}
	if len(details) > 0 {
		return errs.Invalid("the draft is invalid", details...)
	}
	return nil
}

// ReviewItem is one entry of the review queue.
type ReviewItem struct {
	ID                 string      `json:"id"`
	Status             string      `json:"status"`
	SourceType         string      `json:"source_type"`
	SourceID           string      `json:"source_id"`
	DocumentID         *string     `json:"document_id"`
	LouSuggestion      Suggestion  `json:"lou_suggestion"`
	OriginalSuggestion Suggestion  `json:"original_suggestion"`
	BookedDraft        *Suggestion `json:"booking_draft,omitempty"` // the draft an override posted
	IntentID           *string     `json:"intent_id"`
	EventCount         *int        `json:"event_count,omitempty"`
	ResolvedBy         *string     `json:"resolved_by"`
	ResolvedAt         *time.Time  `json:"resolved_at"`
	CreatedBy          string      `json:"created_by"`
	CreatedAt          time.Time   `json:"created_at"`
	UpdatedAt          time.Time   `json:"updated_at"`
	Document           *Document   `json:"document,omitempty"` // set by GET of one item

	Version          int        `json:"-"`
	Posting          string     `json:"-"` // operation holding the claim, or ""
	PostingIntentID  string     `json:"-"`
	PostingToken     string     `json:"-"` // the request that claimed last
	ResolvedIdem     string     `json:"-"`
	ReversalIntentID *string    `json:"-"`
	DeletedAt        *time.Time `json:"-"`
}

// ReviewFilter selects review items; Status "all" means every status.
type ReviewFilter struct {
	Status        string
	Limit, Offset int
}

// ReviewChange is one entry of an item's history.
type ReviewChange struct {
	Action  string   `json:"action"`
	By      string   `json:"by"`
	Applied []string `json:"applied,omitempty"`
}

// ReviewClaim reserves a pending item for posting under IntentID.
type ReviewClaim struct {
	Op       string
	IntentID string
	Token    string      // identifies the claiming request
	Draft    *Suggestion // the override's draft; nil for confirm
}

// ReviewResolution finishes a claimed item.
type ReviewResolution struct {
	Status     string
	IntentID   string
	EventCount int
	By         string
	Idem       string // actor and Idempotency-Key of the request, for replays
}

// ReviewStore keeps the review queue. Items are never deleted: deletion
// sets deleted_at. Every conditional change reports whether it applied.
type ReviewStore interface {
	// CreateReviewItem inserts it, unless an item with its id, or a live
	// item of the same source, exists: then it loads that one into it and
	// reports false.
	CreateReviewItem(ctx context.Context, tenant string, it *ReviewItem) (bool, error)
	ReviewItems(ctx context.Context, tenant string, f ReviewFilter) ([]ReviewItem, error)
	// CountReviewItems counts live items of status (or all) and the pending ones.
	CountReviewItems(ctx context.Context, tenant, status string) (count, pending int, err error)
	// NextReviewItem returns the first live pending item created after
	// afterID (from the start when afterID is ""); NOT_FOUND when none.
	NextReviewItem(ctx context.Context, tenant, afterID string) (*ReviewItem, error)
	// ReviewItem returns a live item; NOT_FOUND when missing or deleted.
	ReviewItem(ctx context.Context, tenant, id string) (*ReviewItem, error)
	// UpdateReviewDraft replaces the draft of a pending, unclaimed item
	// still at version; nil when it is not.
	UpdateReviewDraft(ctx context.Context, tenant, id string, version int, s Suggestion, c ReviewChange) (*ReviewItem, error)
	// ClaimReviewItem claims a pending item that is unclaimed or claimed
	// under the same intent id; nil when it cannot be claimed.
	ClaimReviewItem(ctx context.Context, tenant, id string, c ReviewClaim) (*ReviewItem, error)
	// ReleaseReviewClaim drops the claim under intentID if it is at least
	// olderThan old.
	ReleaseReviewClaim(ctx context.Context, tenant, id, intentID string, olderThan time.Duration) (bool, error)
	// ResolveReviewItem marks a pending item claimed under r.IntentID as
	// posted.
	ResolveReviewItem(ctx context.Context, tenant, id string, r ReviewResolution) (bool, error)
	// DeleteReviewItem soft-deletes a live item: a pending unclaimed one
	// when intentID is "", else a resolved one posted as intentID, noting
	// its reversal.
	DeleteReviewItem(ctx context.Context, tenant, id, intentID, reversalID, by string) (bool, error)
}

// reviewIntentID is the deterministic id an item's booking is posted
// under: uuid v5 in the item's namespace of "confirm", or of "override:"
// and the draft's hash, so a retried or double-clicked request posts once.
func reviewIntentID(itemID, op string, draft *Suggestion) string {
	name := op
	if draft != nil {
		b, _ := json.Marshal(draft.Booking(false))
		h := sha256.Sum256(b)
		name += ":" + hex.EncodeToString(h[:])
	}
	return uuid.NewSHA1(uuid.MustParse(itemID), []byte(name)).String()
}

func actorOf(r Request) string {
	if a := r.Claims.Actor(); a != "" {
		return a
	}
	return "system"
}

// CreateReviewItem adds an item for another service. Its draft may be
// incomplete (that is what review is for) but must be well formed.
func (s *Service) CreateReviewItem(ctx context.Context, in ledgerv1.ReviewItemInput) (ReviewItem, bool, error) {
	var details []errs.Detail
	if !ValidID(in.TenantID) {
		details = append(details, errs.Field("tenant_id", "required UUID"))
	}
	if in.ID != "" && !ValidID(in.ID) {
		details = append(details, errs.Field("id", "must be a UUID"))
	}
	switch in.SourceType {
	case ledgerv1.ReviewSourceDocument, ledgerv1.ReviewSourceBankTransaction, ledgerv1.ReviewSourceManual:
	default:
		details = append(details, errs.Field("source_type", "one of document, bank_transaction, manual"))
	}
	if utf8.RuneCountInString(in.SourceID) > MaxSourceID {
		details = append(details, errs.Field("source_id", fmt.Sprintf("at most %d characters", MaxSourceID)))
	}
	if in.DocumentID != "" && !ValidID(in.DocumentID) {
		details = append(details, errs.Field("document_id", "must be a UUID"))
	}
	if in.SourceType == ledgerv1.ReviewSourceDocument && in.DocumentID == "" {
		details = append(details, errs.Field("document_id", "required for source_type document"))
	}
	if len(in.CreatedBy) > 200 {
		details = append(details, errs.Field("created_by", "at most 200 characters"))
	}
	var sug Suggestion
	if len(in.Suggestion) == 0 {
		details = append(details, errs.Field("suggestion", "required"))
	} else if err := natsx.Decode(in.Suggestion, &sug); err != nil {
		details = append(details, errs.As(under("suggestion", err)).Details...)
	}
	if len(details) > 0 {
		return ReviewItem{}, false, errs.Invalid("the review item is invalid", details...)
	}
	sug = sug.normalize()
	if err := sug.checkShape("suggestion"); err != nil {
		return ReviewItem{}, false, err
	}
	if err := s.ensureTenant(ctx, in.TenantID); err != nil {
		return ReviewItem{}, false, err
	}
	it := ReviewItem{ID: in.ID, SourceType: in.SourceType, SourceID: strings.TrimSpace(in.SourceID),
		LouSuggestion: sug, OriginalSuggestion: sug, CreatedBy: strings.TrimSpace(in.CreatedBy)}
	if it.ID == "" {
		it.ID = uuid.NewString()
	}
	if it.CreatedBy == "" {
		it.CreatedBy = "system"
	}
	if in.DocumentID != "" {
		if _, err := s.store.Document(ctx, in.TenantID, in.DocumentID); err != nil {
			return ReviewItem{}, false, err
		}
		it.DocumentID = &in.DocumentID
	}
	created, err := s.store.CreateReviewItem(ctx, in.TenantID, &it)
	return it, created, err
}

// ReviewItems lists the queue in creation order.
func (s *Service) ReviewItems(ctx context.Context, tenant string, f ReviewFilter) ([]ReviewItem, error) {
	if err := checkStatusFilter(f.Status); err != nil {
		return nil, err
	}
	if f.Limit < 1 || f.Limit > MaxReviewListSize || f.Offset < 0 {
		return nil, errs.Invalid("invalid pagination", errs.Field("limit", fmt.Sprintf("1 to %d", MaxReviewListSize)))
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return nil, err
	}
	return s.store.ReviewItems(ctx, tenant, f)
}

func checkStatusFilter(st string) error {
	switch st {
	case ReviewPending, ReviewConfirmed, ReviewOverridden, ReviewAll:
		return nil
	}
	return errs.Invalid("invalid status filter", errs.Field("status", "one of pending, confirmed, overridden, all"))
}

// ReviewCount counts the live items of a status and the pending ones.
func (s *Service) ReviewCount(ctx context.Context, tenant, status string) (count, pending int, err error) {
	if err := checkStatusFilter(status); err != nil {
		return 0, 0, err
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return 0, 0, err
	}
	return s.store.CountReviewItems(ctx, tenant, status)
}

// NextReviewItem returns the next pending item after afterID in creation
// order (the first when afterID is ""); NOT_FOUND when there is none.
func (s *Service) NextReviewItem(ctx context.Context, tenant, afterID string) (*ReviewItem, error) {
	if afterID != "" && !ValidID(afterID) {
		return nil, errs.Invalid("after_id must be a UUID", errs.Field("after_id", "UUID of a review item"))
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return nil, err
	}
	return s.store.NextReviewItem(ctx, tenant, afterID)
}

func (s *Service) reviewItem(ctx context.Context, tenant, id string) (*ReviewItem, error) {
	if !ValidID(id) {
		return nil, errs.NotFoundf("review item %s not found", truncate(id, 40))
	}
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return nil, err
	}
	return s.store.ReviewItem(ctx, tenant, id)
}

// ReviewItem returns one item with its document's metadata.
func (s *Service) ReviewItem(ctx context.Context, tenant, id string) (*ReviewItem, error) {
	it, err := s.reviewItem(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if it.DocumentID != nil {
		d, err := s.store.Document(ctx, tenant, *it.DocumentID)
		if err != nil {
			return nil, err
		}
		it.Document = &d
	}
	return it, nil
}

// pendingItem reads an item whose draft may change: pending, and not being
// posted.
func (s *Service) pendingItem(ctx context.Context, tenant, id string) (*ReviewItem, error) {
	it, err := s.reviewItem(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if !it.editable() {
		return nil, notPending(it)
	}
	return it, nil
}

// editable tells whether the item's draft may change: it is pending and no
// request is posting it.
func (it *ReviewItem) editable() bool { return it.Status == ReviewPending && it.Posting == "" }

func notPending(it *ReviewItem) error {
	if it.Status == ReviewPending {
		return errs.E(errs.ReviewItemNotPending, "review item %s is being posted by another request", it.ID)
	}
	return errs.E(errs.ReviewItemNotPending, "review item %s is %s, not pending", it.ID, it.Status)
}

// updateDraft stores a new draft for a pending item, refusing if the item
// changed since it was read.
func (s *Service) updateDraft(ctx context.Context, r Request, it *ReviewItem, sug Suggestion, c ReviewChange) (*ReviewItem, error) {
	if !it.editable() {
		return nil, notPending(it)
	}
	got, err := s.store.UpdateReviewDraft(ctx, r.Claims.TenantID, it.ID, it.Version, sug, c)
	if err != nil || got != nil {
		return got, err
	}
	now, err := s.store.ReviewItem(ctx, r.Claims.TenantID, it.ID)
	if err != nil {
		return nil, err
	}
	if !now.editable() {
		return nil, notPending(now)
	}
	return nil, errs.E(errs.Conflict, "review item %s was changed by another request; reload it and try again", it.ID)
}

// DraftUpdate is what the store saves as the answer to an idempotent draft
// change: the item as changed and the change; the route shapes its reply
// from it.
type DraftUpdate struct {
	Item   *ReviewItem
	Change ReviewChange
}

// AdjustResult answers an adjust instruction.
type AdjustResult struct {
	LouSuggestion Suggestion `json:"lou_suggestion"`
	Applied       []string   `json:"applied"`
}

// AdjustReview applies an instruction (see Adjust) to a pending item's
// draft and saves the result.
func (s *Service) AdjustReview(ctx context.Context, r Request, id, instruction string) (AdjustResult, error) {
	tenant := r.Claims.TenantID
	it, err := s.pendingItem(ctx, tenant, id)
	if err != nil {
		return AdjustResult{}, err
	}
	chart, err := s.chart(ctx, tenant)
	if err != nil {
		return AdjustResult{}, err
	}
	adjusted, applied, err := Adjust(it.LouSuggestion, instruction, chart)
	if err != nil {
		return AdjustResult{}, err
	}
	adjusted = adjusted.normalize()
	saved, err := s.updateDraft(ctx, r, it, adjusted, ReviewChange{Action: "adjust", By: actorOf(r), Applied: applied})
	if err != nil {
		return AdjustResult{}, err
	}
	return AdjustResult{LouSuggestion: saved.LouSuggestion, Applied: applied}, nil
}

// UpdateReviewDraft replaces a pending item's draft after validating it as
// strictly as a booking, and returns it normalised.
func (s *Service) UpdateReviewDraft(ctx context.Context, r Request, id string, sug Suggestion) (Suggestion, error) {
	tenant := r.Claims.TenantID
	it, err := s.pendingItem(ctx, tenant, id)
	if err != nil {
		return Suggestion{}, err
	}
	sug = sug.normalize()
	if err := sug.checkShape("lou_suggestion"); err != nil {
		return Suggestion{}, err
	}
	if err := s.ValidateBooking(ctx, tenant, sug.Booking(false)); err != nil {
		return Suggestion{}, err
	}
	saved, err := s.updateDraft(ctx, r, it, sug, ReviewChange{Action: "draft", By: actorOf(r)})
	if err != nil {
		return Suggestion{}, err
	}
	return saved.LouSuggestion, nil
}

// ReviewResult answers confirm and override.
type ReviewResult struct {
	Status     string `json:"status"`
	IntentID   string `json:"intent_id"`
	EventCount int    `json:"event_count"`
}

// ConfirmReview posts a pending item's draft through the review_queue
// channel. It is safe against double clicks and retries: the booking is
// posted under an intent id derived from the item, and the item is marked
// confirmed only while still pending, so a second confirm posts nothing
// and gets REVIEW_ITEM_NOT_PENDING (or, with the same Idempotency-Key, the
// first answer).
func (s *Service) ConfirmReview(ctx context.Context, r Request, id string, skipDuplicateCheck bool) (ReviewResult, error) {
	it, err := s.reviewItem(ctx, r.Claims.TenantID, id)
	if err != nil {
		return ReviewResult{}, err
	}
	return s.resolveReview(ctx, r, it, reviewConfirm, nil, skipDuplicateCheck)
}

// OverrideReview posts the given draft instead of the item's own and marks
// the item overridden, with the same guarantees as ConfirmReview.
func (s *Service) OverrideReview(ctx context.Context, r Request, id string, b Booking) (ReviewResult, error) {
	it, err := s.reviewItem(ctx, r.Claims.TenantID, id)
	if err != nil {
		return ReviewResult{}, err
	}
	draft := Suggestion{BookingDate: b.BookingDate, Description: b.Description, Lines: b.Lines}.normalize()
	return s.resolveReview(ctx, r, it, reviewOverride, &draft, b.SkipDuplicateCheck)
}

func resolvedStatus(op string) string {
	if op == reviewOverride {
		return ReviewOverridden
	}
	return ReviewConfirmed
}

// idemOf identifies the caller's Idempotency-Key (hashed with the actor),
// or is "" without one.
func idemOf(r Request) string {
	if r.IdempotencyKey == "" {
		return ""
	}
	h := sha256.Sum256([]byte(actorOf(r) + "\x00" + r.IdempotencyKey))
	return hex.EncodeToString(h[:])
}

func (s *Service) resolveReview(ctx context.Context, r Request, it *ReviewItem, op string, draft *Suggestion, skip bool) (ReviewResult, error) {
	tenant := r.Claims.TenantID
	intentID := reviewIntentID(it.ID, op, draft)
	if it.Status != ReviewPending {
		return s.replayResolution(it, r, op, intentID)
	}
	if draft != nil {
		// Bad input changes nothing: check the override before claiming.
		if err := s.ValidateBooking(ctx, tenant, draft.Booking(skip)); err != nil {
			return ReviewResult{}, err
		}
	}
	if it.Posting != "" && it.PostingIntentID != intentID {
		if err := s.settleClaim(ctx, tenant, it); err != nil {
			return ReviewResult{}, err
		}
	}
	token := uuid.NewString()
	claimed, err := s.store.ClaimReviewItem(ctx, tenant, it.ID, ReviewClaim{Op: op, IntentID: intentID, Token: token, Draft: draft})
	if err != nil {
		return ReviewResult{}, err
	}
	if claimed == nil {
		now, err := s.store.ReviewItem(ctx, tenant, it.ID)
		if err != nil {
			return ReviewResult{}, err
		}
		if now.Status != ReviewPending {
			return s.replayResolution(now, r, op, intentID)
		}
		return ReviewResult{}, notPending(now)
	}
	b := claimed.LouSuggestion.Booking(skip)
	if draft != nil {
		b = draft.Booking(skip)
	}
	posted, err := s.bookWithID(ctx, r, b, intentID, deref(claimed.DocumentID))
	if err != nil {
		// A twin request may have posted it, or the posting committed
		// although this call failed: then it stands and is finished here.
		d, derr := s.store.IntentDetail(ctx, tenant, intentID)
		if derr != nil {
			if clientError(err) && errs.Is(derr, errs.NotFound) {
				_, _ = s.store.ReleaseReviewClaim(ctx, tenant, it.ID, intentID, 0)
			}
			return ReviewResult{}, err
		}
		posted = Posted{IntentID: intentID, EventCount: d.Summary.EventCount}
	}
	status := resolvedStatus(op)
	ok, err := s.store.ResolveReviewItem(ctx, tenant, it.ID, ReviewResolution{Status: status, IntentID: intentID,
		EventCount: posted.EventCount, By: actorOf(r), Idem: idemOf(r)})
	if err != nil {
		return ReviewResult{}, err
	}
	if !ok {
		now, err := s.store.ReviewItem(ctx, tenant, it.ID)
		if err != nil {
			return ReviewResult{}, err
		}
		// A concurrent request of another operation may have found our
		// committed posting and finished the item with it on our behalf
		// (settleClaim resolves as "system"): the resolution is ours if we
		// claimed last. Identical requests share one claim, and only one
		// of them may succeed; an identical request that resolved first
		// won, and we did not.
		if now.Status == status && now.IntentID != nil && *now.IntentID == intentID &&
			now.ResolvedBy != nil && *now.ResolvedBy == "system" && now.PostingToken == token {
			return ReviewResult{Status: status, IntentID: intentID, EventCount: posted.EventCount}, nil
		}
		return s.replayResolution(now, r, op, intentID)
	}
	return ReviewResult{Status: status, IntentID: intentID, EventCount: posted.EventCount}, nil
}

// replayResolution answers a request for an item no longer pending: the
// first answer again when it is the same operation repeated with the same
// Idempotency-Key, else REVIEW_ITEM_NOT_PENDING.
func (s *Service) replayResolution(it *ReviewItem, r Request, op, intentID string) (ReviewResult, error) {
	if idem := idemOf(r); idem != "" && it.ResolvedIdem == idem && it.Status == resolvedStatus(op) &&
		it.IntentID != nil && *it.IntentID == intentID && it.EventCount != nil {
		return ReviewResult{Status: it.Status, IntentID: intentID, EventCount: *it.EventCount}, nil
	}
	return ReviewResult{}, notPending(it)
}

// settleClaim deals with a claim of another posting on a pending item: if
// that posting committed, the item is finished with it (and the caller
// gets REVIEW_ITEM_NOT_PENDING); if it was interrupted long enough ago,
// the claim is dropped; otherwise it is still running.
func (s *Service) settleClaim(ctx context.Context, tenant string, it *ReviewItem) error {
	d, err := s.store.IntentDetail(ctx, tenant, it.PostingIntentID)
	switch {
	case err == nil:
		status := resolvedStatus(it.Posting)
		if _, err := s.store.ResolveReviewItem(ctx, tenant, it.ID, ReviewResolution{Status: status, IntentID: it.PostingIntentID,
			EventCount: d.Summary.EventCount, By: "system"}); err != nil {
			return err
		}
		return errs.E(errs.ReviewItemNotPending, "review item %s is %s, not pending", it.ID, status)
	case !errs.Is(err, errs.NotFound):
		return err
	}
	released, err := s.store.ReleaseReviewClaim(ctx, tenant, it.ID, it.PostingIntentID, reviewClaimTTL)
	if err != nil {
		return err
	}
	if !released {
		return notPending(it)
	}
	return nil
}

// clientError reports a definite refusal (the posting did not happen and
// will not), as opposed to a failure whose outcome is unknown.
func clientError(err error) bool {
	switch errs.CodeOf(err) {
	case errs.Internal, errs.Timeout, errs.Unavailable, errs.IdempotencyKeyInProgress:
		return false
	}
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// bookWithID is Book with a chosen intent id and the review_queue
// channel. The store answers an intent id it already holds with that
// intent, so posting twice under one id posts once.
func (s *Service) bookWithID(ctx context.Context, r Request, b Booking, intentID, documentID string) (Posted, error) {
	return s.postAs(ctx, r.Claims.TenantID, b, &Intent{ID: intentID, Source: "review_queue", DocumentID: documentID,
		Provenance: provenance(r.Claims, "review_queue")})
}

// postAs validates b and posts it as the intent in describes (id, source,
// document, provenance).
func (s *Service) postAs(ctx context.Context, tenant string, b Booking, in *Intent) (Posted, error) {
	chart, err := s.chart(ctx, tenant)
	if err != nil {
		return Posted{}, err
	}
	date, events, err := Expand(b, chart)
	if err != nil {
		return Posted{}, err
	}
	in.TenantID, in.BookingDate, in.Description, in.Events = tenant, date, strings.TrimSpace(b.Description), events
	in.Fingerprint = Fingerprint(date, b.Description, events)
	in.SkipDuplicateCheck = b.SkipDuplicateCheck
	posted, _, err := s.store.Post(ctx, in)
	return posted, err
}

// DeleteResult answers the deletion of a review item.
type DeleteResult struct {
	OK               bool   `json:"ok"`
	Reversed         bool   `json:"reversed"`
	ReversalIntentID string `json:"reversal_intent_id,omitempty"`
}

// DeleteReview removes an item from the queue. A pending item is simply
// dropped (soft delete, its history stays); a confirmed or overridden item
// has its booking reversed first. Repeating the deletion of a resolved
// item after an interruption finds the reversal instead of reversing again.
func (s *Service) DeleteReview(ctx context.Context, r Request, id string) (DeleteResult, error) {
	tenant := r.Claims.TenantID
	it, err := s.reviewItem(ctx, tenant, id)
	if err != nil {
		return DeleteResult{}, err
	}
	if it.Status == ReviewPending && it.Posting != "" {
		// An interrupted confirm or override: finish or drop it first.
		if err := s.settleClaim(ctx, tenant, it); err != nil && !errs.Is(err, errs.ReviewItemNotPending) {
			return DeleteResult{}, err
		}
		if it, err = s.store.ReviewItem(ctx, tenant, id); err != nil {
			return DeleteResult{}, err
		}
		if it.Status == ReviewPending && it.Posting != "" {
			return DeleteResult{}, notPending(it)
		}
	}
	if it.Status == ReviewPending {
		ok, err := s.store.DeleteReviewItem(ctx, tenant, id, "", "", actorOf(r))
		if err != nil {
			return DeleteResult{}, err
		}
		if !ok {
			return DeleteResult{}, errs.E(errs.Conflict, "review item %s was changed by another request; reload it and try again", id)
		}
		return DeleteResult{OK: true}, nil
	}
	intent := *it.IntentID
	rev, _, err := s.Reverse(ctx, Request{Claims: r.Claims, Channel: "reversal"}, ReverseRequest{IntentID: intent, Reason: "review item deleted"})
	revID := rev.ReversalIntentID
	if errs.Is(err, errs.AlreadyReversed) {
		d, derr := s.store.IntentDetail(ctx, tenant, intent)
		if derr != nil {
			return DeleteResult{}, derr
		}
		if d.ReversedBy == nil {
			return DeleteResult{}, err
		}
		revID, err = *d.ReversedBy, nil
	}
	if err != nil {
		return DeleteResult{}, err
	}
	ok, err := s.store.DeleteReviewItem(ctx, tenant, id, intent, revID, actorOf(r))
	if err != nil {
		return DeleteResult{}, err
	}
	if !ok {
		// A concurrent deletion finished first; the booking is reversed either way.
		if _, err := s.store.ReviewItem(ctx, tenant, id); !errs.Is(err, errs.NotFound) {
			return DeleteResult{}, errs.E(errs.Conflict, "review item %s was changed by another request; reload it and try again", id)
		}
	}
	return DeleteResult{OK: true, Reversed: true, ReversalIntentID: revID}, nil
}
