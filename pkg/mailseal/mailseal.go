// Package mailseal seals the secret of a mail command (the token of an
// invitation or password-reset link) to the mail sender's public key, so the
// command can cross the bus and sit in JetStream while only the mailer can
// read the link. It is a NaCl anonymous sealed box (X25519, XSalsa20-Poly1305):
// identity holds only the public key and cannot open what it sealed.
package mailseal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/crypto/nacl/box"
)

// Key is an X25519 key, public or private.
type Key = [32]byte

// GenerateKey returns a new key pair for a mailer.
func GenerateKey() (public, private *Key, err error) {
	return box.GenerateKey(rand.Reader)
}

// ParseKey reads a key in standard base64, as MAILER_PUBLIC_KEY holds it.
func ParseKey(s string) (*Key, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != len(Key{}) {
		return nil, errors.New("mailseal: a key is 32 bytes in standard base64")
	}
	return (*Key)(b), nil
}

// Encode writes a key in standard base64.
func Encode(k *Key) string { return base64.StdEncoding.EncodeToString(k[:]) }

// KeyID names a public key in a mail command, so a mailer holding an old
// and a new private key during a rotation knows which one opens it.
func KeyID(public *Key) string {
	sum := sha256.Sum256(public[:])
	return hex.EncodeToString(sum[:8])
}

// Seal encrypts secret for the holder of public's private key.
func Seal(public *Key, secret string) ([]byte, error) {
	out, err := box.SealAnonymous(nil, []byte(secret), public, rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mailseal: seal: %w", err)
	}
	return out, nil
}

// Open decrypts what Seal sealed to public with its private key.
func Open(public, private *Key, sealed []byte) (string, error) {
	out, ok := box.OpenAnonymous(nil, sealed, public, private)
	if !ok {
		return "", errors.New("mailseal: cannot open: another key or a damaged message")
	}
	return string(out), nil
}
