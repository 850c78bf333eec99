package idem

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
)

// memStore is a fake Store.
type memStore struct {
	mu sync.Mutex
	m  map[[3]string]Record
}

func (s *memStore) Lookup(_ context.Context, t, sc, k string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.m[[3]string{t, sc, k}]; ok {
		return &r, nil
	}
	return nil, nil
}

func (s *memStore) Save(_ context.Context, t, sc, k string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[[3]string{t, sc, k}]; !ok {
		s.m[[3]string{t, sc, k}] = r
	}
	return nil
}

func TestMiddleware(t *testing.T) {
	store := &memStore{m: map[[3]string]Record{}}
	calls := 0
	next := func(ctx context.Context, req any) (any, error) {
		calls++
		return natsx.Created(map[string]int{"n": calls}), nil
	}
	e := Middleware(store, "op")(next)
	ctx := auth.WithClaims(context.Background(), &auth.Claims{TenantID: "t1", KeyID: "k1"})
	req := func(body string) *natsx.Request {
		return &natsx.Request{Body: []byte(body), Params: url.Values{"id": {"1"}}}
	}
	body := func(v any) string {
		r := v.(*natsx.Response)
		b, _ := json.Marshal(r.Body)
		return string(b)
	}
	// Without a key every call runs.
	e(ctx, req(`{}`))
	e(ctx, req(`{}`))
	keyed := natsx.WithIdempotencyKey(ctx, "abc")
	first, err := e(keyed, req(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	again, err := e(keyed, req(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{201, `{"n":3}`, 3}, []any{again.(*natsx.Response).Status, body(again), calls}); diff != "" || body(first) != body(again) {
		t.Fatalf("replay mismatch (-want +got):\n%s", diff)
	}
	if _, err := e(keyed, req(`{"a":2}`)); !errs.Is(err, errs.IdempotencyKeyReused) {
		t.Fatalf("other body: %v", err)
	}
	other := natsx.WithIdempotencyKey(auth.WithClaims(context.Background(), &auth.Claims{TenantID: "t1", KeyID: "k2"}), "abc")
	if _, err := e(other, req(`{"a":1}`)); err != nil || calls != 4 {
		t.Fatalf("another credential's key is its own: %v, calls %d", err, calls)
	}
}
