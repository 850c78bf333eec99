package reporting

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// datevFile is a parsed EXTF file.
type datevFile struct {
	header  []string
	columns []string
	rows    [][]string
	raw     [][]string // the rows' fields as written, quotes included
}

// parseDATEV decodes Windows-1252, checks that every line ends in CRLF and
// splits the lines at ';' (quotes respected).
func parseDATEV(t testing.TB, b []byte) datevFile {
	t.Helper()
	text, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		t.Fatalf("not Windows-1252: %v", err)
	}
	s := string(text)
	if !strings.HasSuffix(s, "\r\n") {
		t.Fatalf("file does not end in CRLF")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n")
	for i, l := range lines {
		if strings.ContainsAny(l, "\r\n") {
			t.Fatalf("line %d has a bare CR or LF: %q", i+1, l)
		}
	}
	if len(lines) < 2 {
		t.Fatalf("%d lines", len(lines))
	}
	split := func(l string) []string {
		r := csv.NewReader(strings.NewReader(l))
		r.Comma = ';'
		f, err := r.Read()
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		return f
	}
	f := datevFile{header: split(lines[0]), columns: split(lines[1])}
	for _, l := range lines[2:] {
		f.rows = append(f.rows, split(l))
		f.raw = append(f.raw, strings.Split(l, ";")) // fine for texts without ';'
	}
	return f
}

// exampleDATEV is DATEV's example file (format version 9, 120 columns).
func exampleDATEV(t *testing.T) datevFile {
	b, err := os.ReadFile("testdata/EXTF_Buchungsstapel.example.csv")
	if err != nil {
		t.Fatal(err)
	}
	return parseDATEV(t, b)
}

// datevAll fetches every chunk of an export, checking that only the first
// carries the header lines, and returns the concatenated file.
func datevAll(t testing.TB, s *Service, from, to string) ([]byte, int) {
	t.Helper()
	ctx := expCtx()
	var file []byte
	cursor, chunks := "", 0
	for {
		c, err := s.DATEVExport(ctx, from, to, cursor)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunks, err)
		}
		if c.ContentType != "text/csv; charset=windows-1252" || c.Filename != "EXTF_Buchungsstapel_"+strings.ReplaceAll(from, "-", "")+"_"+strings.ReplaceAll(to, "-", "")+".csv" {
			t.Fatalf("chunk %d: %q %q", chunks, c.ContentType, c.Filename)
		}
		if chunks > 0 && bytes.Contains(c.Data, []byte(`"EXTF"`)) {
			t.Fatalf("chunk %d repeats the header", chunks)
		}
		file = append(file, c.Data...)
		chunks++
		if c.Next == "" {
			return file, chunks
		}
		if chunks > 10000 {
			t.Fatal("the export does not end")
		}
		cursor = c.Next
	}
}

func ptr(s string) *string { return &s }

func TestDATEVLayoutMatchesExample(t *testing.T) {
	ex := exampleDATEV(t)
	s, _ := expService(&expLedger{lines: []ledgerv1.JournalLine{expGen(1)}}, nil)
	b, _ := datevAll(t, s, "2025-01-01", "2025-03-31")
	f := parseDATEV(t, b)

	if len(f.header) != len(ex.header) {
		t.Fatalf("header has %d fields, the example %d", len(f.header), len(ex.header))
	}
	want := map[int]string{0: "EXTF", 1: "700", 2: "21", 3: "Buchungsstapel", 4: "13", 5: "20260203111112345",
		10: "1234567", 11: "4711", 12: "20250101", 13: "4", 14: "20250101", 15: "20250331", 16: "Buchungen 01.01.25-31.03.25",
		18: "1", 19: "0", 20: "0", 21: "EUR", 26: "04"}
	for i, v := range f.header {
		if w, ok := want[i]; ok && v != w {
			t.Errorf("header field %d = %q, want %q", i+1, v, w)
		}
	}
	// Quoted exactly where the example quotes (the text fields).
	rawHeader := strings.Split(strings.SplitN(string(b), "\r\n", 2)[0], ";")
	exRaw, _ := os.ReadFile("testdata/EXTF_Buchungsstapel.example.csv")
	exHeader := strings.Split(strings.SplitN(string(exRaw), "\r\n", 2)[0], ";")
	for i := range rawHeader {
		q, exQ := strings.HasPrefix(rawHeader[i], `"`), strings.HasPrefix(exHeader[i], `"`)
		if q != exQ {
			t.Errorf("header field %d quoted %v, the example %v", i+1, q, exQ)
		}
	}

	if len(f.columns) != 125 {
		t.Fatalf("%d columns, want 125 (version 13)", len(f.columns))
	}
	for i, name := range ex.columns {
		if f.columns[i] != name {
			t.Errorf("column %d = %q, the example %q", i+1, f.columns[i], name)
		}
	}
	if got := strings.Join(f.columns[120:], "|"); got != "Abrechnungsreferenz|BVV-Position|EU-Mitgliedstaat u. UStID (Ursprung)|EU-Steuersatz (Ursprung)|Abw. Skontokonto" {
		t.Errorf("version 13 columns: %s", got)
	}
	// Records quote the same fields as the example's records.
	for i := range ex.raw[0] {
		q, exQ := strings.HasPrefix(f.raw[0][i], `"`), strings.HasPrefix(ex.raw[0][i], `"`)
		if q != exQ {
			t.Errorf("record field %d (%s) quoted %v, the example %v", i+1, f.columns[i], q, exQ)
		}
	}
}

func TestDATEVRecords(t *testing.T) {
	line := func(n int64, intent, debit, credit, amount, code, date, desc string, ref *string) ledgerv1.JournalLine {
		l := ledgerv1.JournalLine{EventLine: ledgerv1.EventLine{JournalNumber: n, AccountDebit: debit, AccountCredit: credit,
			Amount: amount, Description: desc, ExternalReference: ref},
			IntentID: intent, BookingDate: date, Source: "api"}
		if code != "" {
			l.TaxCode = ptr(code)
		}
		return l
	}
	const (
		i1 = "aaaaaaaa-0000-4000-8000-000000000001"
		i2 = "bbbbbbbb-0000-4000-8000-000000000002"
		i3 = "cccccccc-0000-4000-8000-000000000003"
		i4 = "dddddddd-0000-4000-8000-000000000004"
		i5 = "eeeeeeee-0000-4000-8000-000000000005"
		i6 = "ffffffff-0000-4000-8000-000000000006"
		i7 = "12345678-0000-4000-8000-000000000007"
	)
	long := strings.Repeat("Ä", 70)
	lines := []ledgerv1.JournalLine{
		// 1: untaxed, umlauts, a character Windows-1252 lacks, a quote.
		line(1, i1, "1800", "0800", "1000.00", "", "2025-01-05", `Einlage "Gesellschafter" Müller – ✓`, ptr("Einl. 2025/Ü_1")),
		// 2+3: input tax 119 gross split 100 + 19 → one record 119,00 H on 1800 against 6815, BU 9.
		line(2, i2, "6815", "1800", "100.00", "VSt19", "2025-02-14", "=HYPERLINK(\"x\")", nil),
		line(3, i2, "1406", "1800", "19.00", "VSt19", "2025-02-14", "=HYPERLINK(\"x\")", nil),
		// 4+5: output tax: 1400 debited 119 against 4400, BU 3.
		line(4, i3, "1400", "4400", "100.00", "USt19", "2025-03-01", "+Rechnung 17", ptr("-RE 17")),
		line(5, i3, "1400", "3806", "19.00", "USt19", "2025-03-01", "+Rechnung 17", ptr("-RE 17")),
		// 6+7: reverse charge: the net record only, expense as Gegenkonto.
		line(6, i4, "6300", "3300", "1000.00", "RC19", "2025-03-02", "@Bauleistung", nil),
		line(7, i4, "1407", "3837", "190.00", "RC19", "2025-03-02", "@Bauleistung", nil),
		// 8: a taxed line too small to carry tax, then 9: an unrelated line of the same code.
		line(8, i5, "6815", "1800", "0.02", "VSt19", "2025-03-03", "-Kleinbetrag", nil),
		line(9, i5, "6815", "1800", "0.01", "VSt19", "2025-03-03", long, nil),
		// 10: exempt, 11: negative amount.
		line(10, i6, "1800", "4100", "50.00", "frei", "2025-03-04", "steuerfrei", ptr(strings.Repeat("X", 40))),
		line(11, i7, "1800", "6815", "-5.5", "", "2025-03-31", "Korrektur", nil),
	}
	rev := line(12, i7, "3837", "1407", "190.00", "RC19", "2025-03-31", "Storno: @Bauleistung", nil)
	revNet := line(11, i7, "3300", "6300", "1000.00", "RC19", "2025-03-31", "Storno: @Bauleistung", nil)
	revNet.Source, rev.Source = "reversal", "reversal"
	lines[10] = revNet
	lines = append(lines, rev, line(13, "13131313-0000-4000-8000-000000000013", "1800", "6815", "-5.5", "", "2025-03-31", "Korrektur", nil))

	s, _ := expService(&expLedger{lines: lines}, nil)
	b, _ := datevAll(t, s, "2025-01-01", "2025-03-31")
	f := parseDATEV(t, b)
	type rec struct{ umsatz, sh, konto, gegen, bu, datum, beleg, text string }
	want := []rec{
		{"1000,00", "S", "1800", "0800", "", "0501", "Einl--2025/Ue-1", `Einlage "Gesellschafter" Müller – ?`},
		{"119,00", "H", "1800", "6815", "9", "1402", "bbbbbbbb", `'=HYPERLINK("x")`},
		{"119,00", "S", "1400", "4400", "3", "0103", "RE-17", "'+Rechnung 17"},
		{"1000,00", "H", "3300", "6300", "94", "0203", "dddddddd", "'@Bauleistung"},
		{"0,02", "S", "6815", "1800", "9", "0303", "eeeeeeee", "'-Kleinbetrag"},
		{"0,01", "S", "6815", "1800", "9", "0303", "eeeeeeee", strings.Repeat("Ä", 60)},
		{"50,00", "S", "1800", "4100", "", "0403", strings.Repeat("X", 36), "steuerfrei"},
		{"1000,00", "S", "3300", "6300", "94", "3103", "12345678", "Storno: @Bauleistung"},
		{"5,50", "H", "1800", "6815", "", "3103", "13131313", "Korrektur"},
	}
	if len(f.rows) != len(want) {
		t.Fatalf("%d records, want %d", len(f.rows), len(want))
	}
	for i, r := range f.rows {
		if len(r) != len(f.columns) {
			t.Fatalf("record %d has %d fields, the column line %d", i+1, len(r), len(f.columns))
		}
		got := rec{r[0], r[1], r[6], r[7], r[8], r[9], r[10], r[13]}
		if got != want[i] {
			t.Errorf("record %d:\n got %+v\nwant %+v", i+1, got, want[i])
		}
		for _, field := range r {
			if len(field) > 0 && strings.ContainsRune("=+-@", rune(field[0])) {
				t.Errorf("record %d: field %q could be read as a formula", i+1, field)
			}
		}
	}
	// The raw bytes: Windows-1252 umlauts and en dash, doubled quotes.
	if !bytes.Contains(b, []byte("M\xfcller \x96 ?")) || !bytes.Contains(b, []byte(`"Einlage ""Gesellschafter""`)) {
		t.Errorf("encoding or quoting wrong: %q", b[bytes.Index(b, []byte("Einlage"))-1:][:60])
	}
}

// TestDATEVTaxPairAcrossPages: a net event at the end of a page waits for
// its tax event on the next.
func TestDATEVTaxPairAcrossPages(t *testing.T) {
	var lines []ledgerv1.JournalLine
	for i := int64(1); i <= 9; i += 2 {
		net, tax := expGen(i), expGen(i+1)
		tax.IntentID, net.BookingDate, tax.BookingDate = net.IntentID, "2025-01-10", "2025-01-10"
		net.TaxCode, tax.TaxCode = ptr("VSt19"), ptr("VSt19")
		net.Amount, tax.Amount = "100.00", "19.00"
		tax.AccountDebit = "1406"
		lines = append(lines, net, tax)
	}
	for _, page := range []int{2, 3, 4, 5} {
		s, _ := expService(&expLedger{lines: lines}, nil)
		s.export.page = page
		b, chunks := datevAll(t, s, "2025-01-01", "2025-12-31")
		f := parseDATEV(t, b)
		if len(f.rows) != 5 {
			t.Errorf("page %d: %d records in %d chunks, want 5", page, len(f.rows), chunks)
		}
		for _, r := range f.rows {
			if r[0] != "119,00" || r[8] != "9" {
				t.Errorf("page %d: record %v", page, r[:9])
			}
		}
	}
}

// TestDATEVStreaming: 12,000 events in chunks of one feed page make one
// valid file, and events posted during the download stay out of it.
func TestDATEVStreaming(t *testing.T) {
	l := &expLedger{n: 12000, gen: expGen}
	s, _ := expService(l, nil)
	ctx := expCtx()
	var file []byte
	cursor, chunks := "", 0
	for {
		c, err := s.DATEVExport(ctx, "2025-01-01", "2025-12-31", cursor)
		if err != nil {
			t.Fatal(err)
		}
		file = append(file, c.Data...)
		chunks++
		l.n = 12000 + int64(chunks)*10 // the journal grows meanwhile
		if c.Next == "" {
			break
		}
		cursor = c.Next
	}
	if chunks != 3 {
		t.Errorf("%d chunks, want 3 pages of 5000", chunks)
	}
	f := parseDATEV(t, file)
	if len(f.rows) != 12000 {
		t.Fatalf("%d records, want 12000", len(f.rows))
	}
	for i, r := range f.rows {
		if len(r) != 125 {
			t.Fatalf("record %d: %d fields", i+1, len(r))
		}
		g := expGen(int64(i + 1))
		if want := strings.Replace(g.Amount, ".", ",", 1); r[0] != want || r[10] != *g.ExternalReference {
			t.Fatalf("record %d: %q %q, want %q %q", i+1, r[0], r[10], want, *g.ExternalReference)
		}
	}
}

func TestDATEVDateFilterAndEmpty(t *testing.T) {
	s, _ := expService(&expLedger{n: 800, gen: expGen}, nil)
	b, _ := datevAll(t, s, "2025-02-01", "2025-02-28")
	f := parseDATEV(t, b)
	// expGen dates event n at day n%365 of 2025: February is days 31..58.
	if len(f.rows) != 3*28 {
		t.Errorf("%d February records, want %d", len(f.rows), 3*28)
	}
	for _, r := range f.rows {
		if !strings.HasSuffix(r[9], "02") {
			t.Errorf("Belegdatum %s outside February", r[9])
		}
	}
	s, _ = expService(&expLedger{}, nil)
	b, chunks := datevAll(t, s, "2025-02-01", "2025-02-28")
	if f := parseDATEV(t, b); len(f.rows) != 0 || chunks != 1 {
		t.Errorf("empty journal: %d records in %d chunks", len(f.rows), chunks)
	}
}

func TestDATEVFestschreibung(t *testing.T) {
	for _, c := range []struct {
		name     string
		statuses map[string]string
		want     string
	}{
		{"all hard-locked", map[string]string{"2025-01": "hard-locked", "2025-02": "hard-locked", "2025-03": "hard-locked"}, "1"},
		{"one soft-locked", map[string]string{"2025-01": "hard-locked", "2025-02": "soft-locked", "2025-03": "hard-locked"}, "0"},
		{"one missing", map[string]string{"2025-01": "hard-locked", "2025-03": "hard-locked"}, "0"},
		{"none", nil, "0"},
	} {
		s, _ := expService(&expLedger{n: 10, gen: expGen}, c.statuses)
		b, _ := datevAll(t, s, "2025-01-15", "2025-03-10")
		if got := parseDATEV(t, b).header[20]; got != c.want {
			t.Errorf("%s: Festschreibung %s, want %s", c.name, got, c.want)
		}
	}
	// Through the year's end the adjustment period counts too, when it exists.
	year := map[string]string{}
	for m := 1; m <= 12; m++ {
		year[fmt.Sprintf("2025-%02d", m)] = "hard-locked"
	}
	for _, c := range []struct {
		name, closing, to, want string
	}{
		{"no adjustment period", "", "2025-12-31", "1"},
		{"adjustment period locked", "hard-locked", "2025-12-31", "1"},
		{"adjustment period open", "open", "2025-12-31", "0"},
		{"batch before the year's end", "open", "2025-12-30", "1"},
	} {
		statuses := maps.Clone(year)
		if c.closing != "" {
			statuses["2025-13"] = c.closing
		}
		s, _ := expService(&expLedger{n: 10, gen: expGen}, statuses)
		b, _ := datevAll(t, s, "2025-10-01", c.to)
		if got := parseDATEV(t, b).header[20]; got != c.want {
			t.Errorf("%s: Festschreibung %s, want %s", c.name, got, c.want)
		}
	}
}

func TestDATEVFiscalYear(t *testing.T) {
	s, _ := expService(&expLedger{n: 10, gen: expGen}, nil)
	ten := expTenantData()
	ten.FiscalYearStartMonth = 7
	s.tenants = expTenants{ten}
	b, _ := datevAll(t, s, "2025-07-01", "2026-06-30")
	if got := parseDATEV(t, b).header[12]; got != "20250701" {
		t.Errorf("WJ-Beginn %s", got)
	}
	b, _ = datevAll(t, s, "2025-01-01", "2025-06-30")
	if got := parseDATEV(t, b).header[12]; got != "20240701" {
		t.Errorf("WJ-Beginn %s", got)
	}
	if _, err := s.DATEVExport(expCtx(), "2025-06-01", "2025-07-31", ""); !errs.Is(err, errs.InvalidInput) {
		t.Errorf("across fiscal years: %v", err)
	}
}

func TestDATEVBadInput(t *testing.T) {
	s, _ := expService(&expLedger{n: 10, gen: expGen}, nil)
	ctx := expCtx()
	for _, c := range []struct{ from, to, cursor, field string }{
		{"", "2025-01-31", "", "from"},
		{"2025-01-01", "", "", "to"},
		{"2025-1-01", "2025-01-31", "", "from"},
		{"2025-02-30", "2025-03-31", "", "from"},
		{"2025-01-01", "31.01.2025", "", "to"},
		{"2025-02-01", "2025-01-31", "", "to"},
		{"2024-12-01", "2025-01-31", "", "to"},
		{"2025-01-01", "2026-01-01", "", "to"},
		{"2025-01-01", "2025-01-31", "garbage", "cursor"},
	} {
		_, err := s.DATEVExport(ctx, c.from, c.to, c.cursor)
		e := errs.As(err)
		if e == nil || e.Code != errs.InvalidInput || len(e.Details) == 0 || e.Details[0].Field != c.field {
			t.Errorf("from %q to %q cursor %q: %v, want INVALID_INPUT on %s", c.from, c.to, c.cursor, err, c.field)
		}
	}
	ten := expTenantData()
	ten.DATEVClientNumber = ""
	s.tenants = expTenants{ten}
	if _, err := s.DATEVExport(ctx, "2025-01-01", "2025-01-31", ""); !errs.Is(err, errs.Unprocessable) {
		t.Errorf("without Mandantennummer: %v", err)
	}
	if _, err := s.DATEVExport(t.Context(), "2025-01-01", "2025-01-31", ""); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("without claims: %v", err)
	}
}

// BenchmarkDATEVExport exports journals of 100,000 and 1,000,000 events,
// generated on the fly by the fake feed, chunk by chunk as the gateway
// fetches them, and reports rows/s and the peak heap in use: the same for
// both sizes, since a chunk is one feed page.
func BenchmarkDATEVExport(b *testing.B) {
	for _, events := range []int64{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			ctx := expCtx()
			for b.Loop() {
				s, _ := expService(&expLedger{n: events, gen: expGen}, nil)
				runtime.GC()
				var ms runtime.MemStats
				var peak uint64
				rows, size, cursor := int64(0), 0, ""
				start := time.Now()
				for chunk := 0; ; chunk++ {
					c, err := s.DATEVExport(ctx, "2025-01-01", "2025-12-31", cursor)
					if err != nil {
						b.Fatal(err)
					}
					rows += int64(bytes.Count(c.Data, []byte("\r\n")))
					size += len(c.Data)
					if chunk%10 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse)
					}
					if c.Next == "" {
						break
					}
					cursor = c.Next
				}
				if rows -= 2; rows != events { // the header lines
					b.Fatalf("%d rows", rows)
				}
				b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(size)/(1<<20), "file-MiB")
			}
		})
	}
}
