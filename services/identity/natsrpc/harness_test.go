package natsrpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/mailseal"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/identityd"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

// harness runs one test's identity daemon, bootstrapped with
// identitytest.BootstrapKey, and makes tenants and users through its
// subjects.
type harness struct{ *testkit.RPC }

func newHarness(t *testing.T) *harness {
	t.Helper()
	env := map[string]string{"BOOTSTRAP_API_KEY": identitytest.BootstrapKey, "MAILER_PUBLIC_KEY": mailseal.Encode(identitytest.MailerPublic)}
	svc, err := identityd.Service(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{testkit.NewRPC(t, postgres.Migrations)}
	h.Start(svc, env)
	return h
}

// newAcme is newHarness with one tenant, Acme GmbH, whose admin key's
// claims it returns.
func newAcme(t *testing.T) (*harness, *auth.Claims) {
	t.Helper()
	h := newHarness(t)
	admin, _ := h.Tenant(t, "Acme GmbH")
	return h, admin
}

// newAB is newHarness with two tenants, A GmbH and B GmbH, whose admin
// keys' claims it returns.
func newAB(t *testing.T) (h *harness, a, b *auth.Claims) {
	t.Helper()
	h = newHarness(t)
	a, _ = h.Tenant(t, "A GmbH")
	b, _ = h.Tenant(t, "B GmbH")
	return h, a, b
}

// Claims verifies a credential the test expects to be valid.
func (h *harness) Claims(t *testing.T, token string) *auth.Claims {
	t.Helper()
	var c auth.Claims
	h.OK(identityv1.SubjectVerify, testkit.Rq{Body: identityv1.VerifyRequest{Token: token}}, http.StatusOK, &c)
	return &c
}

// Operator returns the claims of the operator's admin key.
func (h *harness) Operator(t *testing.T) *auth.Claims { return h.Claims(t, identitytest.BootstrapKey) }

// Tenant creates a tenant and returns its admin key's claims and raw key.
func (h *harness) Tenant(t *testing.T, name string) (*auth.Claims, string) {
	t.Helper()
	var nt identity.NewTenant
	h.OK(identityv1.SubjectAdminTenantsCreate, testkit.Rq{As: h.Operator(t), Body: map[string]any{"company_name": name}}, http.StatusCreated, &nt)
	return h.Claims(t, nt.RawKey), nt.RawKey
}

// User invites a user into the caller's tenant, sets identitytest.Password
// through the invitation and logs in.
func (h *harness) User(t *testing.T, by *auth.Claims, email, role string) identity.LoginResult {
	t.Helper()
	var inv identity.Invitation
	h.OK(identityv1.SubjectUsersInvite, testkit.Rq{As: by, Body: identity.InviteInput{Email: email, Role: role}}, http.StatusCreated, &inv)
	h.OK(identityv1.SubjectSetupPassword, testkit.Rq{Body: identity.SetupPasswordInput{Token: inv.InviteToken, Password: identitytest.Password}}, http.StatusOK, nil)
	var res identity.LoginResult
	h.OK(identityv1.SubjectLogin, testkit.Rq{Body: identity.LoginInput{Email: email, Password: identitytest.Password}}, http.StatusOK, &res)
	return res
}

// Events waits for the outbox to drain and returns what reached identity's
// streams (events, then mail commands), oldest first.
func (h *harness) Events(t *testing.T) []identitytest.Event {
	t.Helper()
	h.drained(t)
	ctx := context.Background()
	var evs []identitytest.Event
	for _, name := range []string{identityv1.StreamEvents, identityv1.StreamMail} {
		st, err := h.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for seq := st.CachedInfo().State.FirstSeq; seq > 0 && seq <= st.CachedInfo().State.LastSeq; seq++ {
			msg, err := st.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			ev := identitytest.Event{Subject: msg.Subject}
			if err := json.Unmarshal(msg.Data, &ev.Payload); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// CountEvents waits for the outbox to drain and counts the events on
// subject whose payload has field set to value.
func (h *harness) CountEvents(t *testing.T, subject, field, value string) int {
	t.Helper()
	n := 0
	for _, ev := range h.Events(t) {
		if ev.Subject == subject && ev.Payload[field] == value {
			n++
		}
	}
	return n
}

// drained waits until the relay published every outbox row.
func (h *harness) drained(t *testing.T) {
	t.Helper()
	testkit.Eventually(t, "the outbox to drain", func() bool {
		return testkit.Count(t, h.Pool, "SELECT count(*) FROM identity.outbox") == 0
	})
}

// Exec runs sql as the owner, for arranging what the service cannot.
func (h *harness) Exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := h.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

type okBody struct {
	OK bool `json:"ok"`
}
