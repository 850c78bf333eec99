package bankd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/natsx"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/bankd"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// publish puts an intent_posted event on the ledger's stream as the
// ledger's outbox does, under its event id.
func publish(t *testing.T, js jetstream.JetStream, msgID string, payload any) {
	t.Helper()
	b, ok := payload.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(payload); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(context.Background(), ledgerv1.EventIntentPosted, b, jetstream.WithMsgID(msgID)); err != nil {
		t.Fatal(err)
	}
}

func invoice(tenant, intent string, number int64, debit, credit, amount, reference string) ledgerv1.IntentPosted {
	return ledgerv1.IntentPosted{TenantID: tenant, IntentID: intent, BookingDate: "2026-04-01", Period: "2026-04", Description: "Rechnung " + reference,
		Source: "api", FirstNumber: number, LastNumber: number,
		Events: []ledgerv1.EventLine{{ID: uuid.NewString(), JournalNumber: number, AccountDebit: debit, AccountCredit: credit, Amount: amount,
			Description: "Rechnung", ExternalReference: &reference}}}
}

// TestOpenItemsConsumer: the bank consumes the ledger's intent_posted
// events with its own key into the projection, per tenant, past a
// malformed event, and catches up on what was posted while it was down.
func TestOpenItemsConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := testkit.NewRPC(t, postgres.Schema)
	// The ledger owns its stream; here the harness stands in for it.
	if err := (natsx.Stream{Name: ledgerv1.StreamEvents, Subjects: []string{ledgerv1.EventsFilter}}).Ensure(ctx, h.JS); err != nil {
		t.Fatal(err)
	}
	svc, err := bankd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := h.Start(svc, nil)
	items := bank.NewOpenItems(postgres.New(h.Pool))
	alice, bob := uuid.NewString(), uuid.NewString()
	open := func(tenant string) string {
		its, err := items.List(ctx, tenant, "")
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, it := range its {
			s += fmt.Sprintf("%s %s %s %s;", it.AccountNumber, it.Direction, *it.ExternalReference, it.OpenAmount.StringFixed(2))
		}
		return s
	}

	a1, a2, b1 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	publish(t, h.JS, "e1", invoice(alice, a1, 1, "1200", "4400", "119.00", "RE-1"))
	publish(t, h.JS, "e2", []byte(`{"tenant_id":`)) // poison: dropped, holds nothing back
	publish(t, h.JS, "e3", invoice(bob, b1, 1, "6815", "3300", "59.50", "ER-1"))
	publish(t, h.JS, "e4", invoice(alice, a2, 2, "1200", "4400", "10.00", "RE-2"))
	// The same intent under another event id opens no second item.
	publish(t, h.JS, "e5", invoice(alice, a1, 1, "1200", "4400", "119.00", "RE-1"))
	testkit.Eventually(t, "alice's and bob's items", func() bool {
		return open(alice) == "1200 receivable RE-1 119.00;1200 receivable RE-2 10.00;" && open(bob) == "3300 payable ER-1 59.50;"
	})

	// Posted while the bank is down, consumed when it is back.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rev := invoice(alice, uuid.NewString(), 3, "4400", "1200", "119.00", "RE-1")
	rev.Reverses, rev.Source = a1, "reversal"
	publish(t, h.JS, "e6", rev)
	h.Start(svc, nil)
	testkit.EventuallyWithin(t, testkit.AfterRestart, "the reversal", func() bool { return open(alice) == "1200 receivable RE-2 10.00;" })
	if n := testkit.Count(t, h.Pool, `SELECT count(*) FROM bank.processed_events WHERE consumer = 'bank-open-items'`); n != 5 {
		t.Fatalf("%d events recorded in the inbox, want 5", n)
	}
}
