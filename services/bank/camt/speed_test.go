package camt

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// TestErrorPlaces pins the whole place an error names, which the parser
// builds only when it reports one.
func TestErrorPlaces(t *testing.T) {
	stmt := func(s string) string {
		return doc("camt.053.001.02", "BkToCstmrStmt", `<Stmt><Id>S-1</Id>`+s+`</Stmt>`)
	}
	ok := `<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`
	tx := func(amt string) string {
		return `<TxDtls><Amt Ccy="EUR">` + amt + `</Amt><CdtDbtInd>CRDT</CdtDbtInd></TxDtls>`
	}
	tests := []struct{ name, in, want string }{
		{"entry", stmt(ok + `<Ntry><Amt Ccy="EUR">1.00</Amt><BookgDt><Dt>2024-03-01</Dt></BookgDt></Ntry>`),
			`camt: statement "S-1" entry 2: CdtDbtInd missing`},
		{"booking date", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-02-30</Dt></BookgDt></Ntry>`),
			`camt: statement "S-1" entry 1 booking date: "2024-02-30" is not a date`},
		{"date after a valid one", stmt(ok + `<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt><ValDt><Dt>2024-03-32</Dt></ValDt></Ntry>`),
			`camt: statement "S-1" entry 2 value date: "2024-03-32" is not a date`},
		{"value date", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt><ValDt><Dt>x</Dt></ValDt></Ntry>`),
			`camt: statement "S-1" entry 1 value date: "x" is not a date`},
		{"entry charges", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt><Chrgs><TtlChrgsAndTaxAmt Ccy="EUR">1,5</TtlChrgsAndTaxAmt></Chrgs></Ntry>`),
			`camt: statement "S-1" entry 1 charges: amount "1,5" is not a decimal number`},
		{"detail", stmt(`<Ntry><Amt Ccy="EUR">3.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2024-03-01</Dt></BookgDt><NtryDtls>` + tx("1.00") + tx("2,00") + `</NtryDtls></Ntry>`),
			`camt: statement "S-1" entry 1 detail 2: amount "2,00" is not a decimal number`},
		{"charges record", stmt(`<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Chrgs><Rcrd><Amt Ccy="EUR">x</Amt></Rcrd></Chrgs></Ntry>`),
			`camt: charges: amount "x" is not a decimal number`},
		{"balance", stmt(balXML("CLBD", "1.00", "CRDT", "01.03.2024")),
			`camt: balance CLBD: "01.03.2024" is not a date`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Parse(strings.NewReader(tt.in), &recorder{})
			if !errs.Is(err, errs.InvalidInput) {
				t.Fatalf("err = %v, want INVALID_INPUT", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestNextRun holds the guard's run count to the byte by byte one.
func TestNextRun(t *testing.T) {
	slow := func(run int, b []byte) int {
		for _, c := range b {
			if c == '<' || c == '>' {
				run = 0
			} else if run++; run > maxRun {
				return run
			}
		}
		return run
	}
	over := func(n int) bool { return n > maxRun }
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		n := rng.IntN(70 << 10)
		if i%100 == 0 {
			n = maxRun + rng.IntN(3)
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = 'x'
		}
		for k := rng.IntN(4); k > 0 && n > 0; k-- {
			b[rng.IntN(n)] = "<>"[rng.IntN(2)]
		}
		run := rng.IntN(maxRun + 2)
		if i%3 == 0 {
			run = maxRun - rng.IntN(n+1)
		}
		want, got := slow(run, b), nextRun(run, b)
		// Past maxRun only the excess counts, not by how much.
		if over(want) != over(got) || !over(want) && want != got {
			t.Fatalf("run %d, %d bytes: nextRun = %d, byte by byte %d", run, n, got, want)
		}
	}
}

// TestTextOf: short texts come out as before, recurring ones shared.
func TestTextOf(t *testing.T) {
	p := &parser{}
	var got []string
	for _, in := range []string{"  DE02 1203 ", "a\n b", "a  b", "x", "", "x", strings.Repeat("ü", 600)} {
		p.text = append(p.text[:0], in...)
		got = append(got, p.textOf())
	}
	want := []string{"DE02 1203", "a b", "a b", "x", "", "x", strings.Repeat("ü", 600)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// Cut inside a rune, as maxTextBytes may: the text ends before it.
	p.text = append(p.text[:0], "ab\xc3"...)
	if got := p.textOf(); got != "ab" {
		t.Errorf("textOf = %q, want \"ab\"", got)
	}
}

// TestScannerSlowPaths: tags longer than the read buffer take the path
// that copies them, and line numbers count every line end, in text, in
// tags and in end tags.
func TestScannerSlowPaths(t *testing.T) {
	long := strings.Repeat("n", 70<<10)
	for name, doc := range map[string]string{
		"long names":  "<" + long + " a='1'>x</" + long + "\n>",
		"long values": "<a b='" + long + "' c=\">\">" + long + "</a>",
		"long end":    "<a><b>" + long + "</b></a  \n  >",
	} {
		want, werr := tokens(rawDecoder([]byte(doc)))
		got, gerr := tokens(newScanner(strings.NewReader(doc)))
		if werr != nil || gerr != nil {
			t.Fatalf("%s: encoding/xml error %v, scanner error %v", name, werr, gerr)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: tokens differ (-encoding/xml +scanner)\n%s", name, d)
		}
	}
	for _, tt := range []struct{ doc, want string }{
		{"<a\n>\n<b\nc='\n'\n/>\n</a\n>\n<\x01>", `line 9: invalid XML name: "\x01"`},
		{"<a>\n\n\x01\n</a>", "line 4: illegal character code U+1"},
		{"<a>\n\xff\n</a>", "line 3: invalid UTF-8"},
		{"<a b='\n\x02'>\n</a>", "line 3: illegal character code U+2"}, // the tag's lines count first
		{"<a>\n</a\n\nx>", "line 4: invalid end tag"},
		{"<a>\n</" + long + "\n", "line 2: unexpected EOF"},
		{"<a>\n</" + long + "\n\n>\n<?", "line 5: unexpected EOF"},
	} {
		_, err := tokens(newScanner(strings.NewReader(tt.doc)))
		if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("%.20q: err = %v, want %q", tt.doc, err, tt.want)
		}
	}
}
