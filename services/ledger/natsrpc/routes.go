// Package natsrpc is the ledger's NATS route table: each subject with the
// decoder of its typed request and the service method that answers it.
package natsrpc

import (
	"context"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// postingWorkers is how many postings of one subject an instance takes at
// once. A posting waits for its tenant's group commit; a request queued
// behind it on the same subscription would miss that commit, so the
// posting routes get enough subscriptions that this is rare.
const postingWorkers = 1024

// Routes serves svc. Every route but the internal ones acts for the
// caller's tenant (the daemon requires it); postings keep their
// Idempotency-Key inside the posting transaction, adjust claims it in the
// transaction of the draft change (pkg/idem).
func Routes(svc *ledger.Service) []natsx.Route {
	return []natsx.Route{
		// Journal.
		{Subject: ledgerv1.SubjectBookingsCreate, Workers: postingWorkers, Decode: natsx.JSON[ledger.Booking], Endpoint: natsx.Typed(func(ctx context.Context, b ledger.Booking) (*natsx.Response, error) {
			return answer(svc.Book(ctx, request(ctx, "rest"), b, "", ""))(201)
		})},
		{Subject: ledgerv1.SubjectJournalReverse, Decode: natsx.JSON[ledger.ReverseRequest], Endpoint: natsx.Typed(func(ctx context.Context, rr ledger.ReverseRequest) (*natsx.Response, error) {
			return answer(svc.Reverse(ctx, request(ctx, "reversal"), rr))(201)
		})},
		{Subject: ledgerv1.SubjectJournalList, Decode: journalFilter, Endpoint: natsx.Typed(func(ctx context.Context, f ledger.JournalFilter) (page, error) {
			entries, err := svc.Journal(ctx, tenant(ctx), f)
			return page{"entries": entries, "limit": f.Limit, "offset": f.Offset}, err
		})},
		{Subject: ledgerv1.SubjectJournalGet, Decode: natsx.PathParam("intent_id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (*ledger.IntentDetail, error) {
			return svc.Intent(ctx, tenant(ctx), id)
		})},
		{Subject: ledgerv1.SubjectJournalVerify, Decode: fullChain, Endpoint: natsx.Typed(func(ctx context.Context, full bool) (ledger.Verification, error) {
			return svc.Verify(ctx, tenant(ctx), full)
		})},
		{Subject: ledgerv1.SubjectJournalCheckpoints, Decode: natsx.Nothing, Endpoint: natsx.Typed(func(ctx context.Context, _ struct{}) (ledgerv1.CheckpointList, error) {
			return svc.Checkpoints(ctx, tenant(ctx))
		})},
		// Commands of other services: the tenant is the one of the calling
		// service's signed principal, never the body's.
		{Subject: ledgerv1.SubjectJournalFeed, Callers: []string{"reporting"}, Decode: natsx.JSON[ledgerv1.JournalFeedRequest], Endpoint: natsx.Typed(func(ctx context.Context, r ledgerv1.JournalFeedRequest) (ledgerv1.JournalFeed, error) {
			var err error
			if r.TenantID, err = natsx.Tenant(ctx, r.TenantID); err != nil {
				return ledgerv1.JournalFeed{}, err
			}
			return svc.JournalFeed(ctx, r)
		})},
		{Subject: ledgerv1.SubjectSetPeriodLock, Callers: []string{"periods"}, Decode: natsx.JSON[ledgerv1.SetPeriodLock], Endpoint: natsx.Typed(func(ctx context.Context, cmd ledgerv1.SetPeriodLock) (ledgerv1.PeriodLockSet, error) {
			tenant, err := natsx.Tenant(ctx, cmd.TenantID)
			if err == nil {
				err = svc.SetPeriodLock(ctx, tenant, cmd.Period, cmd.Status, cmd.LockedBy)
			}
			return ledgerv1.PeriodLockSet{OK: err == nil, Period: cmd.Period, Status: cmd.Status}, err
		})},
		{Subject: ledgerv1.SubjectPost, Callers: []string{"bank", "receivables", "payables"}, Workers: postingWorkers, Decode: natsx.JSON[ledgerv1.PostRequest], Endpoint: natsx.Typed(func(ctx context.Context, r ledgerv1.PostRequest) (ledger.Posted, error) {
			var err error
			if r.TenantID, err = natsx.Tenant(ctx, r.TenantID); err != nil {
				return ledger.Posted{}, err
			}
			return svc.PostFor(ctx, r)
		})},
		{Subject: ledgerv1.SubjectAccountGet, Callers: []string{"bank", "receivables", "payables"}, Decode: natsx.JSON[ledgerv1.AccountGet], Endpoint: natsx.Typed(func(ctx context.Context, r ledgerv1.AccountGet) (ledger.Account, error) {
			tenant, err := natsx.Tenant(ctx, r.TenantID)
			if err != nil {
				return ledger.Account{}, err
			}
			return svc.AccountFor(ctx, tenant, r.Number)
		})},
		{Subject: ledgerv1.SubjectAccountBalance, Callers: []string{"bank"}, Decode: natsx.JSON[ledgerv1.AccountBalanceGet], Endpoint: natsx.Typed(func(ctx context.Context, r ledgerv1.AccountBalanceGet) (ledgerv1.AccountBalance, error) {
			tenant, err := natsx.Tenant(ctx, r.TenantID)
			if err != nil {
				return ledgerv1.AccountBalance{}, err
			}
			return svc.AccountBalance(ctx, tenant, r)
		})},

		// Chart of accounts and tax codes.
		{Subject: ledgerv1.SubjectAccountsList, Decode: accountFilter, Endpoint: natsx.Typed(func(ctx context.Context, f ledger.AccountFilter) (ledger.AccountPage, error) {
			return svc.Accounts(ctx, tenant(ctx), f)
		})},
		{Subject: ledgerv1.SubjectAccountsCreate, Decode: natsx.JSON[ledger.AccountInput], Endpoint: natsx.Typed(func(ctx context.Context, in ledger.AccountInput) (*natsx.Response, error) {
			return answer(svc.CreateAccount(ctx, request(ctx, "rest"), in))(201)
		})},
		{Subject: ledgerv1.SubjectAccountsSearch, Decode: accountSearch, Endpoint: natsx.Typed(func(ctx context.Context, f ledger.AccountSearch) (page, error) {
			hits, err := svc.SearchAccounts(ctx, tenant(ctx), f)
			return page{"accounts": hits}, err
		})},
		{Subject: ledgerv1.SubjectAccountsEntries, Decode: entriesQuery, Endpoint: natsx.Typed(func(ctx context.Context, q natsx.WithID[ledger.EntriesQuery]) (*ledger.AccountEntries, error) {
			return svc.AccountEntries(ctx, tenant(ctx), q.ID, q.Body)
		})},
		{Subject: ledgerv1.SubjectTaxCodesList, Decode: includeInactive, Endpoint: natsx.Typed(func(ctx context.Context, all bool) (ledgerv1.TaxCodeList, error) {
			codes, err := svc.TaxCodes(ctx, tenant(ctx), all)
			return ledgerv1.TaxCodeList{TaxCodes: codes}, err
		})},
		{Subject: ledgerv1.SubjectTaxCodesUpdate, Decode: taxCodePatch, Endpoint: natsx.Typed(func(ctx context.Context, p natsx.WithID[ledger.TaxCodePatch]) (*natsx.Response, error) {
			return answer(svc.UpdateTaxCode(ctx, request(ctx, "rest"), p.ID, p.Body))(200)
		})},

		// Documents: multipart/form-data bodies of up to 11 MB (a file of at
		// most 10 MB) passed through by the gateway.
		{Subject: ledgerv1.SubjectDocumentsUpload, Decode: upload, Endpoint: natsx.Typed(func(ctx context.Context, u form) (*natsx.Response, error) {
			// 201 with the new document; 200 with the one of the same bytes.
			d, created, err := svc.UploadDocument(ctx, request(ctx, "rest"), u.ContentType, u.Body)
			return &natsx.Response{Status: map[bool]int{true: 201, false: 200}[created], Body: documentBody(d)}, err
		})},
		{Subject: ledgerv1.SubjectDocumentsFile, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (*natsx.Response, error) {
			d, content, err := svc.DocumentFile(ctx, tenant(ctx), id)
			return &natsx.Response{Raw: content, ContentType: d.MimeType, Disposition: d.Disposition()}, err
		})},
		{Subject: ledgerv1.SubjectBookingsWithDocument, Decode: upload, Endpoint: natsx.Typed(func(ctx context.Context, u form) (*natsx.Response, error) {
			return answer(svc.BookWithDocument(ctx, request(ctx, "document"), u.ContentType, u.Body))(201)
		})},

		// Review queue.
		{Subject: ledgerv1.SubjectReviewList, Decode: reviewFilter, Endpoint: natsx.Typed(func(ctx context.Context, f ledger.ReviewFilter) (page, error) {
			items, err := svc.ReviewItems(ctx, tenant(ctx), f)
			return page{"items": items, "limit": f.Limit, "offset": f.Offset}, err
		})},
		{Subject: ledgerv1.SubjectReviewCount, Decode: reviewStatus, Endpoint: natsx.Typed(func(ctx context.Context, status string) (ledgerv1.ReviewCount, error) {
			count, pending, err := svc.ReviewCount(ctx, tenant(ctx), status)
			return ledgerv1.ReviewCount{Count: count, Pending: pending}, err
		})},
		{Subject: ledgerv1.SubjectReviewNext, Decode: natsx.QueryParam("after_id"), Endpoint: natsx.Typed(func(ctx context.Context, afterID string) (*ledger.ReviewItem, error) {
			return svc.NextReviewItem(ctx, tenant(ctx), afterID)
		})},
		{Subject: ledgerv1.SubjectReviewGet, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (*ledger.ReviewItem, error) {
			return svc.ReviewItem(ctx, tenant(ctx), id)
		})},
		{Subject: ledgerv1.SubjectReviewDelete, Decode: natsx.PathParam("id"), Endpoint: natsx.Typed(func(ctx context.Context, id string) (ledger.DeleteResult, error) {
			return svc.DeleteReview(ctx, request(ctx, "review_queue"), id)
		})},
		// Applying an instruction twice would change the draft twice.
		{Subject: ledgerv1.SubjectReviewAdjust, Idempotent: true, Decode: natsx.DecodeWithID[adjustBody], Endpoint: natsx.Typed(func(ctx context.Context, in natsx.WithID[adjustBody]) (ledger.AdjustResult, error) {
			idem.Reply(ctx, func(v any) any {
				u := v.(ledger.DraftUpdate)
				return ledger.AdjustResult{LouSuggestion: u.Item.LouSuggestion, Applied: u.Change.Applied}
			})
			return svc.AdjustReview(ctx, request(ctx, "review_queue"), in.ID, in.Body.Instruction)
		})},
		{Subject: ledgerv1.SubjectReviewConfirm, Decode: natsx.DecodeWithID[confirmBody], Endpoint: natsx.Typed(func(ctx context.Context, in natsx.WithID[confirmBody]) (*natsx.Response, error) {
			res, err := svc.ConfirmReview(ctx, request(ctx, "review_queue"), in.ID, in.Body.SkipDuplicateCheck)
			return natsx.Created(res), err
		})},
		{Subject: ledgerv1.SubjectReviewDraft, Decode: natsx.DecodeWithID[draftBody], Endpoint: natsx.Typed(func(ctx context.Context, in natsx.WithID[draftBody]) (page, error) {
			if in.Body.LouSuggestion == nil {
				return nil, missing("lou_suggestion", "the full draft: booking_date, description, lines")
			}
			sug, err := svc.UpdateReviewDraft(ctx, request(ctx, "review_queue"), in.ID, *in.Body.LouSuggestion)
			return page{"lou_suggestion": sug}, err
		})},
		{Subject: ledgerv1.SubjectReviewOverride, Decode: natsx.DecodeWithID[overrideBody], Endpoint: natsx.Typed(func(ctx context.Context, in natsx.WithID[overrideBody]) (*natsx.Response, error) {
			if in.Body.BookingDraft == nil {
				return nil, missing("booking_draft", "the booking to post instead: booking_date, description, lines")
			}
			b := *in.Body.BookingDraft
			b.SkipDuplicateCheck = b.SkipDuplicateCheck || in.Body.SkipDuplicateCheck
			res, err := svc.OverrideReview(ctx, request(ctx, "review_queue"), in.ID, b)
			return natsx.Created(res), err
		})},
		// 201 for a new item, 200 when the id or the live source already has one.
		{Subject: ledgerv1.SubjectReviewCreate, Callers: []string{"bank"}, Decode: natsx.JSON[ledgerv1.ReviewItemInput], Endpoint: natsx.Typed(func(ctx context.Context, in ledgerv1.ReviewItemInput) (*natsx.Response, error) {
			var err error
			if in.TenantID, err = natsx.Tenant(ctx, in.TenantID); err != nil {
				return nil, err
			}
			it, created, err := svc.CreateReviewItem(ctx, in)
			return &natsx.Response{Status: map[bool]int{true: 201, false: 200}[created], Body: ledgerv1.ReviewItemCreated{ID: it.ID, Created: created}}, err
		})},
	}
}
