package allinone_test

import (
	"archive/zip"
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"encoding/xml"
	"io"
	"mime"
	"slices"
	"strings"
	"testing"
)

// gobdIndex is what the test reads of index.xml.
type gobdIndex struct {
	XMLName      xml.Name `xml:"DataSet"`
	Version      string   `xml:"Version"`
	DataSupplier struct {
		Name string `xml:"Name"`
	} `xml:"DataSupplier"`
	Media struct {
		Name   string `xml:"Name"`
		Tables []struct {
			URL         string `xml:"URL"`
			Name        string `xml:"Name"`
			Description string `xml:"Description"`
			Validity    *struct {
				From string `xml:"Range>From"`
				To   string `xml:"Range>To"`
			} `xml:"Validity"`
			UTF8          *struct{} `xml:"UTF8"`
			DecimalSymbol string    `xml:"DecimalSymbol"`
			Variable      struct {
				ColumnDelimiter  string `xml:"ColumnDelimiter"`
				RecordDelimiter  string `xml:"RecordDelimiter"`
				TextEncapsulator string `xml:"TextEncapsulator"`
				PrimaryKeys      []struct {
					Name string `xml:"Name"`
				} `xml:"VariablePrimaryKey"`
				Columns []struct {
					Name string `xml:"Name"`
				} `xml:"VariableColumn"`
				ForeignKeys []struct {
					Name       string `xml:"Name"`
					References string `xml:"References"`
				} `xml:"ForeignKey"`
			} `xml:"VariableLength"`
		} `xml:"Table"`
	} `xml:"Media"`
}

// gobdArchive is a downloaded GoBD export: its index and CSV tables (the
// header row first).
type gobdArchive struct {
	size   int // bytes of the ZIP
	index  gobdIndex
	files  []string
	tables map[string][][]string
}

// gobdExport downloads the GoBD export of a fiscal year and opens it: the
// ZIP, index.xml, and every table the index describes, whose first row
// must name the described columns.
func (p *platform) gobdExport(token, year string) gobdArchive {
	p.t.Helper()
	t := p.t
	r := p.must(200, "GET", "/v1/reports/gobd-export?year="+year, token, nil)
	if ct := r.Header.Get("Content-Type"); ct != "application/zip" {
		t.Fatalf("GoBD export Content-Type %q", ct)
	}
	if disp, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition")); err != nil || disp != "attachment" || params["filename"] != "gobd-export-"+year+".zip" {
		t.Fatalf("GoBD export Content-Disposition %q", r.Header.Get("Content-Disposition"))
	}
	zr, err := zip.NewReader(bytes.NewReader(r.Raw), int64(len(r.Raw)))
	if err != nil {
		t.Fatalf("GoBD export is no ZIP (%d bytes): %v", len(r.Raw), err)
	}
	a := gobdArchive{size: len(r.Raw), tables: map[string][][]string{}}
	content := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc) // checks the CRC too
		rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		a.files = append(a.files, f.Name)
		content[f.Name] = b
	}
	if err := xml.Unmarshal(content["index.xml"], &a.index); err != nil {
		t.Fatalf("index.xml: %v\n%s", err, content["index.xml"])
	}
	if !bytes.Contains(content["index.xml"], []byte(`<!DOCTYPE DataSet SYSTEM "gdpdu-01-09-2004.dtd">`)) || len(content["gdpdu-01-09-2004.dtd"]) == 0 {
		t.Fatal("index.xml does not name the GDPdU DTD that comes with it")
	}
	for _, tb := range a.index.Media.Tables {
		b, ok := content[tb.URL]
		if !ok {
			t.Fatalf("index.xml describes %s, which is not in the archive %v", tb.URL, a.files)
		}
		v := tb.Variable
		if v.ColumnDelimiter != ";" || v.RecordDelimiter != "\r\n" || v.TextEncapsulator != `"` || tb.DecimalSymbol != "," || tb.UTF8 == nil {
			t.Fatalf("%s: format %+v, decimal %q", tb.URL, v, tb.DecimalSymbol)
		}
		if !bytes.HasSuffix(b, []byte("\r\n")) || bytes.Count(b, []byte("\n")) != bytes.Count(b, []byte("\r\n")) {
			t.Fatalf("%s: records do not end in CRLF", tb.URL)
		}
		cr := csv.NewReader(bytes.NewReader(b))
		cr.Comma = ';'
		recs, err := cr.ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", tb.URL, err)
		}
		var described []string
		for _, c := range v.PrimaryKeys {
			described = append(described, c.Name)
		}
		for _, c := range v.Columns {
			described = append(described, c.Name)
		}
		if len(recs) == 0 || !slices.Equal(recs[0], described) {
			t.Fatalf("%s: header %q, index.xml describes %q", tb.URL, recs[0], described)
		}
		a.tables[tb.URL] = recs
	}
	return a
}

// column returns the values of a named column below the header.
func (a gobdArchive) column(table, name string) []string {
	recs := a.tables[table]
	i := slices.Index(recs[0], name)
	var out []string
	for _, r := range recs[1:] {
		out = append(out, r[i])
	}
	return out
}

// TestReportsGoBD opens the GoBD export of the hand-computed example: the
// ZIP, its index.xml describing the journal, chart, tax codes and hash
// chain, the journal of exactly the fiscal year's events and the chain head
// the ledger verifies.
func TestReportsGoBD(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Prüfung & Söhne GmbH")
	w, rk := p.apiKey(admin, "journal:write", "journal:read"), p.apiKey(admin, "auswertungen:read")

	for _, c := range []struct{ query, field string }{
		{"", "year"}, {"?year=25", "year"}, {"?year=2025-01", "year"}, {"?year=abcd", "year"}, {"?year=1899", "year"},
		{"?year=2999", "year"}, // not begun
	} {
		p.expectInvalid([]string{c.field}, "GET", "/v1/reports/gobd-export"+c.query, rk, nil)
	}

	// An empty year still has every table, with its header only.
	empty := p.gobdExport(rk, "2025")
	if n := len(empty.tables["journal.csv"]); n != 1 {
		t.Fatalf("empty year: journal.csv has %d records", n)
	}

	ids := p.repFigures(w)
	p.book(w, bookingBody("2024-12-31", "Vorjahr", bline("1800", "2900", "1.00")))
	p.book(w, bookingBody("2026-01-02", "Folgejahr", bline("1800", "2900", "2.00")))
	v := p.verify(w)
	if !v.OK || v.Events != 8 {
		t.Fatalf("verify %+v", v)
	}
	// A period lock signs the chain head: the export carries the checkpoint.
	p.transition("soft-lock", "2025-01", admin)

	a := p.gobdExport(rk, "2025")
	slices.Sort(a.files)
	if want := []string{"accounts.csv", "chain.csv", "checkpoints.csv", "gdpdu-01-09-2004.dtd", "index.xml", "journal.csv", "tax_codes.csv"}; !slices.Equal(a.files, want) {
		t.Fatalf("archive files %v, want %v", a.files, want)
	}
	ix := a.index
	if ix.Version != "1.0" || ix.DataSupplier.Name != "Prüfung & Söhne GmbH" || ix.Media.Name != "Wirtschaftsjahr 01.01.2025 bis 31.12.2025" {
		t.Fatalf("index.xml: version %q supplier %q media %q", ix.Version, ix.DataSupplier.Name, ix.Media.Name)
	}
	var urls, names []string
	for _, tb := range ix.Media.Tables {
		urls, names = append(urls, tb.URL), append(names, tb.Name)
		if tb.Description == "" {
			t.Fatalf("%s has no description", tb.URL)
		}
		validity := tb.URL == "journal.csv" || tb.URL == "chain.csv"
		if validity != (tb.Validity != nil) || validity && (tb.Validity.From != "01.01.2025" || tb.Validity.To != "31.12.2025") {
			t.Fatalf("%s validity %+v", tb.URL, tb.Validity)
		}
	}
	if !slices.Equal(urls, []string{"journal.csv", "accounts.csv", "tax_codes.csv", "chain.csv", "checkpoints.csv"}) ||
		!slices.Equal(names, []string{"Journal", "Kontenplan", "Steuerschluessel", "Hashkette", "Pruefpunkte"}) {
		t.Fatalf("index.xml tables %v %v", urls, names)
	}
	if fks := ix.Media.Tables[0].Variable.ForeignKeys; len(fks) != 3 || fks[0].References != "Kontenplan" || fks[2].References != "Steuerschluessel" {
		t.Fatalf("journal foreign keys %+v", fks)
	}

	// The journal: the fiscal year's six events, in journal order, with the
	// invoice's split as the ledger holds it.
	j := a.tables["journal.csv"]
	if len(j)-1 != 6 {
		t.Fatalf("journal.csv has %d rows, want the 6 events of 2025", len(j)-1)
	}
	sig := func(r []string) string { return strings.Join(append([]string{r[0]}, r[3:9]...), "|") }
	var got []string
	for _, r := range j[1:] {
		got = append(got, sig(r))
	}
	want := []string{
		"1|02.01.2025|2025-01|1800|2900|25000,00|",
		"2|10.03.2025|2025-03|1200|4400|10000,00|USt19",
		"3|10.03.2025|2025-03|1200|3806|1900,00|USt19",
		"4|31.03.2025|2025-03|6310|1800|1500,00|",
		"5|05.04.2025|2025-04|1800|1200|11900,00|",
		"6|20.04.2025|2025-04|6815|1800|250,00|",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("journal.csv\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if intents := a.column("journal.csv", "intent_id"); intents[1] != ids[1] || intents[2] != ids[1] || intents[5] != ids[4] {
		t.Fatalf("journal.csv intent ids %v, posted %v", intents, ids)
	}
	if texts := a.column("journal.csv", "description"); texts[3] != "Miete Büro März" || texts[5] != `=SUMME(A1:A9) Bürobedarf "Größe XL"` {
		t.Fatalf("journal.csv descriptions %q", texts)
	}
	if refs := a.column("journal.csv", "external_reference"); refs[1] != "RE-2025/001" || refs[4] != "Zahlung Müller" || refs[0] != "" {
		t.Fatalf("journal.csv references %q", refs)
	}

	// The chain: the ledger's verified head, all eight events.
	c := a.tables["chain.csv"]
	if len(c) != 2 {
		t.Fatalf("chain.csv has %d rows", len(c)-1)
	}
	chain := map[string]string{}
	for i, name := range c[0] {
		chain[name] = c[1][i]
	}
	if chain["head_hash"] != v.HeadHash || chain["chain_ok"] != "ja" || chain["chain_events"] != "8" || chain["first_broken_journal_number"] != "" ||
		chain["fiscal_year_from"] != "01.01.2025" || chain["fiscal_year_to"] != "31.12.2025" || chain["journal_rows"] != "6" ||
		chain["first_journal_number"] != "1" || chain["last_journal_number"] != "6" {
		t.Fatalf("chain.csv %v, ledger verifies %+v", chain, v)
	}

	// The lock's checkpoint signs the head; an auditor can check the
	// signature from the export alone, by the format index.xml describes.
	cp := a.tables["checkpoints.csv"]
	var lock map[string]string
	for _, r := range cp[1:] {
		row := map[string]string{}
		for i, name := range cp[0] {
			row[name] = r[i]
		}
		if row["reason"] == "lock 2025-01 soft-locked" {
			lock = row
		}
	}
	if lock == nil || lock["journal_number"] != "8" || lock["hash"] != v.HeadHash || lock["signature_ok"] != "ja" || lock["tenant_id"] != tenant {
		t.Fatalf("checkpoints.csv %q: no checkpoint of the lock at the head %s", cp, v.HeadHash)
	}
	var msg []byte
	for _, f := range []string{"ledger-checkpoint-v1", lock["tenant_id"], lock["journal_number"], lock["hash"], lock["signed_at"], lock["reason"], lock["key_id"]} {
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(f)))
		msg = append(msg, f...)
	}
	pub, _ := hex.DecodeString(lock["public_key"])
	sigBytes, _ := hex.DecodeString(lock["signature"])
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, msg, sigBytes) {
		t.Fatalf("the checkpoint's signature does not verify from the export: %v", lock)
	}

	// Chart and tax codes as the ledger holds them.
	accounts := a.column("accounts.csv", "number")
	if len(accounts) < 1000 || !slices.Contains(accounts, "1800") || a.tables["accounts.csv"][1+slices.Index(accounts, "1800")][1] != "Bank" {
		t.Fatalf("accounts.csv: %d accounts", len(accounts))
	}
	codes := a.column("tax_codes.csv", "code")
	i := slices.Index(codes, "USt19")
	if i < 0 || a.tables["tax_codes.csv"][1+i][3] != "19,00" || a.tables["tax_codes.csv"][1+i][4] != "3" {
		t.Fatalf("tax_codes.csv %q", a.tables["tax_codes.csv"])
	}

	// The years around hold their own event each.
	for year, n := range map[string]int{"2024": 1, "2026": 1} {
		y := p.gobdExport(rk, year)
		if rows := len(y.tables["journal.csv"]) - 1; rows != n || y.column("chain.csv", "chain_events")[0] != "8" || y.column("chain.csv", "head_hash")[0] != v.HeadHash {
			t.Fatalf("GoBD %s: %d journal rows, chain %q", year, rows, y.tables["chain.csv"])
		}
	}
}
