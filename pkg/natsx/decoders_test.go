package natsx_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

func TestDecoders(t *testing.T) {
	ctx := context.Background()
	r := &natsx.Request{Params: url.Values{"id": {"42"}}, Query: url.Values{"limit": {"7"}, "q": {"Müller"}}, Body: []byte(`{"name":"x"}`)}
	id, _ := natsx.PathParam("id")(ctx, r)
	q, _ := natsx.QueryParam("q")(ctx, r)
	absent, _ := natsx.QueryParam("none")(ctx, r)
	type body struct {
		Name string `json:"name"`
	}
	wb, err := natsx.DecodeWithID[body](ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]any{"42", "Müller", "", natsx.WithID[body]{ID: "42", Body: body{Name: "x"}}}, []any{id, q, absent, wb}); d != "" {
		t.Error(d)
	}
	if _, err := natsx.DecodeWithID[body](ctx, &natsx.Request{Body: []byte(`{"Name":"x"}`)}); !errs.Is(err, errs.InvalidInput) {
		t.Errorf("case-variant name accepted: %v", err)
	}
	for _, tc := range []struct {
		v    string
		want int
		bad  bool
	}{{"", 50, false}, {"1", 1, false}, {"500", 500, false}, {"0", 0, true}, {"501", 0, true}, {"x", 0, true}, {"1.5", 0, true}} {
		got, err := natsx.IntQuery(url.Values{"limit": {tc.v}}, "limit", 50, 1, 500)
		if got != tc.want || (err != nil) != tc.bad || tc.bad && !errs.Is(err, errs.InvalidInput) {
			t.Errorf("limit=%q: %d %v", tc.v, got, err)
		}
	}
}
