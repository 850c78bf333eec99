package identity

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/mailseal"
)

// Purposes of a password token.
const (
	PurposeInvite = "invite"
	PurposeReset  = "reset"
)

// Password length limits for setup-password.
const (
	MinPasswordLen = 12
	MaxPasswordLen = 256
)

// PasswordToken lets the holder of a mailed link set a password once.
type PasswordToken struct {
	ID        string
	TenantID  string
	UserID    string
	Hash      string // SHA-256 of the token; the token itself is never stored
	Purpose   string
	ExpiresAt time.Time
}

// newPasswordToken returns a raw token and its stored form.
func (s *Service) newPasswordToken(tenantID, userID, purpose string, ttl time.Duration) (string, PasswordToken) {
	raw := randomToken()
	return raw, PasswordToken{
		ID:        uuid.NewString(),
		TenantID:  tenantID,
		UserID:    userID,
		Hash:      hashToken(raw),
		Purpose:   purpose,
		ExpiresAt: s.now().UTC().Add(ttl),
	}
}

// ForgotPasswordInput is the body of forgot-password.
type ForgotPasswordInput struct {
	Email string `json:"email"`
}

// ForgotPassword mails a one-hour reset link to an active user with the
// email. The outcome is the same whether or not such a user exists, so the
// endpoint does not reveal which emails are registered.
func (s *Service) ForgotPassword(ctx context.Context, in ForgotPasswordInput) error {
	const op = "identity.ForgotPassword"
	email := normalizeEmail(in.Email)
	if !validEmail(email) {
		return errs.Invalid("invalid email", errs.Field("email", "must be a valid email address"))
	}
	acc, err := s.store.Account(ctx, email)
	if errs.Is(err, errs.NotFound) {
		return nil
	}
	if err != nil {
		return errs.Wrap(op, err)
	}
	// A deactivated user must not regain access through a reset.
	if !acc.User.IsActive || !acc.TenantActive {
		return nil
	}
	raw, tok := s.newPasswordToken(acc.User.TenantID, acc.User.ID, PurposeReset, ResetTTL)
	m, err := s.mail(tok, raw, email, "password_reset")
	if err != nil {
		return errs.Wrap(op, err)
	}
	return errs.Wrap(op, s.store.CreatePasswordToken(ctx, tok, m))
}

// mail is the command that mails the link with raw, sealed to the mailer's
// key: the bus and the MAIL stream never carry a usable token.
func (s *Service) mail(tok PasswordToken, raw, to, template string) (identityv1.Mail, error) {
	m := identityv1.Mail{ID: tok.ID, To: to, Template: template, TenantID: tok.TenantID, Expires: tok.ExpiresAt}
	if s.mailerKey == nil {
		return m, nil
	}
	sealed, err := mailseal.Seal(s.mailerKey, raw)
	if err != nil {
		return m, err
	}
	m.SealedToken, m.KeyID = sealed, mailseal.KeyID(s.mailerKey)
	return m, nil
}

// SetupPasswordInput is the body of setup-password.
type SetupPasswordInput struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

// SetupPassword sets a password with an invite or reset token. A token works
// once and only until it expires; otherwise the answer is INVALID_TOKEN.
func (s *Service) SetupPassword(ctx context.Context, in SetupPasswordInput) error {
	const op = "identity.SetupPassword"
	var p problems
	if in.Token == "" {
		p.add("token", "required")
	}
	checkPassword(&p, in.Password)
	if err := p.err("invalid password setup"); err != nil {
		return err
	}
	hash, err := s.hashPassword(ctx, in.Password)
	if err != nil {
		return errs.Wrap(op, err)
	}
	return errs.Wrap(op, s.store.UsePasswordToken(ctx, hashToken(in.Token), hash, s.now().UTC()))
}

func checkPassword(p *problems, pw string) {
	switch n := utf8.RuneCountInString(pw); {
	case n == 0:
		p.add("password", "required")
	case n < MinPasswordLen:
		p.add("password", "must have at least 12 characters")
	case n > MaxPasswordLen:
		p.add("password", "must have at most 256 characters")
	}
}
