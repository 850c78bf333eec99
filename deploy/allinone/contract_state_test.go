package allinone_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// ---- the platform's state, to show that refused calls changed nothing ----
//
// A digest per table of every service schema, over all rows ordered. Left
// out are the logs that rightly record refused calls and the bookkeeping
// that moves on its own:
var stateSkipped = map[string]string{
	"identity.audit_log":         "records every call, refused ones included",
	"ledger.chain_checkpoints":   "written on a timer when the head moved",
	"identity.outbox":            "relay bookkeeping",
	"ledger.outbox":              "relay bookkeeping",
	"periods.outbox":             "relay bookkeeping",
	"reporting.outbox":           "relay bookkeeping",
	"bank.outbox":                "relay bookkeeping",
	"identity.processed_events":  "consumer bookkeeping",
	"ledger.processed_events":    "consumer bookkeeping",
	"periods.processed_events":   "consumer bookkeeping",
	"reporting.processed_events": "consumer bookkeeping",
	"bank.processed_events":      "consumer bookkeeping",
}

// stateIgnoredColumns change on every authenticated call.
var stateIgnoredColumns = map[string][]string{
	"identity.api_keys": {"last_used_at", "call_count"},
}

var stateSchemas = []string{"identity", "ledger", "periods", "reporting", "bank"}

type stateProbe struct {
	p     *platform
	query string
}

func newStateProbe(t testing.TB, p *platform) *stateProbe {
	t.Helper()
	rows, err := p.owner.Query(context.Background(), `SELECT table_schema || '.' || table_name FROM information_schema.tables
		WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' ORDER BY 1`, stateSchemas)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		if _, skip := stateSkipped[n]; !skip {
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
	return &stateProbe{p: p, query: strings.Join(parts, " UNION ALL ")}
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

// settled waits until the state stops moving (projections, echoes and
// background jobs catching up) and returns it.
func (s *stateProbe) settled(t testing.TB, within time.Duration) state {
	t.Helper()
	deadline := time.Now().Add(within)
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
