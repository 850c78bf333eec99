package bankd_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/bank/bankd"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

func TestAccountsList(t *testing.T) {
	t.Parallel()
	h := testkit.NewRPC(t, postgres.Schema)
	svc, err := bankd.Service(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Start(svc, nil)
	alice, bob := uuid.NewString(), uuid.NewString()
	id := uuid.NewString()
	if _, err := h.Pool.Exec(context.Background(), `INSERT INTO bank.accounts (id, tenant_id, name, iban, account_number)
		VALUES ($1, $2, 'Girokonto', 'DE89370400440532013000', '1800')`, id, alice); err != nil {
		t.Fatal(err)
	}

	h.Fails(bankv1.SubjectAccountsList, testkit.Rq{}, 401, errs.Unauthenticated)
	var got bankv1.AccountList
	h.OK(bankv1.SubjectAccountsList, testkit.Rq{As: &auth.Claims{TenantID: alice, KeyID: "k"}}, 200, &got)
	want := []bankv1.Account{{ID: id, Name: "Girokonto", IBAN: "DE89370400440532013000", AccountNumber: "1800", Currency: "EUR"}}
	if diff := cmp.Diff(want, got.BankAccounts, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".CreatedAt" }, cmp.Ignore())); diff != "" {
		t.Fatalf("accounts (-want +got):\n%s", diff)
	}
	// Another tenant sees none of them, and an empty list is [] not null.
	r := h.OK(bankv1.SubjectAccountsList, testkit.Rq{As: &auth.Claims{TenantID: bob, KeyID: "k"}}, 200, nil)
	if string(r.Body) != `{"bank_accounts":[]}` {
		t.Fatalf("other tenant: %s", r.Body)
	}
}
