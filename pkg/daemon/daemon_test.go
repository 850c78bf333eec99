package daemon_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/daemon"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/inbox"
	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// notes is the smallest service on the shape: one table, one command that
// writes a row and its event in one transaction, one query, one internal
// route and a consumer of its own events.
var notesDB = migrate.Set{Schema: "notes", Role: "notes_svc", Outbox: true, Idempotency: true, Inbox: true,
	FS: fstest.MapFS{"0001_notes.sql": {Data: []byte(`
CREATE TABLE notes (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, text text NOT NULL, seen int NOT NULL DEFAULT 0);
SELECT enable_tenant_rls('notes');
GRANT SELECT, INSERT, UPDATE ON notes TO notes_svc;`)}}}

type note struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Seen int    `json:"seen"`
}

type noted struct {
	TenantID string `json:"tenant_id"`
	ID       string `json:"id"`
}

func notesService(handled *atomic.Int64) daemon.Service {
	return daemon.Service{
		Name:    "notes",
		DB:      notesDB,
		Streams: []natsx.Stream{{Name: "NOTES", Subjects: []string{"evt.notes.>"}}},
		Build: func(ctx context.Context, env daemon.Env) (daemon.Parts, error) {
			create := func(ctx context.Context, in note) (any, error) {
				if in.Text == "" {
					return nil, errs.Invalid("text is required", errs.Field("text", "required"))
				}
				c := natsx.Claims(ctx)
				n := note{ID: uuid.NewString(), Text: in.Text}
				err := db.InTenant(ctx, env.Pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error {
					if err := idem.Claim(ctx, tx, "notes"); err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, "INSERT INTO notes.notes (id, tenant_id, text) VALUES ($1, $2, $3)", n.ID, c.TenantID, n.Text); err != nil {
						return err
					}
					if _, err := outbox.Put(ctx, tx, "notes", "evt.notes.created", noted{TenantID: c.TenantID, ID: n.ID}); err != nil {
						return err
					}
					return idem.Save(ctx, tx, "notes", natsx.Created(n))
				})
				if err != nil {
					return nil, err
				}
				return natsx.Created(n), nil
			}
			get := func(ctx context.Context, id string) (note, error) {
				var n note
				err := db.InTenant(ctx, env.Pool, natsx.Claims(ctx).TenantID, db.ReadOnly, func(tx pgx.Tx) error {
					return tx.QueryRow(ctx, "SELECT id, text, seen FROM notes.notes WHERE id = $1", id).Scan(&n.ID, &n.Text, &n.Seen)
				})
				return n, db.NotFound(err, "note %s not found", id)
			}
			seen := func(ctx context.Context, msgs []jetstream.Msg) error {
				return db.InTenant(ctx, env.Pool, db.AllTenants, db.ReadCommitted, func(tx pgx.Tx) error {
					evs := map[string]noted{}
					var claims []inbox.Event
					for _, m := range msgs {
						var ev noted
						if err := json.Unmarshal(m.Data(), &ev); err != nil {
							return natsx.ErrPoison
						}
						evs[natsx.EventID(m)] = ev
						claims = append(claims, inbox.Event{ID: natsx.EventID(m), TenantID: ev.TenantID})
					}
					fresh, err := inbox.Claim(ctx, tx, "notes", "notes-seen", claims...)
					for _, id := range fresh {
						handled.Add(1)
						if _, err := tx.Exec(ctx, "UPDATE notes.notes SET seen = seen + 1 WHERE id = $1", evs[id].ID); err != nil {
							return err
						}
					}
					return err
				})
			}
			return daemon.Parts{
				Routes: []natsx.Route{
					{Subject: "notes.v1.create", Decode: natsx.JSON[note], Endpoint: natsx.Typed(create), Idempotent: true},
					{Subject: "notes.v1.get", Decode: param("id"), Endpoint: natsx.Typed(get)},
					{Subject: "notes.v1.ping", Decode: natsx.Nothing, Internal: true,
						Endpoint: natsx.Typed(func(context.Context, struct{}) (string, error) { return "pong", nil })},
				},
				Consumers: []natsx.Consumer{{Stream: "NOTES", Durable: "notes-seen", Filter: "evt.notes.created", Batch: 16, Handle: seen}},
			}, nil
		},
	}
}

func param(name string) natsx.DecodeFunc {
	return func(_ context.Context, r *natsx.Request) (any, error) { return r.Param(name), nil }
}

func TestServiceShape(t *testing.T) {
	t.Parallel()
	var handled atomic.Int64
	h := testkit.NewRPC(t, notesDB)
	h.Start(notesService(&handled), nil)
	alice := &auth.Claims{TenantID: uuid.NewString(), KeyID: "k1", Scopes: []string{"admin"}}
	bob := &auth.Claims{TenantID: uuid.NewString(), KeyID: "k2", Scopes: []string{"admin"}}

	// Every route but an internal one needs a tenant.
	h.Fails("notes.v1.create", testkit.Rq{Body: note{Text: "x"}}, 401, errs.Unauthenticated)
	var pong string
	h.OK("notes.v1.ping", testkit.Rq{}, 200, &pong)
	if pong != "pong" {
		t.Fatalf("ping = %q", pong)
	}
	// Strict decoding and the service's own validation, in the one vocabulary.
	h.Fails("notes.v1.create", testkit.Rq{As: alice, Body: `{"text":"a","colour":"red"}`}, 400, errs.InvalidInput)
	bad := h.Fails("notes.v1.create", testkit.Rq{As: alice, Body: note{}}, 400, errs.InvalidInput)
	if len(bad.Err.Details) != 1 || bad.Err.Details[0].Field != "text" {
		t.Fatalf("details = %+v", bad.Err.Details)
	}

	// Idempotency: the same key and body answer the first answer; another body is refused.
	var first, again note
	h.OK("notes.v1.create", testkit.Rq{As: alice, Body: note{Text: "hello"}, IdempotencyKey: "k-1"}, 201, &first)
	h.OK("notes.v1.create", testkit.Rq{As: alice, Body: note{Text: "hello"}, IdempotencyKey: "k-1"}, 201, &again)
	if first.ID == "" || first != again {
		t.Fatalf("replay %+v, first %+v", again, first)
	}
	h.Fails("notes.v1.create", testkit.Rq{As: alice, Body: note{Text: "other"}, IdempotencyKey: "k-1"}, 422, errs.IdempotencyKeyReused)

	// Tenant isolation: another tenant's note is not found.
	h.Fails("notes.v1.get", testkit.Rq{As: bob, Params: map[string]string{"id": first.ID}}, 404, errs.NotFound)

	// The event left through the outbox and was handled exactly once.
	testkit.Eventually(t, "the created event to be handled", func() bool {
		var n note
		h.OK("notes.v1.get", testkit.Rq{As: alice, Params: map[string]string{"id": first.ID}}, 200, &n)
		return n.Seen == 1
	})
	if got := handled.Load(); got != 1 {
		t.Fatalf("handled %d events, want 1", got)
	}

	// micro's statistics see every request, errors included.
	info, err := h.NC.Request("$SRV.STATS.notes", nil, 5e9)
	if err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Endpoints []struct {
			Subject     string `json:"subject"`
			NumRequests int    `json:"num_requests"`
			NumErrors   int    `json:"num_errors"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(info.Data, &stats); err != nil {
		t.Fatal(err)
	}
	reqs, errors := map[string]int{}, map[string]int{}
	for _, e := range stats.Endpoints {
		reqs[e.Subject] += e.NumRequests
		errors[e.Subject] += e.NumErrors
	}
	// create: 1 unauthenticated, 2 invalid, 2 good, 1 reused key.
	if reqs["notes.v1.create"] != 6 || errors["notes.v1.create"] != 4 {
		t.Fatalf("create stats: %d requests, %d errors", reqs["notes.v1.create"], errors["notes.v1.create"])
	}
}
