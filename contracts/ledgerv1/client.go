package ledgerv1

import (
	"context"
	"net/url"
	"strconv"

	"github.com/ledgerplatform/ledger/contracts/rpc"
)

// Client is the typed client of the ledger for other services. Internal
// commands name their tenant in the request, and the client sends it as
// the tenant of the calling service's own signed principal
// (rpc.ForTenant), never in the body; the other calls act for the caller
// whose claims travel in ctx. Error replies come back as *errs.Error
// with the ledger's code, message and details.
type Client struct{ C rpc.Caller }

// Post posts a booking under the caller's deterministic intent id
// (SubjectPost).
func (c Client) Post(ctx context.Context, r PostRequest) (Posted, error) {
	ctx, r.TenantID = rpc.ForTenant(ctx, r.TenantID), ""
	return rpc.Send[Posted](ctx, c.C, SubjectPost, r)
}

// CreateReviewItem proposes a booking draft for the review queue
// (SubjectReviewCreate); Created is false when the id or the live source
// already had an item.
func (c Client) CreateReviewItem(ctx context.Context, in ReviewItemInput) (ReviewItemCreated, error) {
	ctx, in.TenantID = rpc.ForTenant(ctx, in.TenantID), ""
	return rpc.Send[ReviewItemCreated](ctx, c.C, SubjectReviewCreate, in)
}

// SetPeriodLock sets the lock state of a tenant's period
// (SubjectSetPeriodLock).
func (c Client) SetPeriodLock(ctx context.Context, cmd SetPeriodLock) (PeriodLockSet, error) {
	ctx, cmd.TenantID = rpc.ForTenant(ctx, cmd.TenantID), ""
	return rpc.Send[PeriodLockSet](ctx, c.C, SubjectSetPeriodLock, cmd)
}

// JournalFeed reads a page of a tenant's journal in number order
// (SubjectJournalFeed).
func (c Client) JournalFeed(ctx context.Context, r JournalFeedRequest) (JournalFeed, error) {
	ctx, r.TenantID = rpc.ForTenant(ctx, r.TenantID), ""
	return rpc.Send[JournalFeed](ctx, c.C, SubjectJournalFeed, r)
}

// Account reads account number of the tenant's chart
// (SubjectAccountGet); an account the chart lacks is an *errs.Error with
// code NOT_FOUND.
func (c Client) Account(ctx context.Context, tenant, number string) (Account, error) {
	return rpc.Send[Account](rpc.ForTenant(ctx, tenant), c.C, SubjectAccountGet, AccountGet{Number: number})
}

// AccountBalance reads the balance of account number at the end of asOf
// (YYYY-MM-DD, "" for every entry) (SubjectAccountBalance); an account the
// chart lacks is an *errs.Error with code NOT_FOUND.
func (c Client) AccountBalance(ctx context.Context, tenant, number, asOf string) (AccountBalance, error) {
	return rpc.Send[AccountBalance](rpc.ForTenant(ctx, tenant), c.C, SubjectAccountBalance, AccountBalanceGet{Number: number, AsOf: asOf})
}

// VerifyChain recomputes the caller's hash chain (SubjectJournalVerify).
func (c Client) VerifyChain(ctx context.Context) (Verification, error) {
	return rpc.Send[Verification](ctx, c.C, SubjectJournalVerify, nil)
}

// Checkpoints lists the caller's signed chain checkpoints, oldest first
// (SubjectJournalCheckpoints).
func (c Client) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	out, err := rpc.Send[CheckpointList](ctx, c.C, SubjectJournalCheckpoints, nil)
	return out.Checkpoints, err
}

// Accounts reads a page of the caller's chart of accounts
// (SubjectAccountsList).
func (c Client) Accounts(ctx context.Context, f AccountFilter) (AccountPage, error) {
	q := url.Values{}
	for _, p := range []struct{ name, value string }{{"q", f.Q}, {"category", f.Category}, {"type", f.Type}} {
		if p.value != "" {
			q.Set(p.name, p.value)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		q.Set("offset", strconv.Itoa(f.Offset))
	}
	return rpc.Query[AccountPage](ctx, c.C, SubjectAccountsList, q)
}

// TaxCodes reads the caller's tax codes, deactivated ones too when
// includeInactive (SubjectTaxCodesList).
func (c Client) TaxCodes(ctx context.Context, includeInactive bool) ([]TaxCode, error) {
	var q url.Values
	if includeInactive {
		q = url.Values{"include_inactive": {"true"}}
	}
	out, err := rpc.Query[TaxCodeList](ctx, c.C, SubjectTaxCodesList, q)
	return out.TaxCodes, err
}

// ReviewCount counts the caller's review-queue items of a status ("" for
// pending) (SubjectReviewCount).
func (c Client) ReviewCount(ctx context.Context, status string) (ReviewCount, error) {
	var q url.Values
	if status != "" {
		q = url.Values{"status": {status}}
	}
	return rpc.Query[ReviewCount](ctx, c.C, SubjectReviewCount, q)
}

// Reverse reverses one of the tenant's intents (SubjectJournalReverse)
// under the calling service's own principal for tenant. The caller puts
// its idempotency key in ctx (natsx.WithIdempotencyKey), so a retry
// answers the reversal made the first time instead of ALREADY_REVERSED.
func (c Client) Reverse(ctx context.Context, tenant string, r ReverseRequest) (Reversed, error) {
	return rpc.Send[Reversed](rpc.ForTenant(ctx, tenant), c.C, SubjectJournalReverse, r)
}

// ReversedBy answers the intent that reversed intentID, "" while none
// did: a caller whose reversal is refused as ALREADY_REVERSED (its
// idempotency key expired, or someone reversed the intent by hand) learns
// which reversal stands.
func (c Client) ReversedBy(ctx context.Context, tenant, intentID string) (string, error) {
	var d struct {
		ReversedBy *string `json:"reversed_by"`
	}
	if err := c.C.CallQuery(rpc.ForTenant(ctx, tenant), SubjectJournalGet, url.Values{"intent_id": {intentID}}, nil, &d); err != nil {
		return "", err
	}
	if d.ReversedBy == nil {
		return "", nil
	}
	return *d.ReversedBy, nil
}
