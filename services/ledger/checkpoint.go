package ledger

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// A checkpoint anchors a tenant's chain outside the database: the head's
// number and hash, signed with an Ed25519 key the database never holds.
// Whoever can write the database can rewrite the journal's tail and
// recompute every hash, but cannot sign; verification compares each
// checkpoint with the stored event at its number and starts recomputing
// from the newest one that holds.

// Checkpoint is one signed chain head.
type Checkpoint struct {
	TenantID      string
	JournalNumber int64
	Hash          []byte
	SignedAt      time.Time
	Reason        string // "schedule", or the period lock that wrote it: "lock 2025-03 hard-locked"
	KeyID         string
	Signature     []byte
}

// checkpointTag opens every signed message, so a signature over a
// checkpoint is never valid for anything else.
const checkpointTag = "ledger-checkpoint-v1"

// Message is the exact byte string a checkpoint's signature covers: its
// fields length-prefixed, the time in UTC microseconds as Postgres keeps
// it. Auditors recompute it from the GoBD export's checkpoints.csv.
func (c *Checkpoint) Message() []byte {
	var b bytes.Buffer
	for _, s := range []string{checkpointTag, c.TenantID, fmt.Sprint(c.JournalNumber), hex.EncodeToString(c.Hash), timeText(c.SignedAt), c.Reason, c.KeyID} {
		writeField(&b, s)
	}
	return b.Bytes()
}

// Signer signs checkpoints with one private key.
type Signer struct {
	key ed25519.PrivateKey
	id  string
}

// NewSigner returns a signer for a 32-byte Ed25519 seed.
func NewSigner(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("ledger: a checkpoint key is a %d-byte Ed25519 seed, got %d bytes", ed25519.SeedSize, len(seed))
	}
	k := ed25519.NewKeyFromSeed(seed)
	return &Signer{key: k, id: KeyID(k.Public().(ed25519.PublicKey))}, nil
}

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// Sign stamps c with the signer's key id and signature.
func (s *Signer) Sign(c *Checkpoint) {
	c.SignedAt = c.SignedAt.UTC().Truncate(time.Microsecond)
	c.KeyID = s.id
	c.Signature = ed25519.Sign(s.key, c.Message())
}

// KeyID names a public key: the first 8 bytes of its SHA-256, hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Keyring holds the public keys checkpoints verify with, by key id. It
// lists old keys after a rotation, so old checkpoints keep verifying.
type Keyring map[string]ed25519.PublicKey

// Add puts pub on the ring.
func (k Keyring) Add(pub ed25519.PublicKey) { k[KeyID(pub)] = pub }

// Errors of Keyring.Check.
var (
	ErrUnknownKey   = errors.New("signed by a key that is not configured (LEDGER_CHECKPOINT_PUBKEYS)")
	ErrBadSignature = errors.New("the signature does not verify")
)

// Check verifies c's signature.
func (k Keyring) Check(c *Checkpoint) error {
	pub, ok := k[c.KeyID]
	if !ok {
		return ErrUnknownKey
	}
	if !ed25519.Verify(pub, c.Message(), c.Signature) {
		return ErrBadSignature
	}
	return nil
}

// ParseSeed reads a checkpoint key: a 32-byte seed, hex or base64.
func ParseSeed(s string) ([]byte, error) {
	b, err := decodeKey(s, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("ledger: checkpoint key: %w", err)
	}
	return b, nil
}

// ParseKeyring reads a list of public keys (hex or base64, separated by
// commas or white space).
func ParseKeyring(list string) (Keyring, error) {
	k := Keyring{}
	for _, s := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		b, err := decodeKey(s, ed25519.PublicKeySize)
		if err != nil {
			return nil, fmt.Errorf("ledger: checkpoint public key %q: %w", s, err)
		}
		k.Add(b)
	}
	return k, nil
}

func decodeKey(s string, size int) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == size {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == size {
		return b, nil
	}
	return nil, fmt.Errorf("want %d bytes as hex or base64", size)
}

// CheckpointKeys are the service's checkpoint keys: Signer signs new
// checkpoints; Verify holds every public key checkpoints are checked with,
// the signer's among them.
type CheckpointKeys struct {
	Signer *Signer
	Verify Keyring
}

// NewCheckpointKeys is signer with the public keys of list, and the
// signer's own.
func NewCheckpointKeys(signer *Signer, list Keyring) CheckpointKeys {
	k := Keyring{}
	for id, pub := range list {
		k[id] = pub
	}
	k.Add(signer.Public())
	return CheckpointKeys{Signer: signer, Verify: k}
}

// Checkpoint signs the tenant's chain head once the chain verifies from the
// previous checkpoint up to it, so a checkpoint never vouches for a chain
// already broken. An empty journal has nothing to anchor.
func (s *Service) Checkpoint(ctx context.Context, tenant, reason string) error {
	if s.keys.Signer == nil {
		return errs.Wrap("ledger.Checkpoint", errors.New("no checkpoint key"))
	}
	v, err := s.store.Verify(ctx, tenant, false, s.keys.Verify)
	if err != nil {
		return err
	}
	c, err := s.signHead(tenant, reason, v)
	if err != nil || c == nil {
		return err
	}
	return s.store.AddCheckpoint(ctx, *c)
}

// HeadCheckpoint is a checkpoint a store signs inside a transaction that
// holds the journal head: it verifies the chain with Keys (as Verify does,
// from the newest good checkpoint) and stores what Sign makes of that
// verification, nothing when Sign returns nil.
type HeadCheckpoint struct {
	Keys Keyring
	Sign func(Verification) (*Checkpoint, error)
}

// signHead signs the head v verified up to; nil for an empty journal,
// which has nothing to anchor. A chain that does not verify is never
// signed.
func (s *Service) signHead(tenant, reason string, v Verification) (*Checkpoint, error) {
	if !v.OK {
		return nil, errs.Wrap("ledger.Checkpoint", fmt.Errorf("the chain does not verify, nothing signed: %s", v.Reason))
	}
	if v.Events == 0 {
		return nil, nil
	}
	hash, err := hex.DecodeString(v.HeadHash)
	if err != nil {
		return nil, errs.Wrap("ledger.Checkpoint", err)
	}
	c := Checkpoint{TenantID: tenant, JournalNumber: v.Events, Hash: hash, SignedAt: s.now(), Reason: reason}
	s.keys.Signer.Sign(&c)
	return &c, nil
}

// CheckpointMoved signs a checkpoint for every tenant whose head moved
// since its newest one; the schedule's loop runs it. One tenant's failure
// does not stop the others.
func (s *Service) CheckpointMoved(ctx context.Context) error {
	tenants, err := s.store.HeadsMoved(ctx)
	if err != nil {
		return err
	}
	var failed []error
	for _, t := range tenants {
		if err := s.Checkpoint(ctx, t, "schedule"); err != nil {
			failed = append(failed, fmt.Errorf("tenant %s: %w", t, err))
		}
	}
	return errors.Join(failed...)
}

// Checkpoints lists the caller's checkpoints with the public keys that
// verify them, for the GoBD export.
func (s *Service) Checkpoints(ctx context.Context, tenant string) (ledgerv1.CheckpointList, error) {
	if err := s.ensureTenant(ctx, tenant); err != nil {
		return ledgerv1.CheckpointList{}, err
	}
	cps, err := s.store.Checkpoints(ctx, tenant)
	if err != nil {
		return ledgerv1.CheckpointList{}, err
	}
	out := ledgerv1.CheckpointList{Checkpoints: make([]ledgerv1.Checkpoint, 0, len(cps))}
	for i := range cps {
		c := &cps[i]
		var pub string
		if k, ok := s.keys.Verify[c.KeyID]; ok {
			pub = hex.EncodeToString(k)
		}
		out.Checkpoints = append(out.Checkpoints, ledgerv1.Checkpoint{JournalNumber: c.JournalNumber, Hash: hex.EncodeToString(c.Hash),
			SignedAt: c.SignedAt, Reason: c.Reason, KeyID: c.KeyID, PublicKey: pub, Signature: hex.EncodeToString(c.Signature),
			SignatureOK: s.keys.Verify.Check(c) == nil})
	}
	return out, nil
}
