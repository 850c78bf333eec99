package bankd_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// TestPeriodStatus: the periods service, and nobody else, counts a
// tenant's bank transactions of a date range by state over all its bank
// accounts.
func TestPeriodStatus(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	alice, bob := uuid.NewString(), uuid.NewString()
	ctx := context.Background()
	for _, a := range []struct{ id, iban, number string }{{uuid.NewString(), "DE89370400440532013000", "1800"}, {uuid.NewString(), "DE44500105175407324931", "1810"}} {
		if _, err := h.Pool.Exec(ctx, `INSERT INTO bank.accounts (id, tenant_id, name, iban, account_number) VALUES ($1, $2, 'Konto', $3, $4)`, a.id, alice, a.iban, a.number); err != nil {
			t.Fatal(err)
		}
		var in bankv1.ImportInput
		in.BankAccountID = a.id
		for i, d := range []string{"2025-02-28", "2025-03-01", "2025-03-15", "2025-03-31", "2025-04-01"} {
			amount := money.MustParse("10.00")
			in.Transactions = append(in.Transactions, bankv1.ImportItem{TxDate: d, Amount: &amount, Reference: "r" + d + string(rune('a'+i))})
		}
		h.OK(bankv1.SubjectTransactionsImport, testkit.Rq{As: claims(alice), Body: in}, 201, nil)
	}
	if _, err := h.Pool.Exec(ctx, `UPDATE bank.transactions SET status = 'reconciled' WHERE tenant_id = $1 AND booking_date = '2025-03-01'`, alice); err != nil {
		t.Fatal(err)
	}
	var one string
	if err := h.Pool.QueryRow(ctx, `SELECT id FROM bank.transactions WHERE tenant_id = $1 AND booking_date = '2025-03-31' LIMIT 1`, alice).Scan(&one); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Pool.Exec(ctx, `UPDATE bank.transactions SET status = 'evidenced' WHERE id = $1`, one); err != nil {
		t.Fatal(err)
	}

	periods := func(tenant string) testkit.Rq {
		return testkit.Rq{Service: "periods", As: &auth.Claims{TenantID: tenant}, Body: bankv1.PeriodStatusGet{From: "2025-03-01", To: "2025-03-31"}}
	}
	var st bankv1.PeriodStatus
	h.OK(bankv1.SubjectPeriodStatus, periods(alice), 200, &st)
	if want := (bankv1.PeriodStatus{BankAccounts: 2, Total: 6, Open: 3, Reconciled: 2, Evidenced: 1}); st != want {
		t.Fatalf("March: %+v, want %+v", st, want)
	}
	h.OK(bankv1.SubjectPeriodStatus, periods(bob), 200, &st)
	if want := (bankv1.PeriodStatus{Done: true}); st != want {
		t.Fatalf("another tenant: %+v", st)
	}
	rq := periods(alice)
	rq.Body = bankv1.PeriodStatusGet{From: "2025-03-01", To: "2025-03-01"}
	h.OK(bankv1.SubjectPeriodStatus, rq, 200, &st)
	if want := (bankv1.PeriodStatus{BankAccounts: 2, Total: 2, Reconciled: 2, Done: true}); st != want {
		t.Fatalf("1 March: %+v, want %+v", st, want)
	}

	for _, body := range []bankv1.PeriodStatusGet{{From: "2025-03-01"}, {From: "2025-02-30", To: "2025-03-31"}, {From: "2025-03-31", To: "2025-03-01"},
		{TenantID: bob, From: "2025-03-01", To: "2025-03-31"}} {
		rq := periods(alice)
		rq.Body = body
		h.Fails(bankv1.SubjectPeriodStatus, rq, 400, errs.InvalidInput)
	}
	// The gateway's callers and other services are refused.
	h.Fails(bankv1.SubjectPeriodStatus, testkit.Rq{As: claims(alice), Body: bankv1.PeriodStatusGet{From: "2025-03-01", To: "2025-03-31"}}, 403, errs.Forbidden)
	rq = periods(alice)
	rq.Service = "ledger"
	h.Fails(bankv1.SubjectPeriodStatus, rq, 403, errs.Forbidden)
}
