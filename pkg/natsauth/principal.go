package natsauth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nkeys"
)

// MaxLifetime caps how long a signed principal is accepted: a captured one
// cannot be replayed for long. Requests carry their deadline; a principal
// never outlives MaxLifetime whatever the deadline.
const MaxLifetime = 5 * time.Minute

// skew tolerates clocks of different hosts running apart.
const skew = 30 * time.Second

// Errors of Verify; all mean the request is not authenticated.
var (
	ErrMissing = errors.New("no signed principal")
	ErrInvalid = errors.New("malformed principal signature")
	ErrExpired = errors.New("the principal has expired")
	ErrSigner  = errors.New("the principal's signer is not trusted")
	ErrForged  = errors.New("the principal's signature does not match")
)

// signed is what a signature covers: the claims exactly as sent, the
// request id and the expiry, separated so that no field can run into the
// next (claims are JSON, which has no raw newline).
func signed(claims []byte, requestID string, expires int64) []byte {
	b := make([]byte, 0, len(claims)+len(requestID)+24)
	b = append(b, claims...)
	b = append(b, '\n')
	b = append(b, requestID...)
	b = append(b, '\n')
	return strconv.AppendInt(b, expires, 10)
}

// Sign signs claims (JSON) for one request and returns the value of the
// signature header: "<signer>.<expiry unix ms>.<base64url signature>". The
// expiry is the request's deadline capped at MaxLifetime from now.
func (k *Key) Sign(claims []byte, requestID string, deadline time.Time) (string, error) {
	now := time.Now()
	if limit := now.Add(MaxLifetime); deadline.IsZero() || deadline.After(limit) {
		deadline = limit
	}
	exp := deadline.UnixMilli()
	sig, err := k.kp.Sign(signed(claims, requestID, exp))
	if err != nil {
		return "", fmt.Errorf("natsauth.Sign: %w", err)
	}
	return k.Name + "." + strconv.FormatInt(exp, 10) + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// Trust is the set of signers a service accepts, by name, with their public
// keys parsed once.
type Trust struct {
	keys map[string]nkeys.KeyPair
}

// ParseTrust reads PLATFORM_SIGNERS: "gateway=U…,ledger=U…". The gateway
// must be among them.
func ParseTrust(s string) (*Trust, error) {
	t := &Trust{keys: map[string]nkeys.KeyPair{}}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, pub, ok := strings.Cut(part, "=")
		if !ok || name == "" || strings.Contains(name, ".") {
			return nil, fmt.Errorf("natsauth: PLATFORM_SIGNERS: %q is not name=public key", part)
		}
		if !nkeys.IsValidPublicUserKey(pub) {
			return nil, fmt.Errorf("natsauth: PLATFORM_SIGNERS: the key of %s is not a public user NKEY (U…)", name)
		}
		kp, err := nkeys.FromPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("natsauth: PLATFORM_SIGNERS: %s: %w", name, err)
		}
		t.keys[name] = kp
	}
	if t.keys[Gateway] == nil {
		return nil, errors.New("natsauth: PLATFORM_SIGNERS must name the gateway's public key (gateway=U…)")
	}
	return t, nil
}

// Verify checks the signature header over claims and the request id, and
// returns who signed them.
func (t *Trust) Verify(claims []byte, requestID, header string, now time.Time) (signer string, err error) {
	if header == "" {
		return "", ErrMissing
	}
	name, rest, ok1 := strings.Cut(header, ".")
	expText, sigText, ok2 := strings.Cut(rest, ".")
	exp, err1 := strconv.ParseInt(expText, 10, 64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sigText)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return "", ErrInvalid
	}
	kp := t.keys[name]
	if kp == nil {
		return "", ErrSigner
	}
	// The expiry is checked before the signature: it is free, and a flood
	// of stale headers should not cost a verification each.
	e := time.UnixMilli(exp)
	if now.After(e.Add(skew)) || e.After(now.Add(MaxLifetime+skew)) {
		return "", ErrExpired
	}
	if kp.Verify(signed(claims, requestID, exp), sig) != nil {
		return "", ErrForged
	}
	return name, nil
}
