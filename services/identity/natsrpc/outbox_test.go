package natsrpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

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
	if mail["to"] != "anna@acme.example" || mail["template"] != "invite" || mail["token"] != inv.InviteToken {
		t.Errorf("mail = %v", mail)
	}
	h.drained(t)
}
