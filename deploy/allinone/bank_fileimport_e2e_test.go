package allinone_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
)

// statementFile is what importing one statement file must do. The figures
// are read off the files by hand (see the comments of the parsers' tests,
// which read them the same way).
type statementFile struct {
	path  string
	iban  string // the statements' IBAN; "" when the file names none
	count int
	sum   string
	// per statement: entries, and closing/expected when the balance check
	// fails
	stmts    []int
	mismatch map[int][2]string // statement index -> {expected_closing, closing_balance}
	rowErrs  int
}

const defaultIBAN = "DE02120300000000202051"

var statementFiles = []statementFile{
	// One Rpt, no balances, one Ntry of 200000 SEK DBIT.
	{path: "camt/testdata/camt052.v8.xml", count: 1, sum: "-200000", stmts: []int{1}},
	// OPBD 1.01 + 8.85 = 9.86, but CLBD 4.04.
	{path: "camt/testdata/camt053.v2.all-balance-types.xml", count: 1, sum: "8.85", stmts: []int{1},
		mismatch: map[int][2]string{0: {"9.86", "4.04"}}},
	// OPBD 18.15 + 8.85 = 27.00, but CLBD 27.00 DBIT.
	{path: "camt/testdata/camt053.v2.minimal.xml", iban: "NL26VAYB8060476890", count: 1, sum: "8.85", stmts: []int{1},
		mismatch: map[int][2]string{0: {"27.00", "-27.00"}}},
	// 18.15 + 8.85 = 27.00 and 27.00 - 7.00 = 20.00: both balanced.
	{path: "camt/testdata/camt053.v2.multi.statement.xml", iban: "NL26VAYB8060476890", count: 2, sum: "1.85", stmts: []int{1, 1}},
	{path: "camt/testdata/camt053.v2.with-party-ids.xml", iban: "NL26VAYB8060476890", count: 1, sum: "8.85", stmts: []int{1},
		mismatch: map[int][2]string{0: {"27.00", "-27.00"}}},
	{path: "camt/testdata/camt053.v8.xml", count: 1, sum: "8.85", stmts: []int{1},
		mismatch: map[int][2]string{0: {"27.00", "-27.00"}}},
	// One Ntry 200000 SEK DBIT; its CHF details do not explain it.
	{path: "camt/testdata/camt054.v8.xml", iban: "CH2801234000123456789", count: 1, sum: "-200000", stmts: []int{1}},

	// A snippet: one :61: of 30,00 C, no :25:.
	{path: "mt940/testdata/sparkassen.sta", count: 1, sum: "30.00", stmts: []int{1}},
	// Two debits 233,15 and 24,30; no :62F:.
	{path: "mt940/testdata/gv_codes.sta", iban: "DE20123456781020304050", count: 2, sum: "-257.45", stmts: []int{2}},
	// -150 + 2500 - 49.99 = 2300.01, then -100.
	{path: "mt940/testdata/volksbank.sta", iban: "DE06760905000001234567", count: 4, sum: "2200.01", stmts: []int{3, 1}},
	// +5000 + 12.34, then a message without entries.
	{path: "mt940/testdata/deutschebank.sta", iban: "DE89370400440532013000", count: 2, sum: "5012.34", stmts: []int{2, 0}},
	// 200 - 89.90 + 1000 = 1110.10; 1110.10 - 10 = 1100.10, but :62F: 1090,10.
	{path: "mt940/testdata/commerzbank.sta", iban: "DE82200400000001234567", count: 3, sum: "900.10", stmts: []int{2, 1},
		mismatch: map[int][2]string{1: {"1100.10", "1090.10"}}},

	// -89.90 + 1250.00 - 4.35 - 5.90; the pending row left out by layout.
	{path: "csvimport/testdata/sparkasse-csv-camt-cp1252.csv", iban: "DE89370400440532013000", count: 4, sum: "1149.85", stmts: []int{4}},
	// 3100.00 - 39.99 - 57.23, the IBAN from the preamble.
	{path: "csvimport/testdata/dkb-preamble-utf8-bom.csv", iban: "DE42100110012620000001", count: 3, sum: "3002.78", stmts: []int{3}},
	// 10.00 - 2.50 + 1.00; five rows refused.
	{path: "csvimport/testdata/bad-rows.csv", count: 3, sum: "8.50", stmts: []int{3}, rowErrs: 5},
}

func readStatement(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "services", "bank", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bankAccountFor gives the tenant a bank account with this IBAN.
func (p *platform) bankAccountFor(tenant, iban, ledgerAccount string) string {
	p.t.Helper()
	id := uuid.NewString()
	if _, err := p.owner.Exec(context.Background(), `INSERT INTO bank.accounts (id, tenant_id, name, iban, account_number)
		VALUES ($1, $2, 'Konto', $3, $4)`, id, tenant, iban, ledgerAccount); err != nil {
		p.t.Fatal(err)
	}
	return id
}

func (p *platform) bankTotals(account string) (int, decimal.Decimal) {
	p.t.Helper()
	var n int
	var sum decimal.Decimal
	if err := p.owner.QueryRow(context.Background(), `SELECT count(*), COALESCE(sum(amount), 0) FROM bank.transactions WHERE bank_account_id = $1`,
		account).Scan(&n, &sum); err != nil {
		p.t.Fatal(err)
	}
	return n, sum
}

func statementPart(name string, content []byte) part {
	return fileField(name, "application/octet-stream", content)
}

// TestBankFileImport: every statement file of the parsers' test data
// imports through the gateway with the right count and sum, each into a
// fresh tenant's bank account; the same file again imports nothing; the
// balance check names both figures; the import is a resource.
func TestBankFileImport(t *testing.T) {
	p, _, _ := setup(t, nil, "Kontoauszug GmbH")
	for _, f := range statementFiles {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			key, tenant := p.newTenant("Auszug " + filepath.Base(f.path))
			acc := p.bankAccountFor(tenant, cmpOr(f.iban, defaultIBAN), "1800")
			data := readStatement(t, f.path)
			path := "/v1/bank-accounts/" + acc + "/upload"
			if f.iban != "" {
				// The file names its account: the IBAN finds it.
				path = "/v1/bank-transactions/import-file"
			}
			r := p.upload(201, path, key, statementPart(filepath.Base(f.path), data))
			var res fileResult
			decodeJSON(t, r.Raw, &res)
			if res.Imported != f.count || res.SkippedDuplicates != 0 || res.TotalRows != f.count+f.rowErrs || len(res.Errors) != f.rowErrs ||
				res.BankAccountID != acc || res.DuplicateFile || len(res.Statements) != len(f.stmts) {
				t.Fatalf("first import: %s", r.Raw)
			}
			for i, st := range res.Statements {
				if st.Entries != f.stmts[i] || st.Imported != f.stmts[i] || st.ID == nil {
					t.Errorf("statement %d: %+v, want %d entries imported", i, st, f.stmts[i])
				}
				want, bad := f.mismatch[i]
				if st.BalanceMismatch != bad {
					t.Errorf("statement %d: balance_mismatch %v, want %v (%s)", i, st.BalanceMismatch, bad, r.Raw)
				}
				if bad && (st.ExpectedClosing == nil || st.Closing == nil || !st.ExpectedClosing.Equal(decimal.RequireFromString(want[0])) ||
					!st.Closing.Equal(decimal.RequireFromString(want[1]))) {
					t.Errorf("statement %d: expected %v closing %v, want %s and %s", i, st.ExpectedClosing, st.Closing, want[0], want[1])
				}
			}
			n, sum := p.bankTotals(acc)
			if n != f.count || !sum.Equal(decimal.RequireFromString(f.sum)) {
				t.Fatalf("stored %d transactions summing %s, want %d and %s", n, sum, f.count, f.sum)
			}

			job := p.must(200, "GET", "/v1/bank-imports/"+res.BatchID, key, nil)
			if job.str("state") != "done" || job.Body["imported"] != float64(f.count) || job.Body["rows_done"] != float64(f.count+f.rowErrs) ||
				job.str("bank_account_id") != acc {
				t.Errorf("import job: %s", job.Raw)
			}

			// The same file again, also under another name: nothing.
			again := p.upload(201, "/v1/bank-accounts/"+acc+"/upload", key, statementPart("nochmal.dat", data))
			var res2 fileResult
			decodeJSON(t, again.Raw, &res2)
			if res2.Imported != 0 || res2.SkippedDuplicates != f.count || !res2.DuplicateFile || res2.BatchID != res.BatchID {
				t.Fatalf("second import: %s", again.Raw)
			}
			if n2, _ := p.bankTotals(acc); n2 != f.count {
				t.Fatalf("after the second import %d transactions, want %d", n2, f.count)
			}
		})
	}
	eventuallyUploadsEmpty(t, p)
}

// TestBankFileImportRefusals: what is refused, and that nothing of it is
// written.
func TestBankFileImportRefusals(t *testing.T) {
	p, admin, tenant := setup(t, nil, "Abgelehnt GmbH")
	w, reader := p.apiKey(admin, "bank:read", "bank:write"), p.apiKey(admin, "bank:read")
	acc := p.bankAccountFor(tenant, defaultIBAN, "1800")
	up := "/v1/bank-accounts/" + acc + "/upload"
	send := func(path, token string, parts ...part) resp {
		body, ct := multipartBody(t, parts...)
		return p.call("POST", path, token, body, "Content-Type", ct)
	}
	for _, tt := range []struct {
		name, path string
		parts      []part
		status     int
		code, text string
	}{
		{"invalid camt", up, []part{statementPart("x.xml", readStatement(t, "camt/testdata/camt053.v2.invalid.xml"))}, 400, "INVALID_INPUT", "Stmt"},
		{"a PDF", up, []part{statementPart("x.pdf", []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"))}, 400, "INVALID_FILE_TYPE", ""},
		{"other XML", up, []part{statementPart("x.xml", []byte(`<?xml version="1.0"?><Invoice xmlns="urn:x"/>`))}, 400, "INVALID_FILE_TYPE", ""},
		{"CSV without a known layout", up, []part{statementPart("x.csv", readStatement(t, "csvimport/testdata/unknown-layout.csv"))}, 400, "INVALID_INPUT", "lacks a column"},
		{"empty file", up, []part{statementPart("x.sta", nil)}, 400, "EMPTY_FILE", ""},
		{"another account's statement", up, []part{statementPart("x.sta", readStatement(t, "mt940/testdata/commerzbank.sta"))}, 400, "INVALID_INPUT", "DE82200400000001234567"},
		{"no file", up, []part{textField("note", "x")}, 400, "INVALID_INPUT", ""},
		{"a file without a name", up, []part{{name: "file", content: []byte("x")}}, 400, "INVALID_INPUT", ""},
		{"unknown account", "/v1/bank-accounts/" + uuid.NewString() + "/upload", []part{statementPart("x.sta", readStatement(t, "mt940/testdata/sparkassen.sta"))}, 404, "NOT_FOUND", ""},
		{"IBAN without an account", "/v1/bank-transactions/import-file", []part{statementPart("x.sta", readStatement(t, "mt940/testdata/commerzbank.sta"))}, 404, "BANK_ACCOUNT_NOT_FOUND", "DE82200400000001234567"},
		{"no IBAN by IBAN", "/v1/bank-transactions/import-file", []part{statementPart("x.sta", readStatement(t, "mt940/testdata/sparkassen.sta"))}, 422, "UNPROCESSABLE", "IBAN"},
		{"read scope only", up, []part{statementPart("x.sta", readStatement(t, "mt940/testdata/sparkassen.sta"))}, 403, "FORBIDDEN", ""},
	} {
		token := w
		if tt.name == "read scope only" {
			token = reader
		}
		r := send(tt.path, token, tt.parts...)
		if r.Status != tt.status || r.code() != tt.code || !strings.Contains(string(r.Raw), tt.text) || r.str("request_id") == "" {
			t.Errorf("%s: %d %.400s, want %d %s naming %q", tt.name, r.Status, r.Raw, tt.status, tt.code, tt.text)
		}
	}
	p.expectError(415, "UNSUPPORTED_MEDIA_TYPE", "POST", up, w, map[string]any{"file": "x"})
	p.expectError(404, "NOT_FOUND", "GET", "/v1/bank-imports/"+uuid.NewString(), reader, nil)

	// Over 50 MB: refused while it streams.
	big := bytes.Repeat([]byte("01.01.2026;1,00;x\n"), (50<<20)/18+2)
	r := send(up, w, statementPart("gross.csv", big))
	if r.Status != 400 || r.code() != "FILE_TOO_LARGE" {
		t.Errorf("over 50 MB: %d %.300s", r.Status, r.Raw)
	}
	if n, _ := p.bankTotals(acc); n != 0 {
		t.Fatalf("refused files wrote %d transactions", n)
	}
	p.wantCount(0, "SELECT count(*) FROM bank.imports WHERE tenant_id = $1", tenant)
	// Nothing stays in the uploads bucket.
	eventuallyUploadsEmpty(t, p)
}

// fileResult is the answer of a statement file import.
type fileResult struct {
	BatchID           string `json:"batch_id"`
	BankAccountID     string `json:"bank_account_id"`
	Format            string `json:"format"`
	TotalRows         int    `json:"total_rows"`
	Imported          int    `json:"imported"`
	SkippedDuplicates int    `json:"skipped_duplicates"`
	DuplicateFile     bool   `json:"duplicate_file"`
	Errors            []struct {
		Row   int    `json:"row"`
		Field string `json:"field"`
		Issue string `json:"issue"`
	} `json:"errors"`
	Statements []struct {
		ID              *string          `json:"id"`
		Entries         int              `json:"entries"`
		Imported        int              `json:"imported"`
		BalanceMismatch bool             `json:"balance_mismatch"`
		ExpectedClosing *decimal.Decimal `json:"expected_closing"`
		Closing         *decimal.Decimal `json:"closing_balance"`
	} `json:"statements"`
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// eventuallyUploadsEmpty: every upload was deleted by the bank or, when
// refused, by the gateway.
func eventuallyUploadsEmpty(t *testing.T, p *platform) {
	t.Helper()
	js, err := jetstream.New(p.nc)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		obs, err := js.ObjectStore(context.Background(), gatewayv1.UploadsBucket)
		if err != nil {
			return err
		}
		list, err := obs.List(context.Background())
		if errors.Is(err, jetstream.ErrNoObjectsFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%d objects left in the uploads bucket, e.g. %s", len(list), list[0].Name)
	})
}

// happyMT940 is a one-entry MT940 statement of the fixture's bank account.
func happyMT940(f *fixture, tag string) []byte {
	return []byte(":20:HAPPY\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:60F:C250301EUR100,00\r\n" +
		":61:2503030303C50,00NTRFNONREF//HAPPY-" + tag + "-" + f.label + "\r\n:86:166?00GUTSCHRIFT?20Happy " + tag + "\r\n" +
		":62F:C250303EUR150,00\r\n-\r\n")
}

// bankImportID is the fixture's JSON import.
func (f *fixture) bankImportID() string {
	return f.p.must(200, "GET", "/v1/bank-transactions/"+f.bankTx, f.admin, nil).str("batch_id")
}

// TestBankFileImportJobs: a statement file import is a job of the import
// workers; a call that does not wait for it (BANK_IMPORT_WAIT=0s) answers
// 202 with the job, which is done or failed a little later with the result
// or the error the file gets.
func TestBankFileImportJobs(t *testing.T) {
	p, admin, tenant := setup(t, env{"BANK_IMPORT_WAIT": "0s"}, "Warteschlange GmbH")
	w := p.apiKey(admin, "bank:read", "bank:write")
	acc := p.bankAccountFor(tenant, "DE82200400000001234567", "1800")

	poll := func(id string) resp {
		t.Helper()
		var last resp
		eventually(t, 20*time.Second, func() error {
			last = p.must(200, "GET", "/v1/bank-imports/"+id, w, nil)
			if s := last.str("state"); s != "done" && s != "failed" {
				return fmt.Errorf("job %s", s)
			}
			return nil
		})
		return last
	}
	queued := p.upload(202, "/v1/bank-transactions/import-file", w, statementPart("commerzbank.sta", readStatement(t, "mt940/testdata/commerzbank.sta")))
	if s := queued.str("state"); s != "queued" && s != "running" && s != "done" || queued.str("id") == "" {
		t.Fatalf("202: %s", queued.Raw)
	}
	done := poll(queued.str("id"))
	var job struct {
		State         string     `json:"state"`
		BankAccountID string     `json:"bank_account_id"`
		Source        string     `json:"source"`
		Imported      int        `json:"imported"`
		Result        fileResult `json:"result"`
	}
	decodeJSON(t, done.Raw, &job)
	if job.State != "done" || job.BankAccountID != acc || job.Source != "mt940" || job.Imported != 3 || job.Result.Imported != 3 ||
		len(job.Result.Statements) != 2 || !job.Result.Statements[1].BalanceMismatch {
		t.Fatalf("done job: %s", done.Raw)
	}
	if n, sum := p.bankTotals(acc); n != 3 || !sum.Equal(decimal.RequireFromString("900.10")) {
		t.Fatalf("stored %d transactions summing %s", n, sum)
	}
	// The import the job wrote is a resource of its own.
	if imp := p.must(200, "GET", "/v1/bank-imports/"+job.Result.BatchID, w, nil); imp.str("state") != "done" || imp.Body["imported"] != float64(3) {
		t.Fatalf("import: %s", imp.Raw)
	}

	// A refused file: the job fails with the error the upload would get.
	bad := p.upload(202, "/v1/bank-accounts/"+acc+"/upload", w, statementPart("x.xml", readStatement(t, "camt/testdata/camt053.v2.invalid.xml")))
	failed := poll(bad.str("id"))
	if failed.str("state") != "failed" || failed.str("error", "code") != "INVALID_INPUT" || failed.Body["result"] != nil {
		t.Fatalf("failed job: %s", failed.Raw)
	}
	if n, _ := p.bankTotals(acc); n != 3 {
		t.Fatalf("after the refused file %d transactions", n)
	}
	eventuallyUploadsEmpty(t, p)
}
