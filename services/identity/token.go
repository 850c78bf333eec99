package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// KeyPrefix starts every API key, so a leaked key is recognisable (secret
// scanners) and never mistaken for a session token.
const KeyPrefix = "lgr_"

// keyPrefixLen is how much of a raw key lists may show.
const keyPrefixLen = 12

// issuer is the iss claim of session tokens.
const issuer = "ledger-identity"

// randomBytes returns n bytes from crypto/rand, which never fails (it
// crashes the program instead).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// randomToken returns 32 random bytes, base64url without padding.
func randomToken() string {
	return base64.RawURLEncoding.EncodeToString(randomBytes(32))
}

// newRawKey returns a new API key.
func newRawKey() string { return KeyPrefix + randomToken() }

// hashToken is how keys, password tokens and client secrets are stored: the
// SHA-256 of the whole value in hex. They carry 256 random bits, so a slow
// hash would add nothing but latency to every request.
func hashToken(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// isJWT tells session tokens (header.payload.signature) from API keys, whose
// base64url alphabet has no dots.
func isJWT(token string) bool { return strings.Count(token, ".") == 2 }

type sessionClaims struct {
	TenantID string `json:"tid"`
	jwt.RegisteredClaims
}

func (s *Service) signSession(sess Session) (string, error) {
	c := sessionClaims{
		TenantID: sess.TenantID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   sess.UserID,
			ID:        sess.ID,
			IssuedAt:  jwt.NewNumericDate(sess.CreatedAt),
			ExpiresAt: jwt.NewNumericDate(sess.ExpiresAt),
		},
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.secret)
	if err != nil {
		return "", fmt.Errorf("sign session: %w", err)
	}
	return tok, nil
}

// parseSession checks the signature, algorithm, issuer and expiry of a
// session token and returns its claims.
func (s *Service) parseSession(token string) (sessionClaims, error) {
	var c sessionClaims
	_, err := jwt.ParseWithClaims(token, &c,
		func(*jwt.Token) (any, error) { return s.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		return c, err
	}
	if c.ID == "" || c.Subject == "" || c.TenantID == "" {
		return c, fmt.Errorf("session token lacks jti, sub or tid")
	}
	return c, nil
}
