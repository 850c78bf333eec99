package allinone_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// TestBankAccounts: the bank service, the first built on the shared shape,
// answers its route through the gateway and as an MCP tool, for the
// caller's tenant only and behind its scope.
func TestBankAccounts(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Bank GmbH")
	other, _ := p.newTenant("Andere Bank GmbH")
	id := uuid.NewString()
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO bank.accounts (id, tenant_id, name, iban, bic, account_number)
		VALUES ($1, $2, 'Girokonto', 'DE89370400440532013000', 'COBADEFFXXX', '1800')`, id, tenant); err != nil {
		t.Fatal(err)
	}
	reader, outsider := p.apiKey(admin, "bank:read"), p.apiKey(admin, "journal:read")

	rest := p.must(200, "GET", "/v1/bank-accounts", reader, nil)
	sc, isErr := toolResult(t, p.mcpCall(t, reader, 1, "tools/call", map[string]any{"name": "list_bank_accounts", "arguments": map[string]any{}}))
	if isErr {
		t.Fatalf("tool failed: %v", sc)
	}
	if diff := cmp.Diff(rest.Body, sc); diff != "" {
		t.Fatalf("MCP and REST differ (-rest +mcp):\n%s", diff)
	}
	accounts := rest.list("bank_accounts")
	if len(accounts) != 1 {
		t.Fatalf("accounts: %s", rest.Raw)
	}
	delete(accounts[0], "created_at")
	want := map[string]any{"id": id, "name": "Girokonto", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX", "account_number": "1800", "currency": "EUR"}
	if diff := cmp.Diff(want, accounts[0]); diff != "" {
		t.Fatalf("account (-want +got):\n%s", diff)
	}
	p.expectError(403, "FORBIDDEN", "GET", "/v1/bank-accounts", outsider, nil)
	p.expectError(401, "UNAUTHENTICATED", "GET", "/v1/bank-accounts", "", nil)
	if r := p.must(200, "GET", "/v1/bank-accounts", other, nil); string(r.Raw) != `{"bank_accounts":[]}` {
		t.Fatalf("another tenant: %s", r.Raw)
	}

	// Both surfaces are audited alike (the audit log is written asynchronously).
	eventually(t, 10*time.Second, func() error {
		n := count(t, p.owner, `SELECT count(*) FROM identity.audit_log WHERE tenant_id = $1 AND route = 'GET /v1/bank-accounts' AND status = 200 AND surface IN ('api', 'mcp')`, tenant)
		if n != 2 {
			return fmt.Errorf("%d audit rows of the two successful calls", n)
		}
		return nil
	})
}
