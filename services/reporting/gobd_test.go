package reporting

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// dtd is the element structure of a DTD: for each element a regular
// expression over its children, written as "<Name>" one after the other.
type dtd struct {
	models map[string]*regexp.Regexp
	pcdata map[string]bool // (#PCDATA): text, no children
	empty  map[string]bool // EMPTY: nothing at all
}

// parseDTD reads the <!ELEMENT> declarations; the GDPdU DTD has no
// attribute lists and no mixed content.
func parseDTD(t testing.TB, text string) *dtd {
	t.Helper()
	text = regexp.MustCompile(`(?s)<!--.*?-->`).ReplaceAllString(text, "")
	if strings.Contains(text, "<!ATTLIST") {
		t.Fatal("the DTD declares attributes; the checker does not handle them")
	}
	d := &dtd{models: map[string]*regexp.Regexp{}, pcdata: map[string]bool{}, empty: map[string]bool{}}
	name := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.-]*`)
	for _, m := range regexp.MustCompile(`<!ELEMENT\s+(\S+)\s+([^>]*)>`).FindAllStringSubmatch(text, -1) {
		el, model := m[1], strings.Join(strings.Fields(m[2]), "")
		switch model {
		case "EMPTY":
			d.empty[el] = true
			continue
		case "(#PCDATA)":
			d.pcdata[el] = true
			continue
		}
		if strings.Contains(model, "#PCDATA") || model == "ANY" {
			t.Fatalf("element %s: mixed content %s not handled", el, model)
		}
		var re strings.Builder
		for i := 0; i < len(model); {
			if loc := name.FindStringIndex(model[i:]); loc != nil && loc[0] == 0 {
				re.WriteString("(?:<" + model[i:i+loc[1]] + ">)")
				i += loc[1]
				continue
			}
			switch c := model[i]; c {
			case '(':
				re.WriteString("(?:")
			case ',':
			case ')', '|', '?', '*', '+':
				re.WriteByte(c)
			default:
				t.Fatalf("element %s: unexpected %q in %s", el, c, model)
			}
			i++
		}
		d.models[el] = regexp.MustCompile("^" + re.String() + "$")
	}
	if len(d.models)+len(d.pcdata)+len(d.empty) < 40 {
		t.Fatalf("parsed only %d elements", len(d.models)+len(d.pcdata)+len(d.empty))
	}
	return d
}

// validate checks doc against the DTD: the doctype, the root, and every
// element's children and text against its declaration.
func (d *dtd) validate(doc []byte, root, system string) error {
	type frame struct {
		name     string
		children strings.Builder
		text     bool
	}
	var stack []*frame
	dec := xml.NewDecoder(bytes.NewReader(doc))
	doctype, seenRoot := false, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tk := tok.(type) {
		case xml.Directive:
			want := fmt.Sprintf("DOCTYPE %s SYSTEM %q", root, system)
			if strings.TrimSpace(string(tk)) != want {
				return fmt.Errorf("doctype %q, want %q", tk, want)
			}
			doctype = true
		case xml.StartElement:
			n := tk.Name.Local
			if len(tk.Attr) > 0 {
				return fmt.Errorf("<%s> has attributes; the DTD declares none", n)
			}
			if len(stack) == 0 {
				if seenRoot || n != root {
					return fmt.Errorf("root <%s>, want one <%s>", n, root)
				}
				seenRoot = true
			} else {
				stack[len(stack)-1].children.WriteString("<" + n + ">")
			}
			stack = append(stack, &frame{name: n})
		case xml.CharData:
			if len(stack) > 0 && len(bytes.TrimSpace(tk)) > 0 {
				stack[len(stack)-1].text = true
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			children := f.children.String()
			switch {
			case d.empty[f.name]:
				if children != "" || f.text {
					return fmt.Errorf("<%s> is EMPTY but has content", f.name)
				}
			case d.pcdata[f.name]:
				if children != "" {
					return fmt.Errorf("<%s> holds text only, has %s", f.name, children)
				}
			case d.models[f.name] != nil:
				if f.text {
					return fmt.Errorf("<%s> has text outside its children", f.name)
				}
				if !d.models[f.name].MatchString(children) {
					return fmt.Errorf("<%s> children %s do not match %s", f.name, children, d.models[f.name])
				}
			default:
				return fmt.Errorf("<%s> is not declared", f.name)
			}
		}
	}
	if !doctype || !seenRoot {
		return fmt.Errorf("doctype %v, root %v", doctype, seenRoot)
	}
	return nil
}

func TestDTDChecker(t *testing.T) {
	d := parseDTD(t, string(gdpduDTD))
	ok := `<?xml version="1.0"?><!DOCTYPE DataSet SYSTEM "gdpdu-01-09-2004.dtd"><DataSet><Version>1</Version>` +
		`<Media><Name>m</Name><Table><URL>a.csv</URL><VariableLength><VariableColumn><Name>x</Name><AlphaNumeric/></VariableColumn></VariableLength></Table></Media></DataSet>`
	if err := d.validate([]byte(ok), "DataSet", gdpduDTDName); err != nil {
		t.Fatalf("valid document refused: %v", err)
	}
	for name, bad := range map[string]string{
		"order":      strings.Replace(ok, "<URL>a.csv</URL>", "", 1),
		"undeclared": strings.Replace(ok, "<AlphaNumeric/>", "<Text/>", 1),
		"empty":      strings.Replace(ok, "<AlphaNumeric/>", "<AlphaNumeric>x</AlphaNumeric>", 1),
		"no column":  strings.Replace(ok, "<VariableColumn><Name>x</Name><AlphaNumeric/></VariableColumn>", "", 1),
		"two types":  strings.Replace(ok, "<AlphaNumeric/>", "<AlphaNumeric/><Numeric/>", 1),
		"attribute":  strings.Replace(ok, "<Version>", `<Version a="1">`, 1),
		"doctype":    strings.Replace(ok, "gdpdu-01-09-2004.dtd", "other.dtd", 1),
		"no media":   strings.Replace(ok, ok[strings.Index(ok, "<Media>"):strings.Index(ok, "</DataSet>")], "", 1),
	} {
		if err := d.validate([]byte(bad), "DataSet", gdpduDTDName); err == nil {
			t.Errorf("%s: invalid document accepted", name)
		}
	}
}

// gobdAll fetches every chunk of a GoBD export and returns the archive.
func gobdAll(t testing.TB, s *Service, year string) ([]byte, int) {
	t.Helper()
	ctx := expCtx()
	var file []byte
	cursor, chunks := "", 0
	for {
		c, err := s.GoBDExport(ctx, year, cursor)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunks, err)
		}
		if c.ContentType != "application/zip" || c.Filename != "gobd-export-"+year+".zip" {
			t.Fatalf("chunk %d: %q %q", chunks, c.ContentType, c.Filename)
		}
		file = append(file, c.Data...)
		chunks++
		if c.Next == "" {
			return file, chunks
		}
		cursor = c.Next
	}
}

// gobdArchive is an opened export: its files and the tables index.xml
// describes (URL → column names).
type gobdArchive struct {
	files  map[string][]byte
	tables map[string][]string
	index  string
}

func openGoBD(t testing.TB, b []byte) gobdArchive {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	a := gobdArchive{files: map[string][]byte{}, tables: map[string][]string{}}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		a.files[f.Name], err = io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
	a.index = string(a.files["index.xml"])
	if err := parseDTD(t, string(a.files[gdpduDTDName])).validate(a.files["index.xml"], "DataSet", gdpduDTDName); err != nil {
		t.Fatalf("index.xml is not valid against the DTD: %v\n%s", err, a.index)
	}
	var ds struct {
		Tables []struct {
			URL     string `xml:"URL"`
			Columns []struct {
				Name string `xml:"Name"`
			} `xml:"VariableLength>VariablePrimaryKey"`
			More []struct {
				Name string `xml:"Name"`
			} `xml:"VariableLength>VariableColumn"`
		} `xml:"Media>Table"`
	}
	if err := xml.Unmarshal(a.files["index.xml"], &ds); err != nil {
		t.Fatal(err)
	}
	for _, tb := range ds.Tables {
		var cols []string
		for _, c := range append(tb.Columns, tb.More...) {
			cols = append(cols, c.Name)
		}
		a.tables[tb.URL] = cols
	}
	return a
}

// table parses a CSV table of the archive, checking its first line names the
// columns index.xml describes and every record has that many fields.
func (a gobdArchive) table(t testing.TB, url string) [][]string {
	t.Helper()
	raw, ok := a.files[url]
	if !ok {
		t.Fatalf("%s missing from the archive", url)
	}
	if bytes.Count(raw, []byte("\r\n")) != bytes.Count(raw, []byte("\n")) {
		t.Fatalf("%s: records not delimited by CRLF", url)
	}
	r := csv.NewReader(bytes.NewReader(raw))
	r.Comma = ';'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if got, want := strings.Join(recs[0], ";"), strings.Join(a.tables[url], ";"); got != want {
		t.Fatalf("%s: header %s, index.xml %s", url, got, want)
	}
	return recs[1:]
}

func TestGoBDExport(t *testing.T) {
	l := &expLedger{n: 3000, gen: expGen}
	s, st := expService(l, nil)
	s.export.blob = 32 << 10
	s.export.page = 700
	signed := time.Date(2025, 4, 1, 2, 3, 4, 5000, time.UTC)
	s.SetChainVerifier(expVerifier{st: ChainStatus{OK: true, Events: 2900, HeadHash: "c0ffee"}, cps: []ledgerv1.Checkpoint{
		{JournalNumber: 1200, Hash: "beef", SignedAt: signed, Reason: "lock 2025-03 hard-locked", KeyID: "k1", PublicKey: "ab", Signature: "cd", SignatureOK: true},
		{JournalNumber: 2900, Hash: "c0ffee", SignedAt: signed.Add(time.Hour), Reason: "schedule", KeyID: "k0", Signature: "ef"},
		{JournalNumber: 2950, Hash: "later", SignedAt: signed.Add(2 * time.Hour), Reason: "schedule", KeyID: "k1", PublicKey: "ab", Signature: "01", SignatureOK: true},
	}})
	b, chunks := gobdAll(t, s, "2025")
	if chunks < 3 {
		t.Errorf("%d chunks of 32 KiB for a %d byte archive", chunks, len(b))
	}
	if n := st.pieces(); n != 0 {
		t.Errorf("%d pieces left after the last chunk", n)
	}
	a := openGoBD(t, b)
	for _, url := range []string{"journal.csv", "accounts.csv", "tax_codes.csv", "chain.csv", "checkpoints.csv"} {
		if _, ok := a.tables[url]; !ok {
			t.Errorf("index.xml does not describe %s", url)
		}
	}
	for _, want := range []string{"<UTF8/>", "<DecimalSymbol>,</DecimalSymbol>", "<DigitGroupingSymbol>.</DigitGroupingSymbol>",
		"<ColumnDelimiter>;</ColumnDelimiter>", "<RecordDelimiter>&#13;&#10;</RecordDelimiter>", "<Range><From>2</From></Range>",
		"<Numeric><Accuracy>2</Accuracy></Numeric>", "<Date><Format>DD.MM.YYYY</Format></Date>",
		"<From>01.01.2025</From><To>31.12.2025</To>", "<Name>Müller &amp; Söhne GmbH</Name>"} {
		if !strings.Contains(a.index, want) {
			t.Errorf("index.xml lacks %s", want)
		}
	}

	// The journal stops at the verified chain head.
	journal := a.table(t, "journal.csv")
	if len(journal) != 2900 {
		t.Fatalf("%d journal rows, want the 2900 the chain covers", len(journal))
	}
	g := expGen(1234)
	row := journal[1233]
	want := []string{"1234", g.ID, g.IntentID, g.BookingDate[8:10] + "." + g.BookingDate[5:7] + "." + g.BookingDate[:4], g.Period,
		"6815", "1800", strings.Replace(g.Amount, ".", ",", 1), "", g.Description, *g.ExternalReference, "", "api", g.CapturedAt.UTC().Format("2006-01-02T15:04:05Z07:00")}
	if strings.Join(row, "|") != strings.Join(want, "|") {
		t.Errorf("journal row\n got %q\nwant %q", row, want)
	}
	if accounts := a.table(t, "accounts.csv"); len(accounts) != 3 || accounts[1][1] != "Bürobedarf" {
		t.Errorf("accounts %v", accounts)
	}
	if codes := a.table(t, "tax_codes.csv"); len(codes) != 4 || codes[0][3] != "19,00" || codes[2][4] != "94" {
		t.Errorf("tax codes %v", codes)
	}
	chain := a.table(t, "chain.csv")
	if len(chain) != 1 || strings.Join(chain[0][1:], "|") != "ja|2900|c0ffee|||01.01.2025|31.12.2025|2900|1|2900" {
		t.Errorf("chain %v", chain)
	}
	// The checkpoints up to the verified head, as the ledger signed them.
	got := a.table(t, "checkpoints.csv")
	wantCps := [][]string{
		{"1200", "beef", "2025-04-01T02:03:04.000005Z", "lock 2025-03 hard-locked", expTenant, "k1", "ab", "cd", "ja"},
		{"2900", "c0ffee", "2025-04-01T03:03:04.000005Z", "schedule", expTenant, "k0", "", "ef", "nein"},
	}
	if diff := cmp.Diff(wantCps, got); diff != "" {
		t.Errorf("checkpoints.csv (-want +got):\n%s", diff)
	}
	if _, ok := a.files[gdpduDTDName]; !ok {
		t.Error("the DTD is not in the archive")
	}
}

func TestGoBDFiscalYearAndSmall(t *testing.T) {
	l := &expLedger{n: 400, gen: expGen}
	s, st := expService(l, nil)
	ten := expTenantData()
	ten.FiscalYearStartMonth = 7
	s.tenants = expTenants{ten}
	// Fiscal year 2026 runs from July 2025 to June 2026; one chunk.
	b, chunks := gobdAll(t, s, "2026")
	if chunks != 1 || st.pieces() != 0 {
		t.Errorf("small archive: %d chunks, %d stored pieces", chunks, st.pieces())
	}
	a := openGoBD(t, b)
	journal := a.table(t, "journal.csv")
	want := 0
	for n := int64(1); n <= 400; n++ {
		if expGen(n).BookingDate >= "2025-07-01" {
			want++
		}
	}
	if len(journal) != want || want == 0 {
		t.Errorf("%d journal rows, want %d", len(journal), want)
	}
	if !strings.Contains(a.index, "<From>01.07.2025</From><To>30.06.2026</To>") {
		t.Error("validity is not the fiscal year")
	}
}

func TestGoBDBadInput(t *testing.T) {
	s, _ := expService(&expLedger{n: 10, gen: expGen}, nil)
	ctx := expCtx()
	for _, c := range []struct{ year, cursor string }{
		{"", ""}, {"25", ""}, {"20x5", ""}, {"0999", ""}, {"2027", ""}, {"2025", "nonsense"}, {"2025", "7a1d1c52-8f7e-4d7c-9a43-2f1f7c1b0001:0"},
	} {
		_, err := s.GoBDExport(ctx, c.year, c.cursor)
		if e := errs.As(err); e == nil || e.Code != errs.InvalidInput || len(e.Details) == 0 {
			t.Errorf("year %q cursor %q: %v, want INVALID_INPUT with details", c.year, c.cursor, err)
		}
	}
	if _, err := s.GoBDExport(ctx, "2025", "7a1d1c52-8f7e-4d7c-9a43-2f1f7c1b0001:3"); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown export: %v", err)
	}
	s.SetChainVerifier(nil)
	if _, err := s.GoBDExport(ctx, "2025", ""); err == nil || errs.CodeOf(err) != errs.Internal {
		t.Errorf("without a verifier: %v", err)
	}
}

// BenchmarkGoBDExport builds the archive of 200,000 generated events into
// the in-memory store: the work of the first request, which must finish
// within the gateway's request timeout.
func BenchmarkGoBDExport(b *testing.B) {
	const events = 200_000
	for b.Loop() {
		s, st := expService(&expLedger{n: events, gen: expGen}, nil)
		runtime.GC()
		done := make(chan struct{})
		var peak atomic.Uint64
		go func() {
			var ms runtime.MemStats
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
				}
			}
		}()
		start := time.Now()
		c, err := s.GoBDExport(expCtx(), "2025", "")
		elapsed := time.Since(start)
		close(done)
		if err != nil {
			b.Fatal(err)
		}
		size := len(c.Data) + st.size()
		b.ReportMetric(events/elapsed.Seconds(), "rows/s")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(size)/(1<<20), "zip-MiB")
	}
}
