package allinone_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bulkDesc is the description of bulk booking i: a number and 200
// characters that do not compress, so the GoBD archive of a few thousand
// bookings exceeds one stored piece (1 MiB).
func bulkDesc(i int) string {
	b := make([]byte, 150)
	r := rand.New(rand.NewPCG(uint64(i), 42))
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	return "Sammelbuchung " + strconv.Itoa(i) + " " + base64.StdEncoding.EncodeToString(b)
}

// bulkBook posts the untaxed lines first..last, line i 1800 / 4400 over i
// cents with external reference B<i> and description bulkDesc(i), in
// bookings of per lines (skipping the duplicate check) from workers
// goroutines at once. It records each line's booking date in dates[i] and
// fails the test unless every booking is posted.
func (p *platform) bulkBook(t *testing.T, token string, first, last, per, workers int, dates []string) {
	t.Helper()
	var next atomic.Int64
	next.Store(int64(first))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := int(next.Add(int64(per)) - int64(per))
				if from > last {
					return
				}
				to := min(from+per-1, last)
				date := fmt.Sprintf("2025-%02d-%02d", from%12+1, from%28+1)
				var lines []map[string]any
				for i := from; i <= to; i++ {
					dates[i] = date
					lines = append(lines, bline("1800", "4400", fmt.Sprintf("%d.%02d", i/100, i%100), "external_reference", "B"+strconv.Itoa(i), "description", bulkDesc(i)))
				}
				body := bookingBody(date, fmt.Sprintf("Sammelbuchung %d-%d", from, to), lines...)
				body["skip_duplicate_check"] = true
				r, err := p.send("POST", "/v1/bookings", token, body)
				if err != nil || r.Status != 201 {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("booking %d-%d: %v %d %s", from, to, err, r.Status, r.Raw))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d bulk bookings failed, first: %s", len(failures), failures[0])
	}
}

// TestReportsLargeExports: a year of more events than one page of the
// journal feed (5,000), so the gateway streams the DATEV file in several
// chunks and the GoBD export reads the journal in several pages. The file
// still has one header and every record once, and a taxed pair that
// straddles the page boundary is still joined.
func TestReportsLargeExports(t *testing.T) {
	p, admin, tenant := setup(t, env{"RATE_LIMIT_PER_MINUTE": "1000000"}, "Massenbuchung GmbH")
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"datev_consultant_number": "99999", "datev_client_number": "123"})
	w, rk := p.apiKey(admin, "journal:write", "journal:read"), p.apiKey(admin, "auswertungen:read")

	// 4,999 events, then the invoice's net and tax events as numbers 5,000
	// and 5,001 (the first page ends between them), then 1,000 more. Two
	// thousand are single-line bookings posted 32 at a time; to keep the
	// test fast the others come 500 lines to a booking.
	const before, after = 4999, 1000
	dates := make([]string, before+after+1)
	start := time.Now()
	p.bulkBook(t, w, 1, 1000, 1, 32, dates)
	p.bulkBook(t, w, 1001, before, 500, 4, dates)
	inv := p.book(w, bookingBody("2025-12-30", "Rechnung über Grenze", bline("1200", "4400", "119.00", "tax_code", "USt19", "external_reference", "GRENZE")))
	if inv.EventCount != 2 {
		t.Fatalf("invoice posted %d events", inv.EventCount)
	}
	p.bulkBook(t, w, before+1, before+after, 1, 32, dates)
	total := before + 2 + after
	t.Logf("posted %d events in %v", total, time.Since(start).Round(time.Millisecond))
	v := p.verify(w)
	if !v.OK || v.Events != int64(total) {
		t.Fatalf("verify %+v, want %d events", v, total)
	}
	var invNumbers []int64
	for _, e := range p.intent(w, inv.IntentID).Entries {
		invNumbers = append(invNumbers, e.JournalNumber)
	}
	if !slices.Equal(invNumbers, []int64{5000, 5001}) {
		t.Fatalf("the invoice's events are numbers %v, want 5000 and 5001", invNumbers)
	}

	start = time.Now()
	f := p.datevExport(rk, "2025-01-01", "2025-12-31")
	t.Logf("DATEV export of %d bytes in %v", len(f.raw), time.Since(start).Round(time.Millisecond))
	if n, m := strings.Count(string(f.raw), `"EXTF";700;`), strings.Count(string(f.raw), "Umsatz (ohne Soll/Haben-Kz);"); n != 1 || m != 1 {
		t.Fatalf("%d EXTF header lines and %d column lines in the file", n, m)
	}
	if len(f.rows) != before+1+after {
		t.Fatalf("%d DATEV records, want %d (%d events, the invoice joined)", len(f.rows), before+1+after, total)
	}
	seen := make(map[string]bool, len(f.rows))
	var cents int64
	for i, row := range f.rows {
		ref := row[dvBelegfeld1]
		if seen[ref] || row[dvSH] != "S" || row[dvKonto] == "" {
			t.Fatalf("record %d: %q (seen %v)", i, row[:dvBuchungstext+1], seen[ref])
		}
		seen[ref] = true
		whole, frac, _ := strings.Cut(row[dvUmsatz], ",")
		wc, err1 := strconv.ParseInt(whole, 10, 64)
		fc, err2 := strconv.ParseInt(frac, 10, 64)
		if err1 != nil || err2 != nil || len(frac) != 2 {
			t.Fatalf("record %d: amount %q", i, row[dvUmsatz])
		}
		cents += wc*100 + fc
		if ref == "GRENZE" {
			if got := strings.Join(row[:dvBuchungstext+1], "|"); got != "119,00|S|||||1200|4400|3|3012|GRENZE|||Rechnung über Grenze" {
				t.Fatalf("the invoice across the page boundary: %s", got)
			}
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(ref, "B"))
		if err != nil || row[dvUmsatz] != fmt.Sprintf("%d,%02d", n/100, n%100) || row[dvKonto] != "1800" || row[dvGegenkonto] != "4400" || row[dvBU] != "" ||
			row[dvBelegdatum] != dates[n][8:10]+dates[n][5:7] || row[dvBuchungstext] != bulkDesc(n)[:60] {
			t.Fatalf("record %d: %q", i, row[:dvBuchungstext+1])
		}
	}
	// Every booking once: B1..B5999 and the invoice.
	for i := 1; i <= before+after; i++ {
		if !seen["B"+strconv.Itoa(i)] {
			t.Fatalf("booking B%d is missing from the DATEV file", i)
		}
	}
	n := int64(before + after)
	if want := n*(n+1)/2 + 11900; cents != want {
		t.Fatalf("DATEV records sum to %d cents, want %d", cents, want)
	}

	// GoBD: the journal in several feed pages, every event once.
	start = time.Now()
	a := p.gobdExport(rk, "2025")
	t.Logf("GoBD export of %d bytes in %v", a.size, time.Since(start).Round(time.Millisecond))
	if a.size <= 1<<20 {
		t.Fatalf("the GoBD archive has %d bytes, not more than one stored piece", a.size)
	}
	// The last chunk dropped the stored pieces.
	p.wantCount(0, "SELECT count(*) FROM reporting.export_blobs WHERE tenant_id = $1", tenant)
	journal := a.column("journal.csv", "journal_number")
	if len(journal) != total {
		t.Fatalf("journal.csv has %d rows, want %d", len(journal), total)
	}
	refs, texts := a.column("journal.csv", "external_reference"), a.column("journal.csv", "description")
	for i, s := range journal {
		if s != strconv.Itoa(i+1) {
			t.Fatalf("journal.csv row %d has journal number %s", i+1, s)
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(refs[i], "B")); err == nil && texts[i] != bulkDesc(n) {
			t.Fatalf("journal.csv row %d (%s): description %q", i+1, refs[i], texts[i])
		}
	}
	chain := a.tables["chain.csv"][1]
	if chain[2] != strconv.Itoa(total) || chain[3] != v.HeadHash || chain[8] != strconv.Itoa(total) || chain[9] != "1" || chain[10] != strconv.Itoa(total) {
		t.Fatalf("chain.csv %q, ledger verifies %+v", chain, v)
	}

	// The projection follows the whole stream.
	p.repSettled(rk, fmt.Sprintf("%d.%02d", (n*(n+1)/2+11900)/100, (n*(n+1)/2+11900)%100))
}
