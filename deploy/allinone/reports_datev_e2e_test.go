package allinone_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"mime"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// datevFile is a DATEV Buchungsstapel as the test re-reads it.
type datevFile struct {
	raw     []byte   // as served, Windows-1252
	lines   []string // decoded, without the CRLF
	header  []string // fields of the EXTF header line
	columns []string // the column names
	rows    [][]string
}

// datevColumnsHead are the first fields of a Buchungsstapel record.
var datevColumnsHead = []string{"Umsatz (ohne Soll/Haben-Kz)", "Soll/Haben-Kennzeichen", "WKZ Umsatz", "Kurs", "Basisumsatz",
	"WKZ Basisumsatz", "Konto", "Gegenkonto (ohne BU-Schlüssel)", "BU-Schlüssel", "Belegdatum", "Belegfeld 1", "Belegfeld 2", "Skonto", "Buchungstext"}

// Fields of a record by column.
const (
	dvUmsatz = iota
	dvSH
	_
	_
	_
	_
	dvKonto
	dvGegenkonto
	dvBU
	dvBelegdatum
	dvBelegfeld1
	_
	_
	dvBuchungstext
)

// datevExport downloads the DATEV export of from..to and re-parses it:
// Windows-1252, CRLF after every line, ';' between fields, the header line,
// the column names, one record per line with 125 fields.
func (p *platform) datevExport(token, from, to string) datevFile {
	p.t.Helper()
	path := "/v1/reports/datev-export?from=" + from + "&to=" + to
	r := p.must(200, "GET", path, token, nil)
	t := p.t
	if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=windows-1252" {
		t.Fatalf("DATEV export Content-Type %q", ct)
	}
	disp, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
	wantName := "EXTF_Buchungsstapel_" + strings.ReplaceAll(from, "-", "") + "_" + strings.ReplaceAll(to, "-", "") + ".csv"
	if err != nil || disp != "attachment" || params["filename"] != wantName {
		t.Fatalf("DATEV export Content-Disposition %q, want attachment with filename %s", r.Header.Get("Content-Disposition"), wantName)
	}
	f := datevFile{raw: r.Raw}
	if !bytes.HasSuffix(r.Raw, []byte("\r\n")) || bytes.Count(r.Raw, []byte("\n")) != bytes.Count(r.Raw, []byte("\r\n")) ||
		bytes.Count(r.Raw, []byte("\r")) != bytes.Count(r.Raw, []byte("\r\n")) {
		t.Fatalf("DATEV export lines do not all end in CRLF: %q", r.Raw[:min(len(r.Raw), 400)])
	}
	dec, err := charmap.Windows1252.NewDecoder().Bytes(r.Raw)
	if err != nil {
		t.Fatalf("DATEV export is not Windows-1252: %v", err)
	}
	f.lines = strings.Split(strings.TrimSuffix(string(dec), "\r\n"), "\r\n")
	cr := csv.NewReader(strings.NewReader(string(dec)))
	cr.Comma, cr.FieldsPerRecord = ';', -1
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("DATEV export does not parse as ';'-separated values: %v", err)
	}
	if len(recs) < 2 || len(recs) != len(f.lines) {
		t.Fatalf("DATEV export: %d records in %d lines", len(recs), len(f.lines))
	}
	f.header, f.columns, f.rows = recs[0], recs[1], recs[2:]
	if len(f.header) != 31 || !strings.HasPrefix(f.lines[0], `"EXTF";700;21;"Buchungsstapel";13;`) {
		t.Fatalf("DATEV header line (%d fields): %s", len(f.header), f.lines[0])
	}
	if len(f.columns) != 125 || !slices.Equal(f.columns[:len(datevColumnsHead)], datevColumnsHead) ||
		f.columns[20] != "Beleginfo – Art 1" || f.columns[113] != "Festschreibung" || f.columns[124] != "Abw. Skontokonto" {
		t.Fatalf("DATEV column line (%d names): %s", len(f.columns), f.lines[1])
	}
	for i, row := range f.rows {
		if len(row) != 125 {
			t.Fatalf("DATEV record %d has %d fields: %s", i+1, len(row), f.lines[i+2])
		}
	}
	return f
}

// festschreibung is the header's Festschreibung flag.
func (f datevFile) festschreibung() string { return f.header[20] }

var datevCreatedRe = regexp.MustCompile(`^[0-9]{17}$`)

// TestReportsDATEV re-reads the DATEV export of the hand-computed example:
// header, columns, records (the taxed invoice joined to one gross record
// with BU key 3), amounts, dates, texts in Windows-1252 and formula
// neutralisation; the DATEV numbers it needs; and the Festschreibung flag,
// which follows the hard locks of the range and of the adjustment period.
func TestReportsDATEV(t *testing.T) {
	p, admin, _ := setup(t, nil, "DATEV Export GmbH")
	w, rk := p.apiKey(admin, "journal:write"), p.apiKey(admin, "auswertungen:read")
	const full = "from=2025-01-01&to=2025-12-31"

	// Without Beraternummer and Mandantennummer there is no DATEV file.
	r := p.expectError(422, "UNPROCESSABLE", "GET", "/v1/reports/datev-export?"+full, rk, nil)
	if got := detailFields(t, r); !sameFields(got, []string{"datev_consultant_number", "datev_client_number"}) {
		t.Fatalf("422 details %v: %s", got, r.Raw)
	}
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"datev_consultant_number": "1234567"})
	r = p.expectError(422, "UNPROCESSABLE", "GET", "/v1/reports/datev-export?"+full, rk, nil)
	if got := detailFields(t, r); !slices.Equal(got, []string{"datev_client_number"}) {
		t.Fatalf("422 details %v: %s", got, r.Raw)
	}
	p.must(200, "PATCH", "/v1/tenant", admin, map[string]any{"datev_client_number": "42"})

	// Bad ranges are refused before anything is written.
	for _, c := range []struct {
		query string
		field string
	}{
		{"to=2025-12-31", "from"},
		{"from=2025-01-01", "to"},
		{"from=2025-02-30&to=2025-12-31", "from"},
		{"from=2025-1-01&to=2025-12-31", "from"},
		{"from=2025-01-01&to=31.12.2025", "to"},
		{"from=2025-06-01&to=2025-05-31", "to"},
		{"from=2025-06-01&to=2026-01-31", "to"}, // two fiscal years
	} {
		p.expectInvalid([]string{c.field}, "GET", "/v1/reports/datev-export?"+c.query, rk, nil)
	}

	// An empty year: header and columns only.
	if f := p.datevExport(rk, "2025-01-01", "2025-12-31"); len(f.rows) != 0 {
		t.Fatalf("empty year has %d records", len(f.rows))
	}

	ids := p.repFigures(w)
	p.book(w, bookingBody("2024-12-31", "Vorjahr", bline("1800", "2900", "1.00")))
	p.book(w, bookingBody("2026-01-01", "Folgejahr", bline("1800", "2900", "2.00")))
	// A purchase with input tax shares its credit account: one H record with
	// BU key 9; its reversal (dated like it) one S record.
	purchase := p.book(w, bookingBody("2025-05-15", "Webhosting Mai", bline("6815", "1800", "119.00", "tax_code", "VSt19"))).IntentID
	storno := p.must(201, "POST", "/v1/journal/reverse", w, map[string]any{"intent_id": purchase}).str("reversal_intent_id")
	stornoText := []rune(p.intent(admin, storno).Entries[0].Description)
	beleg := func(id string) string { return strings.ReplaceAll(id, "-", "")[:8] }

	f := p.datevExport(rk, "2025-01-01", "2025-12-31")
	h := f.header
	created, err := time.ParseInLocation("20060102150405", h[5][:14], mustBerlin(t))
	if !datevCreatedRe.MatchString(h[5]) || err != nil || time.Since(created).Abs() > 2*time.Minute {
		t.Fatalf("Erzeugt am %q (%v), want now in German local time", h[5], err)
	}
	if got, want := [][]string{h[:5], h[6:]}, [][]string{
		{"EXTF", "700", "21", "Buchungsstapel", "13"},
		{"", "", "", "", "1234567", "42", "20250101", "4", "20250101", "20251231", "Buchungen 01.01.25-31.12.25", "",
			"1", "0", "0", "EUR", "", "", "", "", "04", "", "", "", ""},
	}; !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("DATEV header\n%q\nwant\n%q", got, want)
	}

	// Seven records for ten events: the invoice's net and tax events are
	// one gross record again, with BU key 3 (USt19), the purchase's and its
	// reversal's too; the years around are left out.
	rec := func(f []string) string {
		return strings.Join([]string{f[dvUmsatz], f[dvSH], f[dvKonto], f[dvGegenkonto], f[dvBU], f[dvBelegdatum], f[dvBelegfeld1], f[dvBuchungstext]}, "|")
	}
	var got []string
	for _, row := range f.rows {
		got = append(got, rec(row))
	}
	want := []string{
		"25000,00|S|1800|2900||0201|" + beleg(ids[0]) + "|Einzahlung Stammkapital",
		"11900,00|S|1200|4400|3|1003|RE-2025/001|Ausgangsrechnung 2025-001",
		"1500,00|S|6310|1800||3103|" + beleg(ids[2]) + "|Miete Büro März",
		"11900,00|S|1800|1200||0504|Zahlung-Mueller|Zahlungseingang Müller",
		"250,00|S|6815|1800||2004|" + beleg(ids[4]) + `|'=SUMME(A1:A9) Bürobedarf "Größe XL"`,
		"119,00|H|1800|6815|9|1505|" + beleg(purchase) + "|Webhosting Mai",
		"119,00|S|1800|6815|9|1505|" + beleg(storno) + "|" + string(stornoText[:min(60, len(stornoText))]),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("DATEV records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// As written: text fields quoted (also when empty), numbers and dates
	// not, inner quotes doubled; the rest of a record empty.
	for i, prefix := range []string{
		`25000,00;"S";"";;;"";1800;2900;"";0201;"` + beleg(ids[0]) + `";"";;"Einzahlung Stammkapital";`,
		`11900,00;"S";"";;;"";1200;4400;"3";1003;"RE-2025/001";"";;"Ausgangsrechnung 2025-001";`,
		`250,00;"S";"";;;"";6815;1800;"";2004;"` + beleg(ids[4]) + `";"";;"'=SUMME(A1:A9) Bürobedarf ""Größe XL""";`,
	} {
		line := f.lines[2+[]int{0, 1, 4}[i]]
		if !strings.HasPrefix(line, prefix) {
			t.Fatalf("DATEV record\n%s\nwant it to start\n%s", line, prefix)
		}
		for j, v := range f.rows[[]int{0, 1, 4}[i]][dvBuchungstext+1:] {
			if v != "" {
				t.Fatalf("DATEV record %d: field %d is %q", i, dvBuchungstext+1+j, v)
			}
		}
	}
	// Umlauts are single Windows-1252 bytes, not UTF-8.
	for _, s := range []string{"Miete Büro März", "Zahlungseingang Müller", "Größe"} {
		enc, _ := charmap.Windows1252.NewEncoder().String(s)
		if !bytes.Contains(f.raw, []byte(enc)) {
			t.Fatalf("DATEV export lacks %q in Windows-1252", s)
		}
	}
	if bytes.Contains(f.raw, []byte("ü")) || bytes.Contains(f.raw, []byte("–")) {
		t.Fatal("DATEV export contains UTF-8")
	}

	// A part of the year: only its records, its dates in the header.
	q := p.datevExport(rk, "2025-03-01", "2025-03-31")
	if len(q.rows) != 2 || q.rows[0][dvBelegdatum] != "1003" || q.rows[1][dvBelegdatum] != "3103" ||
		q.header[14] != "20250301" || q.header[15] != "20250331" || q.header[12] != "20250101" || q.header[16] != "Buchungen 01.03.25-31.03.25" {
		t.Fatalf("DATEV March: header %q, %d records", q.header, len(q.rows))
	}

	// ---- Festschreibung ----
	for m := 1; m <= 11; m++ {
		p.must(200, "POST", fmt.Sprintf("/v1/periods/2025-%02d/lock", m), admin, nil)
	}
	if fl := p.datevExport(rk, "2025-01-01", "2025-12-31").festschreibung(); fl != "0" {
		t.Fatalf("Festschreibung %s with December open, want 0", fl)
	}
	if fl := p.datevExport(rk, "2025-03-01", "2025-11-30").festschreibung(); fl != "1" {
		t.Fatalf("Festschreibung %s for locked March to November, want 1", fl)
	}
	if fl := p.datevExport(rk, "2025-03-01", "2025-12-31").festschreibung(); fl != "0" {
		t.Fatalf("Festschreibung %s for March to open December, want 0", fl)
	}
	// The adjustment period belongs to a batch that reaches the year's end:
	// while it is open the year is not final.
	p.must(201, "POST", "/v1/periods/2025/create-adjustment", admin, nil)
	p.must(200, "POST", "/v1/periods/2025-12/lock", admin, nil)
	if fl := p.datevExport(rk, "2025-01-01", "2025-12-31").festschreibung(); fl != "0" {
		t.Fatalf("Festschreibung %s with 2025-13 open, want 0", fl)
	}
	if fl := p.datevExport(rk, "2025-01-01", "2025-12-30").festschreibung(); fl != "1" {
		t.Fatalf("Festschreibung %s for a batch before the year's end, want 1", fl)
	}
	p.must(200, "POST", "/v1/periods/2025-13/lock", admin, nil)
	locked := p.datevExport(rk, "2025-01-01", "2025-12-31")
	if fl := locked.festschreibung(); fl != "1" {
		t.Fatalf("Festschreibung %s with every period hard-locked, want 1", fl)
	}
	if len(locked.rows) != 7 || !slices.Equal(locked.columns, f.columns) {
		t.Fatalf("the locked year's file differs: %d records", len(locked.rows))
	}

	// Another tenant's export holds only its own bookings.
	admin2, _ := p.newTenant("Zweiter Mandant GmbH")
	p.must(200, "PATCH", "/v1/tenant", admin2, map[string]any{"datev_consultant_number": "7654", "datev_client_number": "1"})
	p.book(admin2, bookingBody("2025-07-07", "Einlage", bline("1800", "2900", "7.00")))
	other := p.datevExport(admin2, "2025-01-01", "2025-12-31")
	if len(other.rows) != 1 || rec(other.rows[0])[:20] != "7,00|S|1800|2900||07" || other.header[10] != "7654" || other.header[11] != "1" || other.festschreibung() != "0" {
		t.Fatalf("second tenant's DATEV export: header %q records %q", other.header, other.rows)
	}
}

func mustBerlin(t testing.TB) *time.Location {
	t.Helper()
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
