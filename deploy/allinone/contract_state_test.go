package allinone_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ---- the platform's state, to show that refused calls changed nothing ----
//
// A digest per table of every service schema, over all rows ordered. Left
// out are the logs that rightly record refused calls and the bookkeeping
// that moves on its own:
var stateSkipped = map[string]string{
	"identity.audit_log":     "records every call, refused ones included",
	"payables.ingestion_log": "records every attachment processing attempt, refused ones included",
	"outbox":                 "relay bookkeeping, in every schema that has one",
	"processed_events":       "consumer bookkeeping, in every schema that has one",
}

// stateIgnoredColumns change on every authenticated call.
var stateIgnoredColumns = map[string][]string{
	"identity.api_keys": {"last_used_at", "call_count"},
}

var stateSchemas = []string{"identity", "ledger", "periods", "reporting", "bank", "receivables", "payables"}

type stateProbe struct {
	p        *platform
	query    string
	outboxes []string // the schemas' outbox tables
}

func newStateProbe(t testing.TB, p *platform) *stateProbe {
	t.Helper()
	rows, err := p.owner.Query(context.Background(), `SELECT table_schema || '.' || table_name FROM information_schema.tables
		WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' ORDER BY 1`, stateSchemas)
	if err != nil {
		t.Fatal(err)
	}
	var tables, outboxes []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(n, ".outbox") {
			outboxes = append(outboxes, n)
		}
		_, skipTable := stateSkipped[n]
		_, skipKind := stateSkipped[n[strings.Index(n, ".")+1:]]
		if !skipTable && !skipKind {
			tables = append(tables, n)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, tb := range tables {
		// Each column as text, bytea as its md5 (export blobs are large).
		schema, name, _ := strings.Cut(tb, ".")
		cols, err := p.owner.Query(context.Background(), `SELECT column_name, data_type FROM information_schema.columns
			WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, schema, name)
		if err != nil {
			t.Fatal(err)
		}
		var exprs []string
		for cols.Next() {
			var col, typ string
			if err := cols.Scan(&col, &typ); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(stateIgnoredColumns[tb], col) {
				continue
			}
			e := fmt.Sprintf("%q::text", col)
			if typ == "bytea" {
				e = fmt.Sprintf("md5(%q)", col)
			}
			exprs = append(exprs, "coalesce("+e+", '<null>')")
		}
		if err := cols.Err(); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, fmt.Sprintf(`SELECT '%s', md5(coalesce(string_agg(x, E'\n' ORDER BY x), '')) FROM (SELECT concat_ws('|', %s) AS x FROM %s t) s`,
			tb, strings.Join(exprs, ", "), tb))
	}
	return &stateProbe{p: p, query: strings.Join(parts, " UNION ALL "), outboxes: outboxes}
}

type state map[string]string

func (s *stateProbe) take(t testing.TB) state {
	t.Helper()
	rows, err := s.p.owner.Query(context.Background(), s.query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := state{}
	for rows.Next() {
		var tb, sum string
		if err := rows.Scan(&tb, &sum); err != nil {
			t.Fatal(err)
		}
		out[tb] = sum
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// changed names the tables whose rows differ.
func (a state) changed(b state) []string {
	var out []string
	for tb, sum := range a {
		if b[tb] != sum {
			out = append(out, tb)
		}
	}
	slices.Sort(out)
	return out
}

// busy says what is still under way: events not yet relayed from an
// outbox, messages a JetStream consumer has not yet had acknowledged, or
// export jobs not yet done. "" when nothing is.
func (s *stateProbe) busy(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var queued int
	q := "(SELECT count(*) FROM reporting.export_jobs WHERE status IN ('queued', 'running'))"
	for _, outbox := range s.outboxes {
		q += fmt.Sprintf(" + (SELECT count(*) FROM %s)", outbox)
	}
	if err := s.p.owner.QueryRow(ctx, "SELECT "+q).Scan(&queued); err != nil {
		t.Fatal(err)
	}
	if queued > 0 {
		return fmt.Sprintf("%d outbox rows and export jobs", queued)
	}
	js, err := jetstream.New(s.p.nc)
	if err != nil {
		t.Fatal(err)
	}
	streams := js.ListStreams(ctx)
	for info := range streams.Info() {
		st, err := js.Stream(ctx, info.Config.Name)
		if err != nil {
			return err.Error()
		}
		consumers := st.ListConsumers(ctx)
		for ci := range consumers.Info() {
			if ci.NumPending > 0 || ci.NumAckPending > 0 {
				return fmt.Sprintf("consumer %s of %s: %d pending, %d unacknowledged", ci.Name, info.Config.Name, ci.NumPending, ci.NumAckPending)
			}
		}
		if err := consumers.Err(); err != nil {
			return err.Error()
		}
	}
	if err := streams.Err(); err != nil {
		return err.Error()
	}
	return ""
}

// settled waits until nothing is under way and the state stops moving
// (projections, echoes and background jobs catching up) and returns it.
func (s *stateProbe) settled(t testing.TB, within time.Duration) state {
	t.Helper()
	deadline := time.Now().Add(within)
	for b := s.busy(t); b != ""; b = s.busy(t) {
		if time.Now().After(deadline) {
			t.Logf("still busy after %v: %s", within, b)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	prev, same := s.take(t), 0
	for {
		time.Sleep(100 * time.Millisecond)
		cur := s.take(t)
		if maps.Equal(prev, cur) {
			if same++; same >= 2 {
				return cur
			}
		} else {
			same = 0
		}
		if time.Now().After(deadline) {
			t.Logf("state still moving after %v: %v", within, prev.changed(cur))
			return cur
		}
		prev = cur
	}
}
