package natsrpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/identity/postgres"
)

// Identity events and mail commands reach JetStream through the outbox.
func TestOutboxReachesJetStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for name, filter := range map[string]string{identityv1.StreamEvents: identityv1.EventsFilter, identityv1.StreamMail: identityv1.MailFilter} {
		if err := natsx.EnsureStream(ctx, h.js, name, filter); err != nil {
			t.Fatal(err)
		}
	}
	relay := &outbox.Relay{Pool: h.Pool, Schema: postgres.Schema, JS: h.js, Log: h.log, Poll: 50 * time.Millisecond}
	go relay.Run(ctx)

	admin, _ := h.Tenant(t, "Acme GmbH")
	var inv struct {
		InviteToken string `json:"invite_token"`
	}
	h.ok(t, identityv1.SubjectUsersInvite, rq{as: admin, body: map[string]any{"email": "anna@acme.example", "role": "viewer"}}, http.StatusCreated, &inv)
	h.ok(t, identityv1.SubjectKeysDelete, rq{as: admin, params: map[string]string{"id": admin.KeyID}}, http.StatusOK, nil)

	next := func(stream, subject string) map[string]any {
		t.Helper()
		var got map[string]any
		eventually(t, subject+" on "+stream, func() bool {
			st, err := h.js.Stream(ctx, stream)
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
	if mail["to"] != "anna@acme.example" || mail["template"] != "invite" || mail["token"] != inv.InviteToken {
		t.Errorf("mail = %v", mail)
	}
	eventually(t, "the outbox to drain", func() bool {
		var pending int
		_ = h.Owner.QueryRow(ctx, "SELECT count(*) FROM identity.outbox WHERE published_at IS NULL").Scan(&pending)
		return pending == 0
	})
}
