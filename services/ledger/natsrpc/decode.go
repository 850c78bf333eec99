package natsrpc

import (
	"context"
	"net/url"
	"time"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// page is a reply assembled from a few values.
type page = map[string]any

// tenant is the caller's tenant; the daemon refused requests without one.
func tenant(ctx context.Context) string { return natsx.Claims(ctx).TenantID }

// request bundles what commands need for idempotency and provenance.
func request(ctx context.Context, channel string) ledger.Request {
	return ledger.Request{Claims: natsx.Claims(ctx), IdempotencyKey: natsx.IdempotencyKey(ctx), Body: natsx.RequestFrom(ctx).Body, Channel: channel}
}

// answer replies with v and status, or with the first answer of a
// repeated Idempotency-Key.
func answer[T any](v T, rec *ledger.IdemRecord, err error) func(status int) (*natsx.Response, error) {
	return func(status int) (*natsx.Response, error) {
		switch {
		case err != nil:
			return nil, err
		case rec != nil:
			return &natsx.Response{Status: rec.Status, Body: rec.Body}, nil
		}
		return &natsx.Response{Status: status, Body: v}, nil
	}
}

type adjustBody struct {
	Instruction string `json:"instruction"`
}

type confirmBody struct {
	SkipDuplicateCheck bool `json:"skip_duplicate_check"`
}

type draftBody struct {
	LouSuggestion *ledger.Suggestion `json:"lou_suggestion"`
}

type overrideBody struct {
	BookingDraft       *ledger.Booking `json:"booking_draft"`
	SkipDuplicateCheck bool            `json:"skip_duplicate_check"`
}

func missing(field, what string) error {
	return errs.Invalid(field+" is required", errs.Field(field, "required: "+what))
}

// form is an upload: the body as sent, parsed by the service.
type form struct {
	ContentType string
	Body        []byte
}

func upload(_ context.Context, r *natsx.Request) (any, error) {
	return form{ContentType: r.ContentType, Body: r.Body}, nil
}

// documentBody is the upload's answer.
func documentBody(d ledger.Document) page {
	return page{"id": d.ID, "mime_type": d.MimeType, "original_name": d.OriginalName, "size_bytes": d.SizeBytes, "sha256": d.SHA256}
}

func taxCodePatch(_ context.Context, r *natsx.Request) (any, error) {
	p, err := ledger.ParseTaxCodePatch(r.Body)
	return natsx.WithID[ledger.TaxCodePatch]{ID: r.Param("code"), Body: p}, err
}

func includeInactive(_ context.Context, r *natsx.Request) (any, error) {
	return boolQuery(r, "include_inactive")
}

// fullChain decodes the query parameter full of the chain verification.
func fullChain(_ context.Context, r *natsx.Request) (any, error) { return boolQuery(r, "full") }

// boolQuery decodes the query parameter name: true, false or absent.
func boolQuery(r *natsx.Request, name string) (bool, error) {
	switch r.Query.Get(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, errs.Invalid("invalid query parameter "+name, errs.Field(name, "must be true or false"))
}

// limits decodes the query parameters limit (default def, at most max)
// and offset.
func limits(q url.Values, def, max int, limit, offset *int) error {
	var err error
	if *limit, err = natsx.IntQuery(q, "limit", def, 1, max); err != nil || offset == nil {
		return err
	}
	*offset, err = natsx.IntQuery(q, "offset", 0, 0, 1<<31-1)
	return err
}

func accountFilter(_ context.Context, r *natsx.Request) (any, error) {
	q := r.Query
	f := ledger.AccountFilter{Q: q.Get("q"), Category: q.Get("category"), Type: q.Get("type")}
	err := limits(q, ledger.DefaultAccountsLimit, ledger.MaxAccountsLimit, &f.Limit, &f.Offset)
	return f, err
}

func accountSearch(_ context.Context, r *natsx.Request) (any, error) {
	f := ledger.AccountSearch{Q: r.Query.Get("q"), Type: r.Query.Get("type")}
	err := limits(r.Query, ledger.DefaultSearchLimit, ledger.MaxSearchLimit, &f.Limit, nil)
	return f, err
}

func entriesQuery(_ context.Context, r *natsx.Request) (any, error) {
	q := r.Query
	eq := natsx.WithID[ledger.EntriesQuery]{ID: r.Param("number"), Body: ledger.EntriesQuery{StartDate: q.Get("startDate"), EndDate: q.Get("endDate")}}
	err := limits(q, ledger.DefaultEntriesLimit, ledger.MaxEntriesLimit, &eq.Body.Limit, &eq.Body.Offset)
	return eq, err
}

func reviewStatus(_ context.Context, r *natsx.Request) (any, error) {
	if s := r.Query.Get("status"); s != "" {
		return s, nil
	}
	return ledger.ReviewPending, nil
}

func reviewFilter(ctx context.Context, r *natsx.Request) (any, error) {
	status, _ := reviewStatus(ctx, r)
	f := ledger.ReviewFilter{Status: status.(string)}
	err := limits(r.Query, 50, ledger.MaxReviewListSize, &f.Limit, &f.Offset)
	return f, err
}

func journalFilter(_ context.Context, r *natsx.Request) (any, error) {
	q := r.Query
	var f ledger.JournalFilter
	if err := limits(q, 200, 1000, &f.Limit, &f.Offset); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		name string
		dst  **time.Time
	}{{"startDate", &f.From}, {"endDate", &f.To}} {
		if s := q.Get(d.name); s != "" {
			t, ok := ledger.ParseDate(s)
			if !ok {
				return nil, errs.Invalid("invalid query parameter "+d.name, errs.Field(d.name, "must be a date YYYY-MM-DD"))
			}
			*d.dst = &t
		}
	}
	if f.From != nil && f.To != nil && f.To.Before(*f.From) {
		return nil, errs.Invalid("endDate is before startDate", errs.Field("endDate", "must not be before startDate"))
	}
	f.Account = q.Get("account")
	if f.Account != "" && !accountNumber(f.Account) {
		return nil, errs.Invalid("invalid account", errs.Field("account", "1 to 8 digits"))
	}
	f.Search = q.Get("search")
	f.ExternalReference = q.Get("externalReference")
	if len(f.Search) > 200 || len(f.ExternalReference) > ledger.MaxExternalRef {
		return nil, errs.Invalid("search text is too long", errs.Field("search", "at most 200 characters"))
	}
	return f, nil
}

func accountNumber(s string) bool {
	if len(s) == 0 || len(s) > 8 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
