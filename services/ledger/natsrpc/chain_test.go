package natsrpc_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger/internal/ledgertest"
	"github.com/ledgerplatform/ledger/services/ledger/ledgerd"
	"github.com/ledgerplatform/ledger/services/ledger/postgres"
)

// TestChainCheckpointRoutes runs the declaration with a short checkpoint
// schedule: the loop signs the moved head, a period lock signs it again,
// the checkpoints list and verify (with and without full) answer over NATS.
func TestChainCheckpointRoutes(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Migrations)
	h.Start(ledgerd.WithSeed(ledgertest.Seed, ledgerd.Config{Keys: ledgertest.CheckpointKeys(t), CheckpointEvery: 100 * time.Millisecond}), nil)
	tenant, claims := drClaims()
	for _, d := range []string{"Büromaterial", "Miete"} {
		h.OK(ledgerv1.SubjectBookingsCreate, testkit.Rq{As: claims, Body: map[string]any{"booking_date": "2025-03-14", "description": d,
			"lines": []map[string]any{{"account_debit": "6815", "account_credit": "1800", "amount": 119.00, "tax_code": "VSt19"}}}}, 201, nil)
	}
	// Two bookings of two events each: the head is 4.
	checkpoints := func() []ledgerv1.Checkpoint {
		var list ledgerv1.CheckpointList
		h.OK(ledgerv1.SubjectJournalCheckpoints, testkit.Rq{As: claims}, 200, &list)
		return list.Checkpoints
	}
	// The schedule may have run between the bookings too; it signs each
	// head it finds once.
	deadline := time.Now().Add(10 * time.Second)
	var cps []ledgerv1.Checkpoint
	for cps = checkpoints(); (len(cps) == 0 || cps[len(cps)-1].JournalNumber != 4) && time.Now().Before(deadline); cps = checkpoints() {
		time.Sleep(50 * time.Millisecond)
	}
	seen := map[int64]bool{}
	for _, c := range cps {
		if c.Reason != "schedule" || !c.SignatureOK || c.PublicKey == "" || c.Signature == "" || seen[c.JournalNumber] {
			t.Fatalf("checkpoints after the schedule: %+v", cps)
		}
		seen[c.JournalNumber] = true
	}
	if !seen[4] {
		t.Fatalf("the schedule did not sign the head 4: %+v", cps)
	}
	time.Sleep(300 * time.Millisecond) // the head has not moved: nothing more
	if again := checkpoints(); len(again) != len(cps) {
		t.Fatalf("the schedule signed an unmoved head again: %+v", again)
	}

	h.OK(ledgerv1.SubjectSetPeriodLock, testkit.Rq{Service: "periods", As: &auth.Claims{TenantID: tenant},
		Body: ledgerv1.SetPeriodLock{Period: "2025-03", Status: ledgerv1.PeriodHardLocked, LockedBy: "tester"}}, 200, nil)
	n := len(cps)
	if cps = checkpoints(); len(cps) != n+1 || cps[n].Reason != "lock 2025-03 hard-locked" || cps[n].JournalNumber != 4 {
		t.Fatalf("checkpoints after the lock: %+v", cps)
	}

	var v ledgerv1.Verification
	h.OK(ledgerv1.SubjectJournalVerify, testkit.Rq{As: claims}, 200, &v)
	if !v.OK || v.Full || v.StartedFrom == nil || v.StartedFrom.JournalNumber != 4 || v.Recomputed != 0 || v.Events != 4 {
		t.Errorf("verify: %+v", v)
	}
	h.OK(ledgerv1.SubjectJournalVerify, testkit.Rq{As: claims, Query: url.Values{"full": {"true"}}}, 200, &v)
	if !v.OK || !v.Full || v.StartedFrom != nil || v.Recomputed != 4 || len(v.Checkpoints) != n+1 {
		t.Errorf("verify full: %+v", v)
	}
	h.Fails(ledgerv1.SubjectJournalVerify, testkit.Rq{As: claims, Query: url.Values{"full": {"yes"}}}, 400, errs.InvalidInput)
}
