package identity_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/services/identity"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
)

func TestBootstrapConcurrentReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	in := identity.BootstrapInput{APIKey: identitytest.BootstrapKey, AdminEmail: "Ops@Operator.example"}
	outs := make([]identity.BootstrapOutcome, 4)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			var err error
			if outs[i], err = e.Svc.Bootstrap(ctx, in); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	var created, added, invited int
	for _, o := range outs {
		if o.TenantID != outs[0].TenantID {
			t.Errorf("replicas disagree on the operator tenant: %s and %s", o.TenantID, outs[0].TenantID)
		}
		created += b2i(o.TenantCreated)
		added += b2i(o.KeyAdded)
		invited += b2i(o.AdminInvited && o.InviteToken != "")
	}
	if created != 1 || added != 1 || invited != 1 {
		t.Errorf("created %d tenants, added %d keys, invited %d admins; want 1 each", created, added, invited)
	}
	counts := map[string]int{}
	for _, q := range []string{
		"SELECT count(*) FROM identity.tenants WHERE is_operator",
		"SELECT count(*) FROM identity.api_keys",
		"SELECT count(*) FROM identity.users WHERE email = 'ops@operator.example' AND role = 'admin'",
		"SELECT count(*) FROM identity.outbox WHERE subject = 'evt.identity.v1.tenant_created'",
	} {
		var n int
		if err := e.Owner.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[q] = n
	}
	for q, n := range counts {
		if n != 1 {
			t.Errorf("%s = %d, want 1", q, n)
		}
	}
	c := e.Claims(t, identitytest.BootstrapKey)
	want := []string{"admin"}
	if diff := cmp.Diff(want, c.Scopes); diff != "" || !c.Operator || c.TenantID != outs[0].TenantID {
		t.Errorf("bootstrap key claims = %+v", c)
	}
	tenant, err := e.Svc.Tenant(ctx, c)
	if err != nil || tenant.CompanyName != identity.DemoCompanyName || !tenant.IsOperator {
		t.Errorf("operator tenant = %+v, %v", tenant, err)
	}
}

func TestBootstrapGeneratesKeyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := identitytest.New(t)
	first, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{})
	if err != nil {
		t.Fatal(err)
	}
	if !first.TenantCreated || first.GeneratedKey == "" {
		t.Fatalf("first start = %+v, want a new tenant and a generated key", first)
	}
	e.Claims(t, first.GeneratedKey)
	second, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{})
	if err != nil {
		t.Fatal(err)
	}
	if second.TenantCreated || second.KeyAdded || second.GeneratedKey != "" || second.TenantID != first.TenantID {
		t.Errorf("second start = %+v, want nothing new", second)
	}
	// A key configured later is added to the existing operator tenant.
	third, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{APIKey: identitytest.BootstrapKey})
	if err != nil || !third.KeyAdded || third.TenantCreated {
		t.Errorf("start with a configured key = %+v, %v; want the key added", third, err)
	}
	e.Claims(t, first.GeneratedKey)
	e.Claims(t, identitytest.BootstrapKey)

	if _, err := e.Svc.Bootstrap(ctx, identity.BootstrapInput{APIKey: "too-short"}); err == nil {
		t.Error("a short bootstrap key was accepted")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
