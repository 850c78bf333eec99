package identity

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// User is a person who logs in to a tenant.
type User struct {
	ID        string     `json:"id"`
	TenantID  string     `json:"-"`
	Email     string     `json:"email"`
	Role      string     `json:"role"`
	IsActive  bool       `json:"is_active"`
	InvitedAt *time.Time `json:"invited_at"`
	LastLogin *time.Time `json:"last_login"`
	CreatedAt time.Time  `json:"created_at"`
}

// Invite is a new user with the token and mail that invite them.
type Invite struct {
	User  User
	Token PasswordToken
	Mail  identityv1.Mail
	Raw   string // the token, for the inviter's answer; never stored or mailed
}

// InviteInput is the body of an invitation.
type InviteInput struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// Invitation answers an invitation. The token is returned so an admin can
// pass the link on when no mail sender runs.
type Invitation struct {
	OK          bool   `json:"ok"`
	InviteToken string `json:"invite_token"`
	UserID      string `json:"user_id"`
}

// UserPatch is a partial update of a user; nil fields stay unchanged.
type UserPatch struct {
	Role     *string `json:"role"`
	IsActive *bool   `json:"is_active"`
}

// ListUsers lists the caller's tenant's users.
func (s *Service) ListUsers(ctx context.Context, c *auth.Claims) ([]User, error) {
	return tenantList(ctx, c, "identity.ListUsers", s.store.Users)
}

// InviteUser creates an inactive user in the caller's tenant and mails a
// seven-day invitation. A caller can hand out only a role whose scopes it
// holds, or a config:write key could mint an admin.
func (s *Service) InviteUser(ctx context.Context, c *auth.Claims, in InviteInput) (Invitation, error) {
	var p problems
	email := normalizeEmail(in.Email)
	if email == "" {
		p.add("email", "required")
	} else if !validEmail(email) {
		p.add("email", "must be a valid email address of at most 254 characters")
	}
	checkRole(&p, in.Role)
	if err := p.err("invalid invitation"); err != nil {
		return Invitation{}, err
	}
	if !c.Covers(auth.RoleScopes(in.Role)) {
		return Invitation{}, errs.E(errs.ScopeNotGrantable, "a user cannot be given a role with scopes the inviter does not hold")
	}
	inv, err := s.newInvite(c.TenantID, email, in.Role)
	if err == nil {
		err = s.store.InviteUser(ctx, inv)
	}
	if err != nil {
		return Invitation{}, errs.Wrap("identity.InviteUser", err)
	}
	return Invitation{OK: true, InviteToken: inv.Raw, UserID: inv.User.ID}, nil
}

func (s *Service) newInvite(tenantID, email, role string) (Invite, error) {
	now := s.now().UTC()
	u := User{ID: uuid.NewString(), TenantID: tenantID, Email: email, Role: role, InvitedAt: &now, CreatedAt: now}
	raw, tok := s.newPasswordToken(tenantID, u.ID, PurposeInvite, InviteTTL)
	m, err := s.mail(tok, raw, email, "invite")
	return Invite{User: u, Token: tok, Mail: m, Raw: raw}, err
}

// UpdateUser changes a user's role or active flag.
func (s *Service) UpdateUser(ctx context.Context, c *auth.Claims, id string, patch UserPatch) (User, error) {
	id, err := parseID(id, "user")
	if err != nil {
		return User{}, err
	}
	if patch.Role == nil && patch.IsActive == nil {
		return User{}, errs.E(errs.NoChanges, "nothing to change: give role or is_active")
	}
	if patch.Role != nil {
		var p problems
		checkRole(&p, *patch.Role)
		if err := p.err("invalid user update"); err != nil {
			return User{}, err
		}
		if !c.Covers(auth.RoleScopes(*patch.Role)) {
			return User{}, errs.E(errs.ScopeNotGrantable, "a user cannot be given a role with scopes the caller does not hold")
		}
	}
	u, err := s.store.UpdateUser(ctx, c.TenantID, id, patch, mayChangeUser(c))
	if err != nil {
		return User{}, errs.Wrap("identity.UpdateUser", err)
	}
	return u, nil
}

// DeleteUser removes a user from the caller's tenant and ends its sessions.
func (s *Service) DeleteUser(ctx context.Context, c *auth.Claims, id string) error {
	id, err := parseID(id, "user")
	if err != nil {
		return err
	}
	return errs.Wrap("identity.DeleteUser", s.store.DeleteUser(ctx, c.TenantID, id, mayChangeUser(c)))
}

// mayChangeUser is the guard the store runs on the locked user: only a
// caller holding admin may change, deactivate or delete an admin, or a
// config:write key could lock out the admins who granted it.
func mayChangeUser(c *auth.Claims) func(User) error {
	return func(u User) error {
		if slices.Contains(auth.RoleScopes(u.Role), auth.Admin) && !c.Has(auth.Admin) {
			return errs.E(errs.Forbidden, "only an admin may change, deactivate or delete an admin user")
		}
		return nil
	}
}

func checkRole(p *problems, role string) {
	switch {
	case role == "":
		p.add("role", "required")
	case !auth.ValidRole(role):
		p.add("role", "must be one of "+strings.Join(auth.Roles(), ", "))
	}
}
