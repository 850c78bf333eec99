package natsrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/periodsv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/services/periods/internal/periodstest"
)

// today is the service's clock in these tests: the current fiscal year of
// a calendar-year tenant is 2025.
var today = time.Date(2025, 3, 15, 10, 0, 0, 0, time.UTC)

type harness struct {
	*periodstest.Env
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{periodstest.New(t, today)}
}

// rq is one request: who sends it and what it carries. body is sent as is
// when it is a string and as JSON otherwise.
type rq struct {
	as     *auth.Claims
	params map[string]string
	query  url.Values
	body   any
}

type reply struct {
	status int
	code   string
	body   []byte
	err    errs.Body
}

func (h *harness) call(t *testing.T, subject string, r rq) reply {
	t.Helper()
	ctx := context.Background()
	if r.as != nil {
		ctx = auth.WithClaims(ctx, r.as)
	}
	req := &natsx.Request{Query: r.query, Params: url.Values{}}
	for k, v := range r.params {
		req.Params.Set(k, v)
	}
	switch b := r.body.(type) {
	case nil:
	case string:
		req.Body = []byte(b)
	default:
		var err error
		if req.Body, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := h.Client.Do(ctx, subject, req)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	out := reply{status: resp.Status, code: resp.ErrCode, body: resp.Body}
	if out.code != "" {
		_ = json.Unmarshal(resp.Body, &out.err)
	}
	return out
}

// ok calls subject, wants the status and decodes the body into out.
func (h *harness) ok(t *testing.T, subject string, r rq, status int, out any) {
	t.Helper()
	got := h.call(t, subject, r)
	if got.status != status || got.code != "" {
		t.Fatalf("%s %v: status %d %s %s, want %d", subject, r.params, got.status, got.code, got.body, status)
	}
	if out != nil {
		if err := json.Unmarshal(got.body, out); err != nil {
			t.Fatalf("%s: decode %s: %v", subject, got.body, err)
		}
	}
}

// fails calls subject and wants the error code and status.
func (h *harness) fails(t *testing.T, subject string, r rq, status int, code string) reply {
	t.Helper()
	got := h.call(t, subject, r)
	if got.status != status || got.code != code {
		t.Fatalf("%s %v: status %d %s %s, want %d %s", subject, r.params, got.status, got.code, got.body, status, code)
	}
	return got
}

// periods lists the caller's periods by period.
func (h *harness) periods(t *testing.T, c *auth.Claims) map[string]periodsv1.Period {
	t.Helper()
	var ps []periodsv1.Period
	h.ok(t, periodsv1.SubjectList, rq{as: c}, 200, &ps)
	out := map[string]periodsv1.Period{}
	for _, p := range ps {
		out[p.Period] = p
	}
	return out
}

// status reads a period's status behind the service ("" without a row).
func (h *harness) status(t *testing.T, tenant, period string) (status string, unconfirmed int) {
	t.Helper()
	err := h.Owner.QueryRow(context.Background(), "SELECT status, unconfirmed FROM periods.periods WHERE tenant_id = $1 AND period = $2", tenant, period).Scan(&status, &unconfirmed)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	return status, unconfirmed
}

func param(k, v string) map[string]string { return map[string]string{k: v} }

func str(s string) *string { return &s }
