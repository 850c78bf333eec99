package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/db"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/idem"
	"github.com/ledgerplatform/ledger/pkg/outbox"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// Group commit. A tenant's journal is a chain: every event needs the number
// and hash of the one before, so postings of one tenant serialise on the
// journal head row. Instead of one transaction (and one fsync) per posting,
// a writer goroutine per tenant takes every posting that queued up while the
// previous commit ran and writes them all in one transaction of three round
// trips: lock and check, insert, commit. Under load batches grow by
// themselves; alone, a posting commits at once.

type postReq struct {
	ctx  context.Context
	in   *ledger.Intent
	done chan postResult
}

type postResult struct {
	posted ledger.Posted
	replay *ledger.IdemRecord // set when an idempotency key replays an earlier response
	err    error
}

type writer struct {
	tenant  string
	queue   chan *postReq
	pending int // guarded by Store.mu; the writer exits only at zero
}

// Post appends an intent to its tenant's journal. It returns
// PERIOD_LOCKED, DUPLICATE_BOOKING, ALREADY_REVERSED or the replay of an
// earlier response for the same idempotency key.
func (s *Store) Post(ctx context.Context, in *ledger.Intent) (ledger.Posted, *ledger.IdemRecord, error) {
	w := s.acquire(in.TenantID)
	defer s.release(w)
	r := &postReq{ctx: ctx, in: in, done: make(chan postResult, 1)}
	select {
	case w.queue <- r:
	case <-ctx.Done():
		return ledger.Posted{}, nil, errs.Wrap("ledger.Post", ctx.Err())
	}
	select {
	case res := <-r.done:
		return res.posted, res.replay, res.err
	case <-ctx.Done():
		// The posting may still commit; an idempotency key makes the retry safe.
		return ledger.Posted{}, nil, errs.Wrap("ledger.Post", ctx.Err())
	}
}

func (s *Store) acquire(tenant string) *writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.writers[tenant]
	if !ok {
		w = &writer{tenant: tenant, queue: make(chan *postReq, 4*s.maxBatch)}
		s.writers[tenant] = w
		go s.run(w)
	}
	w.pending++
	return w
}

func (s *Store) release(w *writer) {
	s.mu.Lock()
	w.pending--
	s.mu.Unlock()
}

const writerIdle = 30 * time.Second

func (s *Store) run(w *writer) {
	idle := time.NewTimer(writerIdle)
	defer idle.Stop()
	for {
		select {
		case r := <-w.queue:
			batch := []*postReq{r}
		fill:
			for len(batch) < s.maxBatch {
				select {
				case r := <-w.queue:
					batch = append(batch, r)
				default:
					break fill
				}
			}
			s.commit(w.tenant, batch)
			idle.Reset(writerIdle)
		case <-idle.C:
			s.mu.Lock()
			if w.pending == 0 {
				delete(s.writers, w.tenant)
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			idle.Reset(writerIdle)
		}
	}
}

// commit writes a batch; if the transaction fails as a whole, each posting
// is retried alone so one bad posting cannot fail the others.
func (s *Store) commit(tenant string, batch []*postReq) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- postResult{err: errs.Wrap("ledger.Post", err)}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	results, err := s.commitBatch(tenant, live)
	if err == nil {
		for i, r := range live {
			r.done <- results[i]
		}
		return
	}
	if len(live) == 1 {
		live[0].done <- postResult{err: err}
		return
	}
	s.log.Warn("group commit failed; posting one by one", "tenant", tenant, "batch", len(live), "err", err)
	for _, r := range live {
		res, err := s.commitBatch(tenant, []*postReq{r})
		if err != nil {
			r.done <- postResult{err: err}
			continue
		}
		r.done <- res[0]
	}
}

// existingIntent is an intent already in the journal under a requested id.
type existingIntent struct {
	eventCount int
	documentID *string
}

// queueSet queues q, whose rows are one text column each, to mark every
// value it returns in set.
func queueSet(b *pgx.Batch, set map[string]bool, q string, args ...any) {
	b.Queue(q, args...).Query(func(rows pgx.Rows) error {
		var v string
		_, err := pgx.ForEachRow(rows, []any{&v}, func() error { set[v] = true; return nil })
		return err
	})
}

// documentRaces bounds how often a batch is written again because another
// request stored one of its new documents meanwhile.
const documentRaces = 3

func (s *Store) commitBatch(tenant string, batch []*postReq) ([]postResult, error) {
	for attempt := 1; ; attempt++ {
		results, err := s.writeBatch(tenant, batch)
		// An upload of the same bytes committed between the batch's
		// document lookup and its insert: written again, the batch finds
		// and links that document.
		if name, _ := db.Constraint(err); name == "documents_sha256_key" && attempt < documentRaces {
			continue
		}
		if err != nil {
			return nil, errs.Wrap("ledger.commitBatch", db.MapConstraint(err, raceConstraints))
		}
		return results, nil
	}
}

// writeBatch writes a batch in one transaction: the postings it accepts
// with their documents, idempotency records and events.
func (s *Store) writeBatch(tenant string, batch []*postReq) ([]postResult, error) {
	results := make([]postResult, len(batch))
	ctx := context.Background() // a client giving up must not abort the others' commit
	err := db.InTenant(ctx, s.pool, tenant, db.ReadCommitted, func(tx pgx.Tx) error {
		clear(results)
		var periods, fingerprints, ids, reverses, idemScopes, idemKeys []string
		var docSums [][]byte
		for _, r := range batch {
			in := r.in
			if in.Period == "" {
				in.Period = in.BookingDate.Format("2006-01")
			}
			periods = append(periods, in.Period)
			if in.Fingerprint != "" && !in.SkipDuplicateCheck {
				fingerprints = append(fingerprints, in.Fingerprint)
			}
			ids = append(ids, in.ID)
			if in.Reverses != "" {
				reverses = append(reverses, in.Reverses)
			}
			if in.IdemKey != "" {
				idemScopes = append(idemScopes, in.IdemScope)
				idemKeys = append(idemKeys, in.IdemKey)
			}
			if in.Document != nil {
				sum, err := hex.DecodeString(in.Document.SHA256)
				if err != nil {
					return fmt.Errorf("ledger: document of intent %s: %w", in.ID, err)
				}
				docSums = append(docSums, sum)
			}
		}

		// Round trip 1: lock the head, then read what decides each posting.
		// Statements run in order, so the reads see everything committed
		// before the head lock was granted, including period locks.
		var head struct {
			number int64
			hash   []byte
			now    time.Time
		}
		locked := map[string]string{} // period → status; a row means the period exists
		dupes := map[string]bool{}
		existing := map[string]existingIntent{}
		reversed := map[string]bool{}
		keys := map[[2]string]idem.Record{}
		docs := map[string]string{} // the tenant's documents by hex SHA-256 → id
		b := &pgx.Batch{}
		b.Queue("SELECT last_number, last_hash, now() FROM ledger.journal_heads WHERE tenant_id = $1 FOR UPDATE", tenant).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&head.number, &head.hash, &head.now)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("ledger: tenant %s has no journal head", tenant)
			}
			return err
		})
		b.Queue("SELECT period, status FROM ledger.period_locks WHERE tenant_id = $1 AND period = ANY($2)", tenant, periods).Query(func(rows pgx.Rows) error {
			var p, st string
			_, err := pgx.ForEachRow(rows, []any{&p, &st}, func() error { locked[p] = st; return nil })
			return err
		})
		if len(fingerprints) > 0 {
			queueSet(b, dupes, "SELECT fingerprint FROM ledger.intents WHERE tenant_id = $1 AND fingerprint = ANY($2) AND created_at > now() - interval '30 days'", tenant, fingerprints)
		}
		b.Queue("SELECT id::text, event_count, document_id::text FROM ledger.intents WHERE tenant_id = $1 AND id = ANY($2::uuid[])", tenant, ids).Query(func(rows pgx.Rows) error {
			var id string
			var e existingIntent
			_, err := pgx.ForEachRow(rows, []any{&id, &e.eventCount, &e.documentID}, func() error { existing[id] = e; return nil })
			return err
		})
		if len(reverses) > 0 {
			queueSet(b, reversed, "SELECT reverses::text FROM ledger.intents WHERE tenant_id = $1 AND reverses = ANY($2::uuid[])", tenant, reverses)
		}
		if len(idemKeys) > 0 {
			queueIdemLookup(b, tenant, idemScopes, idemKeys, keys)
		}
		if len(docSums) > 0 {
			b.Queue("SELECT sha256, id::text FROM ledger.documents WHERE tenant_id = $1 AND sha256 = ANY($2::bytea[])", tenant, docSums).Query(func(rows pgx.Rows) error {
				var sum []byte
				var id string
				_, err := pgx.ForEachRow(rows, []any{&sum, &id}, func() error { docs[hex.EncodeToString(sum)] = id; return nil })
				return err
			})
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}

		// Decide each posting and build the rows of the accepted ones.
		var ins inserts
		number, prev := head.number, head.hash
		seenKeys := map[[2]string]bool{}
		for i, r := range batch {
			in := r.in
			k := [2]string{in.IdemScope, in.IdemKey}
			if in.IdemKey != "" {
				if rec, ok := keys[k]; ok {
					if rec.Hash != in.IdemHash {
						results[i].err = errs.E(errs.IdempotencyKeyReused, "this Idempotency-Key was used with a different request body")
					} else {
						results[i].replay = (*ledger.IdemRecord)(&rec)
					}
					continue
				}
				if seenKeys[k] {
					results[i].err = errs.E(errs.IdempotencyKeyInProgress, "a request with this Idempotency-Key is in progress")
					continue
				}
			}
			if e, ok := existing[in.ID]; ok {
				results[i].posted = ledger.Posted{IntentID: in.ID, EventCount: e.eventCount, DocumentID: deref(e.documentID)}
				continue
			}
			st, exists := locked[in.Period]
			if !exists && strings.HasSuffix(in.Period, "-13") {
				results[i].err = errs.NotFoundf("the adjustment period %s does not exist; create it with POST /v1/periods/%s/create-adjustment", in.Period, in.Period[:4])
				continue
			}
			if exists && st != ledgerv1.PeriodOpen {
				results[i].err = errs.E(errs.PeriodLocked, "the period %s is %s; nothing was posted", in.Period, st)
				continue
			}
			if in.Reverses != "" && reversed[in.Reverses] {
				results[i].err = errs.E(errs.AlreadyReversed, "intent %s has already been reversed", in.Reverses)
				continue
			}
			if in.Fingerprint != "" && !in.SkipDuplicateCheck && dupes[in.Fingerprint] {
				results[i].err = &errs.Error{Code: errs.DuplicateBooking,
					Message: "a booking with the same date, description, accounts and amounts exists; send skip_duplicate_check to post it anyway"}
				continue
			}
			// Accepted.
			if in.IdemKey != "" {
				seenKeys[k] = true
			}
			if in.Reverses != "" {
				reversed[in.Reverses] = true
			}
			if in.Fingerprint != "" {
				dupes[in.Fingerprint] = true
			}
			if d := in.Document; d != nil {
				id, held := docs[d.SHA256]
				if !held {
					id = d.ID
					docs[d.SHA256] = id
					ins.docs = append(ins.docs, d)
				}
				in.DocumentID = id
			}
			posted := ledger.Posted{IntentID: in.ID, EventCount: len(in.Events), DocumentID: in.DocumentID}
			results[i].posted = posted
			first := number + 1
			chained := chainIntent(in, first, head.now)
			lines := make([]ledgerv1.EventLine, 0, len(in.Events))
			for j := range in.Events {
				e := &in.Events[j]
				number++
				e.JournalNumber = number
				if e.ID == "" {
					e.ID = uuid.NewString()
				}
				e.IntentID = in.ID
				e.BookingDate = in.BookingDate.Format(time.DateOnly)
				e.Source = in.Source
				e.CapturedAt = head.now
				h, err := ledger.HashOf(ledger.HashVersion, prev, tenant, chained, e)
				if err != nil {
					return err
				}
				e.Hash = hex.EncodeToString(h)
				prev = h
				ins.event(tenant, e, h)
				lines = append(lines, ledgerv1.EventLine{ID: e.ID, JournalNumber: e.JournalNumber, AccountDebit: e.AccountDebit,
					AccountCredit: e.AccountCredit, Amount: e.Amount.StringFixed(2), TaxCode: e.TaxCode, Description: e.Description,
					ExternalReference: e.ExternalReference, FXCurrency: e.FXCurrency})
				if e.FXAmount != nil {
					fx := e.FXAmount.String()
					lines[len(lines)-1].FXAmount = &fx
				}
			}
			if err := ins.intent(tenant, in, first); err != nil {
				return err
			}
			if in.IdemKey != "" {
				resp, _ := json.Marshal(posted)
				ins.idem = append(ins.idem, idemRow{scope: in.IdemScope, key: in.IdemKey, rec: idem.Record{Hash: in.IdemHash, Status: 201, Body: resp}})
			}
			ins.outbox = append(ins.outbox, ledgerv1.IntentPosted{TenantID: tenant, IntentID: in.ID,
				BookingDate: in.BookingDate.Format(time.DateOnly), Period: in.Period, Description: in.Description, Source: in.Source,
				Reverses: in.Reverses, FirstNumber: first, LastNumber: number, Events: lines, CapturedAt: head.now})
		}
		if number == head.number && len(ins.idem) == 0 {
			return nil
		}

		// Round trip 2: write everything; the commit is the third.
		b = &pgx.Batch{}
		if err := ins.queue(b, tenant, number, prev); err != nil {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// raceConstraints name the refusals that only another replica's concurrent
// commit can trigger; the checks of round trip 1 catch them otherwise.
var raceConstraints = map[string]*errs.Error{
	"idempotency_keys_pkey": errs.E(errs.IdempotencyKeyInProgress, "a request with this Idempotency-Key is in progress"),
	"intents_pkey":          errs.E(errs.IdempotencyKeyInProgress, "this intent is being posted by another request"),
	"intents_reversed_once": errs.E(errs.AlreadyReversed, "the intent has already been reversed"),
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// inserts collects column arrays for one multi-row INSERT per table.
type inserts struct {
	ev struct {
		number                                  []int64
		id, intent, date, debit, credit, amount []string
		taxCode, fxCur, fxAmt, extRef, meta     []*string
		desc, source                            []string
		captured                                []time.Time
		hash                                    [][]byte
	}
	in struct {
		id, date, period, desc, source, category, fp []string
		doc, reverses                                []*string
		prov                                         [][]byte
		first                                        []int64
		count                                        []int32
	}
	docs   []*ledger.NewDocument
	idem   []idemRow
	outbox []ledgerv1.IntentPosted
}

type idemRow struct {
	scope, key string
	rec        idem.Record
}

// The first answers of postings live in the shared idempotency table
// (pkg/idem) and are read and written inside the posting transaction like
// idem.Lookup and idem.Save, but queued on the group commit's batches: one
// round trip for all keys of a batch, not one per posting, while the
// journal head is locked. A plain INSERT (no ON CONFLICT) makes a twin
// committed by another replica fail the batch (idempotency_keys_pkey).

// queueIdemLookup reads the records of the given (scope, key) pairs into out.
func queueIdemLookup(b *pgx.Batch, tenant string, scopes, keys []string, out map[[2]string]idem.Record) {
	b.Queue(`SELECT k.scope, k.key, k.request_hash, k.status, k.response FROM `+schema+`.idempotency_keys k
		JOIN unnest($2::text[], $3::text[]) AS q(scope, key) USING (scope, key) WHERE k.tenant_id = $1`, tenant, scopes, keys).Query(func(rows pgx.Rows) error {
		var rec idem.Record
		var scope, key string
		_, err := pgx.ForEachRow(rows, []any{&scope, &key, &rec.Hash, &rec.Status, &rec.Body}, func() error {
			out[[2]string{scope, key}] = rec
			return nil
		})
		return err
	})
}

// queueIdemSave stores one record.
func queueIdemSave(b *pgx.Batch, tenant string, r idemRow) {
	b.Queue("INSERT INTO "+schema+".idempotency_keys (tenant_id, scope, key, request_hash, status, response) VALUES ($1, $2, $3, $4, $5, $6)",
		tenant, r.scope, r.key, r.rec.Hash, r.rec.Status, r.rec.Body)
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (x *inserts) event(tenant string, e *ledger.Event, hash []byte) {
	v := &x.ev
	v.number = append(v.number, e.JournalNumber)
	v.id = append(v.id, e.ID)
	v.intent = append(v.intent, e.IntentID)
	v.date = append(v.date, e.BookingDate)
	v.debit = append(v.debit, e.AccountDebit)
	v.credit = append(v.credit, e.AccountCredit)
	v.amount = append(v.amount, e.Amount.StringFixed(2))
	v.taxCode = append(v.taxCode, e.TaxCode)
	v.desc = append(v.desc, e.Description)
	v.source = append(v.source, e.Source)
	v.fxCur = append(v.fxCur, e.FXCurrency)
	var fx *string
	if e.FXAmount != nil {
		s := e.FXAmount.String()
		fx = &s
	}
	v.fxAmt = append(v.fxAmt, fx)
	v.extRef = append(v.extRef, e.ExternalReference)
	var meta *string
	if len(e.CustomMetadata) > 0 {
		s := string(e.CustomMetadata)
		meta = &s
	}
	v.meta = append(v.meta, meta)
	v.captured = append(v.captured, e.CapturedAt)
	v.hash = append(v.hash, hash)
}

func (x *inserts) intent(tenant string, in *ledger.Intent, first int64) error {
	prov, err := json.Marshal(in.Provenance)
	if err != nil {
		return err
	}
	v := &x.in
	v.id = append(v.id, in.ID)
	v.date = append(v.date, in.BookingDate.Format(time.DateOnly))
	v.period = append(v.period, in.Period)
	v.desc = append(v.desc, in.Description)
	v.source = append(v.source, in.Source)
	v.category = append(v.category, in.Category)
	v.fp = append(v.fp, in.Fingerprint)
	v.doc = append(v.doc, opt(in.DocumentID))
	v.reverses = append(v.reverses, opt(in.Reverses))
	v.prov = append(v.prov, prov)
	v.first = append(v.first, first)
	v.count = append(v.count, int32(len(in.Events)))
	return nil
}

func (x *inserts) queue(b *pgx.Batch, tenant string, last int64, lastHash []byte) error {
	for _, d := range x.docs {
		sum, err := hex.DecodeString(d.SHA256)
		if err != nil {
			return err
		}
		// No ON CONFLICT: the same bytes stored meanwhile fail the batch
		// (documents_sha256_key), which commitBatch then writes again.
		b.Queue(`INSERT INTO ledger.documents (tenant_id, id, sha256, mime_type, original_name, size_bytes, content, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, tenant, d.ID, sum, d.MimeType, d.OriginalName, d.SizeBytes, d.Content, d.CreatedBy)
	}
	if n := len(x.in.id); n > 0 {
		v := &x.in
		b.Queue(`INSERT INTO ledger.intents (tenant_id, id, booking_date, description, source, category, fingerprint, document_id, reverses, provenance, first_number, event_count, period)
			SELECT $1, u.* FROM unnest($2::uuid[], $3::date[], $4::text[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::uuid[], $10::jsonb[], $11::bigint[], $12::int[], $13::text[]) AS u`,
			tenant, v.id, v.date, v.desc, v.source, v.category, v.fp, v.doc, v.reverses, v.prov, v.first, v.count, v.period)
		e := &x.ev
		b.Queue(`INSERT INTO ledger.journal_events (tenant_id, journal_number, id, intent_id, booking_date, account_debit, account_credit, amount, tax_code,
				description, source, fx_currency, fx_amount, external_reference, custom_metadata, captured_at, hash, hash_version)
			SELECT $1, n, id, intent, d, deb, cred, amt, tc, descr, src, fxc, fxa, ext, meta::json, cap, h, $18::smallint
			FROM unnest($2::bigint[], $3::uuid[], $4::uuid[], $5::date[], $6::text[], $7::text[], $8::numeric[], $9::text[],
				$10::text[], $11::text[], $12::text[], $13::numeric[], $14::text[], $15::text[], $16::timestamptz[], $17::bytea[])
				AS u(n, id, intent, d, deb, cred, amt, tc, descr, src, fxc, fxa, ext, meta, cap, h)`,
			tenant, e.number, e.id, e.intent, e.date, e.debit, e.credit, e.amount, e.taxCode,
			e.desc, e.source, e.fxCur, e.fxAmt, e.extRef, e.meta, e.captured, e.hash, ledger.HashVersion)
		b.Queue("UPDATE ledger.journal_heads SET last_number = $2, last_hash = $3 WHERE tenant_id = $1", tenant, last, lastHash)
	}
	for _, r := range x.idem {
		queueIdemSave(b, tenant, r)
	}
	if len(x.outbox) > 0 {
		if err := outbox.QueueMany(b, schema, ledgerv1.EventIntentPosted, x.outbox); err != nil {
			return err
		}
		outbox.Notify(b, schema)
	}
	return nil
}
