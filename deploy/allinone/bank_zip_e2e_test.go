package allinone_test

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// zipOf packs files (name -> content) as a ZIP archive, in the order given.
func zipOf(t *testing.T, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		if strings.HasSuffix(f[0], "/") {
			if _, err := zw.Create(f[0]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBankZIPImport: a ZIP archive of camt files, as Sparkasse offers its
// statements for download, imports every statement into the bank account
// its IBAN names, once; an archive holding anything but camt files, none,
// or broken bytes is refused and changes nothing.
func TestBankZIPImport(t *testing.T) {
	p, _, _ := setup(t, nil, "Zip Archiv GmbH")
	key, tenant := p.newTenant("Zip Archiv Kunde")
	giro := p.bankAccountFor(tenant, "DE67500502011234567890", "1800")
	tages := p.bankAccountFor(tenant, "DE61760501010012345678", "1810")
	sparkasse := string(readStatement(t, "camt/testdata/camt053.v2.sparkasse-batch-return.xml"))
	intraday := string(readStatement(t, "camt/testdata/camt052.v8.intraday-pending.xml"))
	archive := zipOf(t, [2]string{"2024-11/", ""}, [2]string{"2024-11/2024-11-05_camt052.xml", intraday},
		[2]string{"2024-11/2024-11-04_camt053.xml", sparkasse}, [2]string{"__MACOSX/2024-11/._2024-11-04_camt053.xml", "\x00\x05\x16\x07"})

	r := p.upload(201, "/v1/bank-transactions/import-file", key, fileField("Umsaetze_camt.zip", "application/zip", archive))
	var res fileResult
	decodeJSON(t, r.Raw, &res)
	// 8 entries of the camt.053 (-490.89) and 2 booked of the camt.052
	// (280.01), the archive's entries read in name order.
	if res.Imported != 10 || res.Format != "camt" || len(res.Statements) != 2 || res.DuplicateFile {
		t.Fatalf("import: %s", r.Raw)
	}
	for _, c := range []struct {
		acc   string
		count int
		sum   string
	}{{giro, 8, "-490.89"}, {tages, 2, "280.01"}} {
		if n, sum := p.bankTotals(c.acc); n != c.count || !sum.Equal(decimal.RequireFromString(c.sum)) {
			t.Errorf("account %s: %d transactions summing %s, want %d and %s", c.acc, n, sum, c.count, c.sum)
		}
	}
	again := p.upload(201, "/v1/bank-transactions/import-file", key, fileField("nochmal.zip", "application/zip", archive))
	decodeJSON(t, again.Raw, &res)
	if res.Imported != 0 || !res.DuplicateFile {
		t.Fatalf("the archive again: %s", again.Raw)
	}

	for _, c := range []struct {
		name, code, says string
		data             []byte
	}{
		{"a PDF among the statements", "INVALID_FILE_TYPE", "rechnung.pdf",
			zipOf(t, [2]string{"a.xml", sparkasse}, [2]string{"rechnung.pdf", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"})},
		{"no camt file", "INVALID_INPUT", "no camt file", zipOf(t, [2]string{"leer/", ""})},
		{"broken archive", "INVALID_INPUT", "cannot be read", append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0x42}, 200)...)},
	} {
		body, ct := multipartBody(t, fileField("x.zip", "application/zip", c.data))
		r := p.call("POST", "/v1/bank-accounts/"+giro+"/upload", key, body, "Content-Type", ct)
		if r.Status != 400 || r.code() != c.code || !strings.Contains(string(r.Raw), c.says) {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Raw)
		}
	}
	if n, _ := p.bankTotals(giro); n != 8 {
		t.Errorf("refused archives changed the account: %d transactions", n)
	}
}
