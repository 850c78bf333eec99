package natsrpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

// startAuditConsumer creates the gateway's stream, as the gateway does when
// it starts: the audit consumer the daemon runs was waiting for it.
func (h *harness) startAuditConsumer(t *testing.T) {
	t.Helper()
	if err := (natsx.Stream{Name: gatewayv1.StreamCalls, Subjects: []string{gatewayv1.CallsFilter}}).Ensure(context.Background(), h.JS); err != nil {
		t.Fatal(err)
	}
}

// publish sends calls the way the gateway does.
func (h *harness) publish(t *testing.T, calls ...any) {
	t.Helper()
	for _, c := range calls {
		b, ok := c.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(c); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.JS.Publish(context.Background(), gatewayv1.SubjectCall, b); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *harness) auditRows(t *testing.T) int {
	t.Helper()
	return testkit.Count(t, h.Pool, "SELECT count(*) FROM identity.audit_log")
}

// A record delivered twice is stored once and counts once.
func TestAuditConsumerIdempotent(t *testing.T) {
	t.Parallel()
	h, admin := newAcme(t)
	h.startAuditConsumer(t)
	at := time.Now().UTC().Truncate(time.Millisecond)
	c := gatewayv1.Call{RequestID: "req-1", TenantID: admin.TenantID, KeyID: admin.KeyID, Actor: admin.Actor(), Surface: "api",
		Method: "GET", Route: "GET /v1/journal", Scope: "journal:read", Status: 200, DurationMS: 4, At: at}
	anonymous := gatewayv1.Call{RequestID: "req-2", Surface: "api", Method: "GET", Route: "GET /v1/journal", Status: 401, ErrorCode: errs.Unauthenticated, At: at}
	h.publish(t, c, c, anonymous, []byte("not json"))
	testkit.Eventually(t, "two audit rows", func() bool { return h.auditRows(t) == 2 })
	// Give a wrong duplicate the time to show up.
	h.publish(t, c)
	time.Sleep(200 * time.Millisecond)
	if n := h.auditRows(t); n != 2 {
		t.Errorf("audit rows = %d, want 2", n)
	}

	var list struct {
		APIKeys []struct {
			ID         string     `json:"id"`
			CallCount  int64      `json:"call_count"`
			LastUsedAt *time.Time `json:"last_used_at"`
		} `json:"api_keys"`
	}
	h.OK(identityv1.SubjectKeysList, testkit.Rq{As: admin}, http.StatusOK, &list)
	k := list.APIKeys[0]
	if k.ID != admin.KeyID || k.CallCount != 1 || k.LastUsedAt == nil || !k.LastUsedAt.Equal(at) {
		t.Errorf("key usage = %+v, want one call at %v", k, at)
	}
}

func TestAuditList(t *testing.T) {
	t.Parallel()
	h, a, b := newAB(t)
	h.startAuditConsumer(t)
	day := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	call := func(id string, c *auth.Claims, status int, at time.Time) gatewayv1.Call {
		return gatewayv1.Call{RequestID: id, TenantID: c.TenantID, KeyID: c.KeyID, Actor: c.Actor(), Surface: "api", Method: "GET",
			Route: "GET /v1/api-keys", Scope: "config:read", Status: status, At: at}
	}
	h.publish(t,
		call("a1", a, 200, day),
		call("a2", a, 403, day.Add(24*time.Hour)),
		call("a3", a, 200, day.Add(48*time.Hour)),
		call("b1", b, 200, day),
	)
	testkit.Eventually(t, "four audit rows", func() bool { return h.auditRows(t) == 4 })

	type entry struct {
		RequestID string `json:"request_id"`
		Status    int    `json:"status"`
		KeyID     string `json:"key_id"`
	}
	type page struct {
		Entries []entry `json:"entries"`
		Limit   int     `json:"limit"`
		Offset  int     `json:"offset"`
	}
	ids := func(p page) []string {
		var out []string
		for _, e := range p.Entries {
			out = append(out, e.RequestID)
		}
		return out
	}
	tests := []struct {
		name  string
		as    *auth.Claims
		query url.Values
		want  []string
	}{
		{"newest first", a, nil, []string{"a3", "a2", "a1"}},
		{"only the caller's tenant", b, nil, []string{"b1"}},
		{"from a date", a, url.Values{"from": {"2025-03-11"}}, []string{"a3", "a2"}},
		{"to a date, inclusive", a, url.Values{"to": {"2025-03-11"}}, []string{"a2", "a1"}},
		{"RFC 3339 range", a, url.Values{"from": {"2025-03-10T09:00:00Z"}, "to": {"2025-03-11T09:00:00Z"}}, []string{"a1"}},
		{"status", a, url.Values{"status": {"403"}}, []string{"a2"}},
		{"actor", a, url.Values{"actor": {a.Actor()}}, []string{"a3", "a2", "a1"}},
		{"another actor", a, url.Values{"actor": {b.Actor()}}, nil},
		{"page", a, url.Values{"limit": {"1"}, "offset": {"1"}}, []string{"a2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p page
			h.OK(identityv1.SubjectAuditList, testkit.Rq{As: tt.as, Query: tt.query}, http.StatusOK, &p)
			if diff := cmp.Diff(tt.want, ids(p)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if p.Entries == nil {
				t.Error("entries is null, want a list")
			}
		})
	}

	got := h.Fails(identityv1.SubjectAuditList, testkit.Rq{As: a, Query: url.Values{"from": {"last week"}, "limit": {"501"}, "status": {"ok"}}}, http.StatusBadRequest, errs.InvalidInput)
	var fields []string
	for _, d := range got.Err.Details {
		fields = append(fields, d.Field)
	}
	if diff := cmp.Diff([]string{"limit", "from", "status"}, fields); diff != "" {
		t.Errorf("fields with problems (-want +got):\n%s", diff)
	}
}

// Identity events and mail commands reach JetStream through the outbox,
// on the streams identity owns.
func TestOutboxReachesJetStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()

	admin, _ := h.Tenant(t, "Acme GmbH")
	var inv struct {
		InviteToken string `json:"invite_token"`
	}
	h.OK(identityv1.SubjectUsersInvite, testkit.Rq{As: admin, Body: map[string]any{"email": "anna@acme.example", "role": "viewer"}}, http.StatusCreated, &inv)
	// A second admin key, or the tenant's last admin key could not go.
	h.OK(identityv1.SubjectKeysCreate, testkit.Rq{As: admin, Body: map[string]any{"label": "second", "role": "admin"}}, http.StatusCreated, nil)
	h.OK(identityv1.SubjectKeysDelete, testkit.Rq{As: admin, Params: map[string]string{"id": admin.KeyID}}, http.StatusOK, nil)

	next := func(stream, subject string) map[string]any {
		t.Helper()
		var got map[string]any
		testkit.Eventually(t, subject+" on "+stream, func() bool {
			st, err := h.JS.Stream(ctx, stream)
			if err != nil {
				return false
			}
			msg, err := st.GetLastMsgForSubject(ctx, subject)
			if err != nil {
				return false
			}
			if msg.Header.Get(jetstream.MsgIDHeader) == "" {
				t.Errorf("%s has no Nats-Msg-Id", subject)
			}
			return json.Unmarshal(msg.Data, &got) == nil
		})
		return got
	}
	if diff := cmp.Diff(map[string]any{"tenant_id": admin.TenantID, "key_id": admin.KeyID}, next(identityv1.StreamEvents, identityv1.EventCredentialRevoked)); diff != "" {
		t.Errorf("credential_revoked (-want +got):\n%s", diff)
	}
	created := next(identityv1.StreamEvents, identityv1.EventTenantCreated)
	if created["tenant_id"] != admin.TenantID || created["company_name"] != "Acme GmbH" {
		t.Errorf("tenant_created = %v", created)
	}
	mail := next(identityv1.StreamMail, identityv1.SubjectSendMail)
	if mail["to"] != "anna@acme.example" || mail["template"] != "invite" {
		t.Errorf("mail = %v", mail)
	}
	// On the bus the link's token is sealed; the mail sender's key opens it.
	if got := identitytest.MailToken(t, mail); got != inv.InviteToken {
		t.Errorf("sealed token opens to %q, want the invitation's %q", got, inv.InviteToken)
	}
	h.drained(t)
}
