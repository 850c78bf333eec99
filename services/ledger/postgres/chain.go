package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// chainColumns are every column the chain covers: the event's and its
// intent's (see ledger.HashOf).
const chainColumns = `e.id::text, e.journal_number, e.intent_id::text, e.booking_date::text, e.account_debit, e.account_credit,
	e.amount::text, e.tax_code, e.description, e.source, e.fx_currency, e.fx_amount::text, e.external_reference,
	e.custom_metadata::text, e.captured_at, e.hash, e.hash_version,
	i.period, i.description, i.source, i.category, i.fingerprint, i.document_id::text, i.reverses::text, i.provenance,
	i.first_number, i.event_count, i.created_at`

type chainRow struct {
	e       ledger.Event
	in      ledger.ChainIntent
	hash    []byte
	version int16
	prov    []byte
}

func scanChainRow(rows pgx.Rows, r *chainRow) error {
	var amount string
	var fx, meta *string
	*r = chainRow{}
	e, in := &r.e, &r.in
	err := rows.Scan(&e.ID, &e.JournalNumber, &e.IntentID, &e.BookingDate, &e.AccountDebit, &e.AccountCredit,
		&amount, &e.TaxCode, &e.Description, &e.Source, &e.FXCurrency, &fx, &e.ExternalReference,
		&meta, &e.CapturedAt, &r.hash, &r.version,
		&in.Period, &in.Description, &in.Source, &in.Category, &in.Fingerprint, &in.DocumentID, &in.Reverses, &r.prov,
		&in.FirstNumber, &in.EventCount, &in.CreatedAt)
	if err != nil {
		return err
	}
	if e.Amount, err = money.Parse(amount); err != nil {
		return err
	}
	if fx != nil {
		a, err := money.Parse(*fx)
		if err != nil {
			return err
		}
		e.FXAmount = &a
	}
	if meta != nil {
		e.CustomMetadata = json.RawMessage(*meta)
	}
	return nil
}

// chainIntent is what the chain covers of in, whose first event has
// number first, posted at now.
func chainIntent(in *ledger.Intent, first int64, now time.Time) *ledger.ChainIntent {
	return &ledger.ChainIntent{Period: in.Period, Description: in.Description, Source: in.Source, Category: in.Category,
		Fingerprint: in.Fingerprint, DocumentID: opt(in.DocumentID), Reverses: opt(in.Reverses), Provenance: in.Provenance,
		FirstNumber: first, EventCount: len(in.Events), CreatedAt: now}
}

// Verify checks a tenant's chain in one snapshot. It looks at the signed
// checkpoints from the newest down, each against the stored event at its
// number, and recomputes the chain from the newest one whose signature
// verifies with keys and whose hash is the stored one; with full, it looks
// at every checkpoint and recomputes from the first event. Either way the
// head must be the last event.
func (s *Store) Verify(ctx context.Context, tenant string, full bool, keys ledger.Keyring) (ledger.Verification, error) {
	var v ledger.Verification
	err := db.InTenant(ctx, s.pool, tenant, db.Snapshot, func(tx pgx.Tx) error {
		var err error
		v, err = s.verify(ctx, tx, tenant, full, keys)
		return err
	})
	if err != nil {
		return v, errs.Wrap("ledger.Verify", err)
	}
	return v, nil
}

// verify is Verify in tx, which must see one state of the chain: a
// snapshot, or a transaction holding the journal head.
func (s *Store) verify(ctx context.Context, tx pgx.Tx, tenant string, full bool, keys ledger.Keyring) (ledger.Verification, error) {
	r := verifyRun{v: ledger.Verification{Full: full, Checkpoints: []ledgerv1.CheckpointCheck{}}}
	v := &r.v
	var headNumber int64
	var headHash []byte
	if err := tx.QueryRow(ctx, "SELECT last_number, last_hash FROM ledger.journal_heads WHERE tenant_id = $1", tenant).Scan(&headNumber, &headHash); err != nil {
		return r.v, err
	}
	start, err := s.checkpoints(ctx, tx, tenant, full, keys, &r)
	if err != nil {
		return r.v, err
	}
	from, prev, minVersion := int64(0), []byte(nil), int16(1)
	if start != nil {
		from, prev, minVersion = start.number, start.hash, start.version
	}
	rows, err := tx.Query(ctx, "SELECT "+chainColumns+` FROM ledger.journal_events e JOIN ledger.intents i ON i.tenant_id = e.tenant_id AND i.id = e.intent_id
		WHERE e.tenant_id = $1 AND e.journal_number > $2 ORDER BY e.journal_number`, tenant, from)
	if err != nil {
		return r.v, err
	}
	defer rows.Close()
	last := from
	var row chainRow
	for rows.Next() {
		if err := scanChainRow(rows, &row); err != nil {
			return r.v, err
		}
		v.Recomputed++
		n := row.e.JournalNumber
		if n != last+1 {
			r.broken(last+1, fmt.Sprintf("journal number %d is missing", last+1))
		}
		last = n
		// A later event never uses an older formula: going back would
		// leave fields uncovered.
		if row.version < minVersion {
			r.broken(n, fmt.Sprintf("hash version %d after version %d", row.version, minVersion))
		}
		minVersion = max(minVersion, row.version)
		if err := json.Unmarshal(row.prov, &row.in.Provenance); err != nil {
			r.broken(n, "the intent's provenance is not readable")
		}
		want, err := ledger.HashOf(int(row.version), prev, tenant, &row.in, &row.e)
		switch {
		case err != nil:
			r.broken(n, err.Error())
		case !bytes.Equal(row.hash, want):
			r.broken(n, "content or chain does not match the stored hash")
		}
		prev = row.hash
	}
	if err := rows.Err(); err != nil {
		return r.v, err
	}
	if last != headNumber || !bytes.Equal(prev, headHash) {
		r.broken(min(last, headNumber)+1, "the journal head does not match the last event")
	}
	v.Events = last
	v.HeadHash = hex.EncodeToString(headHash)
	if v.FirstBroken == nil && len(r.problems) > 0 {
		v.Reason = r.problems[0]
	}
	v.OK = v.FirstBroken == nil && len(r.problems) == 0
	return r.v, nil
}

// verifyRun gathers one verification's findings.
type verifyRun struct {
	v        ledger.Verification
	problems []string // with checkpoints' signatures, beside a broken chain
}

// broken records a break at n; the lowest number wins.
func (r *verifyRun) broken(n int64, reason string) {
	if r.v.FirstBroken == nil || n < *r.v.FirstBroken {
		r.v.FirstBroken, r.v.Reason = &n, reason
	}
}

// chainStart is the checkpoint verification recomputes from.
type chainStart struct {
	number  int64
	hash    []byte
	version int16
}

// checkpoints checks the tenant's checkpoints into v, newest first, and
// returns the newest good one; with full it checks all and returns nil.
// A checkpoint that does not match its event marks the chain broken there;
// one whose signature fails is a problem of its own.
func (s *Store) checkpoints(ctx context.Context, tx pgx.Tx, tenant string, full bool, keys ledger.Keyring, r *verifyRun) (*chainStart, error) {
	rows, err := tx.Query(ctx, `SELECT c.journal_number, c.hash, c.signed_at, c.reason, c.key_id, c.signature, e.hash, e.hash_version
		FROM ledger.chain_checkpoints c
		LEFT JOIN ledger.journal_events e ON e.tenant_id = c.tenant_id AND e.journal_number = c.journal_number
		WHERE c.tenant_id = $1 ORDER BY c.journal_number DESC, c.id DESC`, tenant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		c := ledger.Checkpoint{TenantID: tenant}
		var stored []byte
		var version *int16
		if err := rows.Scan(&c.JournalNumber, &c.Hash, &c.SignedAt, &c.Reason, &c.KeyID, &c.Signature, &stored, &version); err != nil {
			return nil, err
		}
		chk := ledgerv1.CheckpointCheck{JournalNumber: c.JournalNumber, Hash: hex.EncodeToString(c.Hash), SignedAt: c.SignedAt,
			Reason: c.Reason, KeyID: c.KeyID, Matched: stored != nil && bytes.Equal(stored, c.Hash)}
		if err := keys.Check(&c); err != nil {
			chk.Problem = err.Error()
			r.problems = append(r.problems, fmt.Sprintf("checkpoint at journal number %d signed %s: %v", c.JournalNumber, c.SignedAt.UTC().Format(time.RFC3339), err))
		} else {
			chk.SignatureOK = true
		}
		if !chk.Matched {
			const rewritten = "the stored event at this number has another hash: the journal was rewritten up to here"
			if chk.Problem != "" {
				chk.Problem += "; "
			}
			chk.Problem += rewritten
			if chk.SignatureOK {
				r.broken(c.JournalNumber, fmt.Sprintf("the signed checkpoint at journal number %d does not match the stored event: the journal was rewritten at or before it", c.JournalNumber))
			}
		}
		r.v.Checkpoints = append(r.v.Checkpoints, chk)
		if !full && chk.SignatureOK && chk.Matched {
			r.v.StartedFrom = &chk
			return &chainStart{number: c.JournalNumber, hash: c.Hash, version: *version}, rows.Err()
		}
	}
	return nil, rows.Err()
}

// AddCheckpoint stores a signed checkpoint; its number and hash must be a
// stored event's.
func (s *Store) AddCheckpoint(ctx context.Context, c ledger.Checkpoint) error {
	err := db.InTenant(ctx, s.pool, c.TenantID, db.ReadCommitted, func(tx pgx.Tx) error { return addCheckpoint(ctx, tx, c) })
	return errs.Wrap("ledger.AddCheckpoint", err)
}

func addCheckpoint(ctx context.Context, tx pgx.Tx, c ledger.Checkpoint) error {
	tag, err := tx.Exec(ctx, `INSERT INTO ledger.chain_checkpoints (tenant_id, journal_number, hash, signed_at, reason, key_id, signature)
		SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (
			SELECT 1 FROM ledger.journal_events WHERE tenant_id = $1 AND journal_number = $2 AND hash = $3)`,
		c.TenantID, c.JournalNumber, c.Hash, c.SignedAt, c.Reason, c.KeyID, c.Signature)
	if err == nil && tag.RowsAffected() == 0 {
		err = fmt.Errorf("no event %d with hash %x", c.JournalNumber, c.Hash)
	}
	return err
}

// Checkpoints lists a tenant's checkpoints, oldest first.
func (s *Store) Checkpoints(ctx context.Context, tenant string) ([]ledger.Checkpoint, error) {
	return list(ctx, s, tenant, "ledger.Checkpoints", func(row pgx.CollectableRow) (ledger.Checkpoint, error) {
		c := ledger.Checkpoint{TenantID: tenant}
		err := row.Scan(&c.JournalNumber, &c.Hash, &c.SignedAt, &c.Reason, &c.KeyID, &c.Signature)
		return c, err
	}, `SELECT journal_number, hash, signed_at, reason, key_id, signature FROM ledger.chain_checkpoints
		WHERE tenant_id = $1 ORDER BY journal_number, id`, tenant)
}

// HeadsMoved lists the tenants whose head is past their newest checkpoint.
func (s *Store) HeadsMoved(ctx context.Context) ([]string, error) {
	var out []string
	err := db.InTenant(ctx, s.pool, db.AllTenants, db.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT h.tenant_id::text FROM ledger.journal_heads h
			WHERE h.last_number > coalesce((SELECT max(c.journal_number) FROM ledger.chain_checkpoints c WHERE c.tenant_id = h.tenant_id), 0)
			ORDER BY h.tenant_id`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return out, errs.Wrap("ledger.HeadsMoved", err)
}
