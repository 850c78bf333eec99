package identity

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes, one
// lane). They are written into every hash, so raising them later still
// verifies existing hashes.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

var b64 = base64.RawStdEncoding

// hashPassword returns the argon2id hash of pw in PHC string format.
func (s *Service) hashPassword(ctx context.Context, pw string) (string, error) {
	salt := randomBytes(argonSaltLen)
	if err := s.acquireHashing(ctx); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	<-s.hashing
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// checkPassword reports whether pw matches the PHC-format hash.
func (s *Service) checkPassword(ctx context.Context, hash, pw string) (bool, error) {
	p, err := parseHash(hash)
	if err != nil {
		return false, err
	}
	if err := s.acquireHashing(ctx); err != nil {
		return false, err
	}
	key := argon2.IDKey([]byte(pw), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	<-s.hashing
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

func (s *Service) acquireHashing(ctx context.Context) error {
	select {
	case s.hashing <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type argonHash struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

var errBadHash = errors.New("identity: malformed password hash")

func parseHash(h string) (argonHash, error) {
	var p argonHash
	parts := strings.Split(h, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return p, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return p, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return p, errBadHash
	}
	var err error
	if p.salt, err = b64.DecodeString(parts[4]); err != nil {
		return p, errBadHash
	}
	if p.key, err = b64.DecodeString(parts[5]); err != nil || len(p.key) == 0 {
		return p, errBadHash
	}
	return p, nil
}
