package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// seedJournal appends n single-event intents to the tenant's journal with
// COPY, continuing the hash chain exactly as the ledger would, so the export
// reads a journal indistinguishable from one built by postings.
func seedJournal(ctx context.Context, dbURL, tenant string, n int) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var last int64
	var prev []byte
	var now time.Time
	if err := tx.QueryRow(ctx, "SELECT last_number, last_hash, now() FROM ledger.journal_heads WHERE tenant_id = $1 FOR UPDATE", tenant).Scan(&last, &prev, &now); err != nil {
		return fmt.Errorf("journal head: %w", err)
	}
	// Rows are generated while COPY streams them, so seeding a million
	// events holds none of them in memory; ids derive from the row number so
	// both passes (intents, then events) agree.
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ns := uuid.MustParse("6f1b7c2e-4a0d-4f7e-9b1a-3c5d7e9f0a2b")
	row := func(i int) (ledger.Event, time.Time) {
		date := start.AddDate(0, 0, i%365)
		return ledger.Event{
			ID: uuid.NewSHA1(ns, []byte(fmt.Sprintf("e%d-%s", i, tenant))).String(), JournalNumber: last + int64(i) + 1,
			IntentID:    uuid.NewSHA1(ns, []byte(fmt.Sprintf("i%d-%s", i, tenant))).String(),
			BookingDate: date.Format(time.DateOnly), AccountDebit: "6815", AccountCredit: "1800",
			Amount:      money.MustParse(fmt.Sprintf("%d.%02d", 1+i%9973, i%100)),
			Description: fmt.Sprintf("Bürobedarf Beleg %d", i), Source: "api", CapturedAt: now,
		}, date
	}
	i := 0
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ledger", "intents"},
		[]string{"tenant_id", "id", "booking_date", "description", "source", "first_number", "event_count", "period"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i == n {
				return nil, nil
			}
			e, date := row(i)
			i++
			return []any{tenant, e.IntentID, date, e.Description, "api", e.JournalNumber, int32(1), date.Format("2006-01")}, nil
		})); err != nil {
		return fmt.Errorf("copy intents: %w", err)
	}
	i = 0
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ledger", "journal_events"},
		[]string{"tenant_id", "journal_number", "id", "intent_id", "booking_date", "account_debit", "account_credit", "amount", "description", "source", "captured_at", "hash", "hash_version"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i == n {
				return nil, nil
			}
			e, date := row(i)
			i++
			// The intent as copied above; created_at defaults to the
			// transaction's now(), provenance to {}.
			in := ledger.ChainIntent{Period: date.Format("2006-01"), Description: e.Description, Source: "api",
				FirstNumber: e.JournalNumber, EventCount: 1, CreatedAt: now}
			h, err := ledger.HashOf(ledger.HashVersion, prev, tenant, &in, &e)
			if err != nil {
				return nil, err
			}
			prev = h
			return []any{tenant, e.JournalNumber, e.ID, e.IntentID, date, "6815", "1800", e.Amount.StringFixed(2), e.Description, "api", now, h, int16(ledger.HashVersion)}, nil
		})); err != nil {
		return fmt.Errorf("copy events: %w", err)
	}
	if _, err := tx.Exec(ctx, "UPDATE ledger.journal_heads SET last_number = $2, last_hash = $3 WHERE tenant_id = $1", tenant, last+int64(n), prev); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// peakRSS is the process's resident-set high-water mark (VmHWM) in MiB.
func peakRSS() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}

// resetPeakRSS restarts the high-water mark (Linux: clear_refs value 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func runExport(base, adminKey, dbURL string, n int) error {
	ctx := context.Background()
	c := &client{base: base, http: &http.Client{}}
	var tenant struct {
		RawKey string `json:"raw_key"`
		Tenant struct {
			ID string `json:"id"`
		} `json:"tenant"`
	}
	if _, err := c.do("POST", "/v1/admin/tenants", adminKey, map[string]any{"company_name": "Export GmbH", "datev_consultant_number": "1234567", "datev_client_number": "12345"}, &tenant); err != nil {
		return err
	}
	// The first request seeds the tenant's chart and journal head.
	if _, err := c.do("GET", "/v1/journal/verify", tenant.RawKey, nil, nil); err != nil {
		return err
	}
	t0 := time.Now()
	if err := seedJournal(ctx, dbURL, tenant.Tenant.ID, n); err != nil {
		return err
	}
	fmt.Printf("seeded %d journal events in %s\n", n, time.Since(t0).Round(time.Millisecond))

	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	before := peakRSS()
	req, _ := http.NewRequest("GET", base+"/v1/reports/datev-export?from=2025-01-01&to=2025-12-31", nil)
	req.Header.Set("Authorization", "Bearer "+tenant.RawKey)
	t0 = time.Now()
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("export: %d %s", res.StatusCode, b)
	}
	var rows, size int64
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		size += int64(len(sc.Bytes())) + 2
		if bytes.HasPrefix(sc.Bytes(), []byte(`"EXTF"`)) || bytes.HasPrefix(sc.Bytes(), []byte(`Umsatz`)) || bytes.HasPrefix(sc.Bytes(), []byte(`"Umsatz`)) {
			continue
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	d := time.Since(t0)
	fmt.Printf("datev export: rows=%d size=%.1f MiB time=%s rows/s=%.0f peak RSS of the whole platform process during the export: %.0f MiB (at its start: %.0f MiB)\n",
		rows, float64(size)/(1<<20), d.Round(time.Millisecond), float64(rows)/d.Seconds(), peakRSS(), before)
	if rows != int64(n) {
		return fmt.Errorf("export has %d rows, want %d", rows, n)
	}
	return nil
}
