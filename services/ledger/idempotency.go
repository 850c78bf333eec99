package ledger

import (
	"context"
	"sync"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// IdemStore keeps the first answers of idempotent requests that are not
// postings (postings store theirs inside the posting transaction).
type IdemStore interface {
	// IdemLookup returns the stored answer for the request, nil when there
	// is none, or IDEMPOTENCY_KEY_REUSED when the key came with another body.
	IdemLookup(ctx context.Context, tenant string, idem IdemRequest) (*IdemRecord, error)
	// IdemSave stores the answer; a key already stored is left as it is.
	IdemSave(ctx context.Context, tenant string, idem IdemRequest, status int, response any) error
}

// inflight refuses a second request with the same key while the first runs.
type inflight struct {
	mu   sync.Mutex
	keys map[IdemRequest]bool
}

func (f *inflight) enter(k IdemRequest) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys == nil {
		f.keys = map[IdemRequest]bool{}
	}
	if f.keys[k] {
		return false
	}
	f.keys[k] = true
	return true
}

func (f *inflight) leave(k IdemRequest) {
	f.mu.Lock()
	delete(f.keys, k)
	f.mu.Unlock()
}

// Once runs fn at most once per Idempotency-Key: a repeat with the same body
// gets the first answer (as a replay record), another body 422, a concurrent
// duplicate 409. Without a key fn simply runs. Refusals are not stored, so
// a client may retry them with the same key.
func (s *Service) Once(ctx context.Context, r Request, op string, status int, fn func() (any, error)) (any, *IdemRecord, error) {
	idem := idemRequest(r, op)
	if idem.Key == "" {
		v, err := fn()
		return v, nil, err
	}
	tenant := r.Claims.TenantID
	if !s.flight.enter(idem) {
		return nil, nil, errs.E(errs.IdempotencyKeyInProgress, "a request with this Idempotency-Key is in progress")
	}
	defer s.flight.leave(idem)
	rec, err := s.store.IdemLookup(ctx, tenant, idem)
	if err != nil || rec != nil {
		return nil, rec, err
	}
	v, err := fn()
	if err != nil {
		return nil, nil, err
	}
	if err := s.store.IdemSave(ctx, tenant, idem, status, v); err != nil {
		return nil, nil, errs.Wrap("ledger.Once", err)
	}
	return v, nil, nil
}
