package reporting

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// The projection: debit and credit turnover per tenant, account and period
// (YYYY-MM, or YYYY-13 for a year's adjustment period), fed by the ledger's
// intent_posted events. Each tenant's projection records the last journal
// number it has folded in; an event at or below it was applied already, an
// event that does not start right after it reveals a gap (a lost or
// reordered event, or a projection started after the stream's retention),
// and the projection then catches up from the ledger's journal feed, which
// is the source of truth. Reports read only the projection.

// FeedPage is the page size asked of the ledger's journal feed (its maximum).
const FeedPage = 5000

// Delta is a change of one balance row: turnover added to an account in a
// period.
type Delta struct {
	Account string
	Period  string
	Debit   money.Amount
	Credit  money.Amount
}

// ProjectionTx is a tenant's projection inside one transaction that holds
// the lock on the tenant's head.
type ProjectionTx interface {
	// Head is the last journal number applied (0 for a new projection).
	Head() int64
	// Apply adds deltas to the balances (one statement) and moves the head
	// to head.
	Apply(ctx context.Context, deltas []Delta, head int64) error
	// Reset removes every balance of the tenant and sets the head to 0.
	Reset(ctx context.Context) error
}

// ProjectionStore keeps balances per tenant, account and period.
type ProjectionStore interface {
	// Project runs fn in one transaction holding the lock on the tenant's
	// head row, which it creates at 0 when absent. fn may run more than once
	// (the transaction is retried on serialisation failures).
	Project(ctx context.Context, tenant string, fn func(ProjectionTx) error) error
	// Balances sums the tenant's balances per account over the windows of q.
	// Accounts without any row in the windows are left out.
	Balances(ctx context.Context, tenant string, q BalanceQuery) ([]AccountSums, error)
	// ProjectionHead is the last journal number applied for the tenant.
	ProjectionHead(ctx context.Context, tenant string) (int64, error)
}

// BalanceQuery names three windows of periods; "prior" is everything before
// the fiscal year, "ytd" the fiscal year up to the report's end and
// "period" the reported period itself (a part of ytd).
//
// Month periods compare as text (YYYY-MM); an adjustment period YYYY-13
// belongs to the fiscal year that ends in YYYY, so it is prior when it sorts
// before Closing, and in a window only when named there.
type BalanceQuery struct {
	Start   string // first month of the fiscal year (YYYY-MM)
	Closing string // the fiscal year's adjustment period (YYYY-13)
	// YTD: months Start..Through, plus Closing when YTDClosing.
	Through    string
	YTDClosing bool
	// Period: months PeriodFrom..PeriodTo (both empty for none), plus
	// Closing when PeriodClosing.
	PeriodFrom    string
	PeriodTo      string
	PeriodClosing bool
}

// AccountSums are one account's turnover in the windows of a BalanceQuery.
type AccountSums struct {
	Account      string
	PriorDebit   money.Amount
	PriorCredit  money.Amount
	YTDDebit     money.Amount
	YTDCredit    money.Amount
	PeriodDebit  money.Amount
	PeriodCredit money.Amount
}

var periodRe = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-3])$`)

// ErrMalformedEvent marks an intent_posted event that can never be applied
// (redelivering it cannot help); it is also INVALID_INPUT.
var ErrMalformedEvent = errors.New("malformed intent_posted event")

// ErrFeedBehind means the ledger's feed ended before an event the consumer
// holds; the event is retried later.
var ErrFeedBehind = errors.New("reporting: the journal feed ends before the event")

// ApplyPosted folds intent_posted events of one tenant into its projection
// in one transaction: events already covered by the head are skipped, the
// others are aggregated per account and period and applied with one
// statement. When an event does not follow the head (a gap), the projection
// catches up from the ledger's journal feed instead, up to the feed's head.
// A malformed event is ErrMalformedEvent; redelivering it cannot help.
func (s *Service) ApplyPosted(ctx context.Context, events ...ledgerv1.IntentPosted) error {
	if len(events) == 0 {
		return nil
	}
	tenant := events[0].TenantID
	for i := range events {
		if err := checkEvent(&events[i], tenant); err != nil {
			return malformed(err)
		}
	}
	events = slices.Clone(events)
	slices.SortStableFunc(events, func(a, b ledgerv1.IntentPosted) int { return cmp.Compare(a.FirstNumber, b.FirstNumber) })
	return s.store.Project(ctx, tenant, func(tx ProjectionTx) error {
		head := tx.Head()
		agg := newAggregate()
		for i, ev := range events {
			if ev.LastNumber <= head {
				continue // applied before: a redelivery
			}
			if ev.FirstNumber != head+1 {
				// A gap: apply what is aggregated so far, then let the feed
				// bring the projection up to the ledger's head.
				if err := tx.Apply(ctx, agg.deltas(), head); err != nil {
					return err
				}
				reached, err := s.catchUp(ctx, tx, tenant, head)
				if err != nil {
					return err
				}
				if reached < events[len(events)-1].LastNumber {
					// The feed ended before our events (it was read before they
					// committed, which cannot happen for a real ledger); try
					// the remaining events on the new head.
					rest := events[i:]
					return s.applyAfterCatchUp(ctx, tx, reached, rest)
				}
				return nil
			}
			for _, l := range ev.Events {
				if err := agg.add(l.AccountDebit, l.AccountCredit, ev.Period, l.Amount); err != nil {
					return malformed(err)
				}
			}
			head = ev.LastNumber
		}
		if head == tx.Head() {
			return nil
		}
		return tx.Apply(ctx, agg.deltas(), head)
	})
}

// applyAfterCatchUp applies the events that still lie beyond the head the
// feed reached; a gap left is ErrFeedBehind (the events are retried).
func (s *Service) applyAfterCatchUp(ctx context.Context, tx ProjectionTx, head int64, events []ledgerv1.IntentPosted) error {
	agg := newAggregate()
	start := head
	for _, ev := range events {
		if ev.LastNumber <= head {
			continue
		}
		if ev.FirstNumber != head+1 {
			if head != start {
				if err := tx.Apply(ctx, agg.deltas(), head); err != nil {
					return err
				}
			}
			return fmt.Errorf("%w: head %d, event %d-%d", ErrFeedBehind, head, ev.FirstNumber, ev.LastNumber)
		}
		for _, l := range ev.Events {
			if err := agg.add(l.AccountDebit, l.AccountCredit, ev.Period, l.Amount); err != nil {
				return malformed(err)
			}
		}
		head = ev.LastNumber
	}
	if head == start {
		return nil
	}
	return tx.Apply(ctx, agg.deltas(), head)
}

// catchUp pages through the ledger's journal feed after head, applying each
// page (aggregated per account and period, one statement), until the
// feed's head. It returns the last number applied. A tenant the ledger does
// not know (no journal yet) has nothing to apply.
func (s *Service) catchUp(ctx context.Context, tx ProjectionTx, tenant string, head int64) (int64, error) {
	for {
		feed, err := s.ledger.Feed(ctx, ledgerv1.JournalFeedRequest{TenantID: tenant, After: head, Limit: FeedPage})
		if errs.Is(err, errs.NotFound) {
			return head, nil
		}
		if err != nil {
			return head, errs.Wrap("reporting.catchUp", err)
		}
		if len(feed.Lines) == 0 {
			return head, nil
		}
		agg := newAggregate()
		last := head
		for _, l := range feed.Lines {
			if l.JournalNumber <= last {
				continue
			}
			if l.JournalNumber != last+1 {
				return head, fmt.Errorf("reporting.catchUp: the feed skips from %d to %d", last, l.JournalNumber)
			}
			period := l.Period
			if period == "" && len(l.BookingDate) >= 7 {
				period = l.BookingDate[:7]
			}
			if err := agg.add(l.AccountDebit, l.AccountCredit, period, l.Amount); err != nil {
				// The ledger's own data: retried (and noticed) rather than skipped.
				return head, fmt.Errorf("reporting.catchUp: journal number %d: %v", l.JournalNumber, err)
			}
			last = l.JournalNumber
		}
		if err := tx.Apply(ctx, agg.deltas(), last); err != nil {
			return head, err
		}
		head = last
		if head >= feed.Head {
			return head, nil
		}
	}
}

// RebuildResult reports a rebuilt projection.
type RebuildResult struct {
	TenantID   string `json:"tenant_id"`
	LastNumber int64  `json:"last_number"`
	DurationMS int64  `json:"duration_ms"`
}

// Rebuild drops a tenant's projection and builds it again from the ledger's
// journal feed, in one transaction: reports see the old balances until the
// new ones are complete.
func (s *Service) Rebuild(ctx context.Context, tenant string) (RebuildResult, error) {
	if uuid.Validate(tenant) != nil {
		return RebuildResult{}, errs.Invalid("tenant_id must be a UUID", errs.Field("tenant_id", "required, a UUID"))
	}
	start := time.Now()
	var last int64
	err := s.store.Project(ctx, tenant, func(tx ProjectionTx) error {
		if err := tx.Reset(ctx); err != nil {
			return err
		}
		var err error
		last, err = s.catchUp(ctx, tx, tenant, 0)
		return err
	})
	if err != nil {
		return RebuildResult{}, errs.Wrap("reporting.Rebuild", err)
	}
	return RebuildResult{TenantID: tenant, LastNumber: last, DurationMS: time.Since(start).Milliseconds()}, nil
}

// malformed marks err as ErrMalformedEvent while keeping its client code.
func malformed(err error) error {
	return &errs.Error{Code: errs.InvalidInput, Message: err.Error(), Err: ErrMalformedEvent}
}

func checkEvent(ev *ledgerv1.IntentPosted, tenant string) error {
	switch {
	case uuid.Validate(ev.TenantID) != nil:
		return errs.Invalid("intent_posted: tenant_id must be a UUID")
	case ev.TenantID != tenant:
		return errs.Invalid("intent_posted: events of several tenants in one batch")
	case ev.FirstNumber < 1 || ev.LastNumber < ev.FirstNumber:
		return errs.Invalid(fmt.Sprintf("intent_posted: bad journal numbers %d-%d", ev.FirstNumber, ev.LastNumber))
	case int64(len(ev.Events)) != ev.LastNumber-ev.FirstNumber+1:
		return errs.Invalid(fmt.Sprintf("intent_posted: %d events for numbers %d-%d", len(ev.Events), ev.FirstNumber, ev.LastNumber))
	}
	if ev.Period == "" && len(ev.BookingDate) >= 7 {
		ev.Period = ev.BookingDate[:7]
	}
	if !periodRe.MatchString(ev.Period) {
		return errs.Invalid(fmt.Sprintf("intent_posted: bad period %q", ev.Period))
	}
	return nil
}

// aggregate sums turnover per account and period.
type aggregate struct {
	idx map[[2]string]int
	out []Delta
}

func newAggregate() *aggregate { return &aggregate{idx: map[[2]string]int{}} }

func (a *aggregate) add(debit, credit, period, amount string) error {
	if !periodRe.MatchString(period) {
		return errs.Invalid(fmt.Sprintf("journal line with bad period %q", period))
	}
	amt, err := money.Parse(amount)
	if err != nil || debit == "" || credit == "" {
		return errs.Invalid(fmt.Sprintf("journal line with bad amount %q or accounts %q/%q", amount, debit, credit))
	}
	d := a.row(debit, period)
	d.Debit = d.Debit.Add(amt)
	c := a.row(credit, period) // may grow the slice: d is not used after this
	c.Credit = c.Credit.Add(amt)
	return nil
}

func (a *aggregate) row(account, period string) *Delta {
	k := [2]string{account, period}
	i, ok := a.idx[k]
	if !ok {
		i = len(a.out)
		a.idx[k] = i
		a.out = append(a.out, Delta{Account: account, Period: period, Debit: money.Zero, Credit: money.Zero})
	}
	return &a.out[i]
}

// deltas returns the sums in a stable order (account, period), which also
// keeps concurrent upserts from deadlocking on each other's rows.
func (a *aggregate) deltas() []Delta {
	slices.SortFunc(a.out, func(x, y Delta) int {
		return cmp.Or(cmp.Compare(x.Account, y.Account), cmp.Compare(x.Period, y.Period))
	})
	a.idx = nil // the order changed; the aggregate is done
	return a.out
}

// caughtUp brings a tenant's projection up to the ledger's head the first
// time this process reports on it. Events keep it current afterwards (a
// gap in them triggers the same catch-up), but a projection that starts on
// an existing journal, or whose stream lost events to retention, sees no
// event that would reveal it is behind.
func (s *Service) caughtUp(ctx context.Context, tenant string) error {
	if _, done := s.checked.Load(tenant); done {
		return nil
	}
	err := s.store.Project(ctx, tenant, func(tx ProjectionTx) error {
		_, err := s.catchUp(ctx, tx, tenant, tx.Head())
		return err
	})
	if err != nil {
		return errs.Wrap("reporting.caughtUp", err)
	}
	s.checked.Store(tenant, true)
	return nil
}
