package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/secrets"
)

// MinBootstrapKeyLen is the shortest configured bootstrap key accepted: at
// 32 characters even a hex key carries 128 bits.
const MinBootstrapKeyLen = 32

// DemoCompanyName names the operator tenant created on the first start.
const DemoCompanyName = "Demo GmbH"

// BootstrapInput configures the first start.
type BootstrapInput struct {
	// APIKey, when set, is made an admin key of the operator tenant unless
	// it is stored already. When empty, a key is generated, but only if this
	// start creates the operator tenant.
	APIKey string
	// AdminEmail, when set, is invited as an admin of the operator tenant
	// unless a user with that email exists.
	AdminEmail string
}

// BootstrapPlan is what the store carries out under its bootstrap lock. The
// store sets the tenant of Key and Admin to the operator tenant.
type BootstrapPlan struct {
	Operator identityv1.Tenant // created when no operator tenant exists
	Key      *APIKey           // added unless its hash is stored
	// KeyOnlyForNewOperator adds Key only when Operator is created now.
	KeyOnlyForNewOperator bool
	Admin                 *Invite // created unless the email is taken
}

// BootstrapResult tells what the store did.
type BootstrapResult struct {
	TenantID      string
	TenantCreated bool
	KeyAdded      bool
	AdminInvited  bool
}

// BootstrapOutcome tells the operator what the bootstrap did.
type BootstrapOutcome struct {
	BootstrapResult
	GeneratedKey string // the raw key, when one was generated and stored
}

// CheckBootstrapKey reports what is wrong with a configured bootstrap key.
func CheckBootstrapKey(k string) error {
	switch {
	case len(k) < MinBootstrapKeyLen:
		return fmt.Errorf("bootstrap API key must have at least %d characters", MinBootstrapKeyLen)
	case len(k) > maxTokenLen:
		return fmt.Errorf("bootstrap API key must have at most %d characters", maxTokenLen)
	case strings.IndexFunc(k, unicode.IsSpace) >= 0:
		return errors.New("bootstrap API key must not contain white space")
	case isJWT(k):
		return errors.New("bootstrap API key must not look like a session token (two dots)")
	}
	return secrets.CheckNotPlaceholder("bootstrap API key", k)
}

// Bootstrap makes sure an operator tenant exists with an admin key. It is
// idempotent and safe when replicas start together.
func (s *Service) Bootstrap(ctx context.Context, in BootstrapInput) (BootstrapOutcome, error) {
	const op = "identity.Bootstrap"
	plan := BootstrapPlan{Operator: s.newTenant(TenantPatch{CompanyName: ptr(DemoCompanyName), LegalForm: ptr("GmbH")}, true)}
	var generated string
	if in.APIKey != "" {
		if err := CheckBootstrapKey(in.APIKey); err != nil {
			return BootstrapOutcome{}, fmt.Errorf("%s: %w", op, err)
		}
		k := s.newKey("", "bootstrap", "admin", auth.RoleScopes("admin"), "bootstrap")
		k.Prefix, k.Hash = in.APIKey[:keyPrefixLen], hashToken(in.APIKey)
		plan.Key = &k.APIKey
	} else {
		k := s.newKey("", "bootstrap", "admin", auth.RoleScopes("admin"), "bootstrap")
		plan.Key, plan.KeyOnlyForNewOperator, generated = &k.APIKey, true, k.RawKey
	}
	if in.AdminEmail != "" {
		email := normalizeEmail(in.AdminEmail)
		if !validEmail(email) {
			return BootstrapOutcome{}, fmt.Errorf("%s: bootstrap admin email %q is not a valid email address", op, in.AdminEmail)
		}
		inv, err := s.newInvite("", email, "admin")
		if err != nil {
			return BootstrapOutcome{}, fmt.Errorf("%s: %w", op, err)
		}
		plan.Admin = &inv
	}
	res, err := s.store.Bootstrap(ctx, plan)
	if err != nil {
		return BootstrapOutcome{}, errs.Wrap(op, err)
	}
	out := BootstrapOutcome{BootstrapResult: res}
	if res.KeyAdded && generated != "" {
		out.GeneratedKey = generated
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
