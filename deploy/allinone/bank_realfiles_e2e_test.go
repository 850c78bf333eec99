package allinone_test

import (
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"
)

// realStatementFiles are the files written after real banks' layouts
// for the parsers' real-file tests (each package's realfiles_test.go and
// testdata/README.md), with the counts and sums worked out there by hand.
// Every statement in them balances, where it carries both balances.
var realStatementFiles = []statementFile{
	// PRCD 5000.00; +1190.00, batch -1740.49 as three, -59.90, -123.00, -7.50, +250.00.
	{path: "camt/testdata/camt053.v2.sparkasse-batch-return.xml", iban: "DE67500502011234567890", count: 8, sum: "-490.89", stmts: []int{8}},
	// Booked +300.00 and -19.99; three pending or INFO entries left out.
	{path: "camt/testdata/camt052.v8.intraday-pending.xml", iban: "DE61760501010012345678", count: 2, sum: "280.01", stmts: []int{2}},
	// -6236.79 as three, +124.30 as four, -1005.00 as one.
	{path: "camt/testdata/camt054.v4.gls-batches.xml", iban: "DE37430609674000123400", count: 8, sum: "-7117.49", stmts: []int{8}},
	// The same day's statement: the three batches as booked, -6236.79 + 124.30 - 1005.00, and +1500.00.
	{path: "camt/testdata/camt053.v4.gls-batch-totals.xml", iban: "DE37430609674000123400", count: 4, sum: "-5617.49", stmts: []int{4}},
	// 2500.00 - 42.37; -915.40 + 0.52 + 42.37.
	{path: "camt/testdata/camt053.v13.two-days-fx-chargeback.xml", iban: "DE34200505501234567890", count: 5, sum: "1585.12", stmts: []int{2, 3}},
	// 50.00 + 25.00 - 1234.56 + 0.01.
	{path: "camt/testdata/camt053.v6.prefixed-latin1.xml", iban: "DE11300107000987654321", count: 4, sum: "-1159.55", stmts: []int{4}},
	// +3570.00, batch -800.00 - 200.00.
	{path: "camt/testdata/camt053.v4.commerzbank-strd-invoices.xml", iban: "DE89370400440532013000", count: 3, sum: "2570.00", stmts: []int{3}},
	// +49.90; +1249.00, in two notifications.
	{path: "camt/testdata/camt054.v10.instant-credits.xml", iban: "DE46700202700015123456", count: 2, sum: "1298.90", stmts: []int{1, 1}},

	// -59.90 + 1190.00; -12.50 + 59.90 (RD).
	{path: "mt940/testdata/sparkasse-swift-blocks-crlf.sta", iban: "DE67500502011234567890", count: 4, sum: "1177.50", stmts: []int{2, 2}},
	// -49.99 + 2500.00; -2500.00 (RC) - 3.50.
	{path: "mt940/testdata/postbank-intermediate-reversal.sta", iban: "DE02440100460123456789", count: 4, sum: "-53.49", stmts: []int{2, 2}},
	// 1500.00 - 85.00 - 1200.00.
	{path: "mt940/testdata/hypovereinsbank-unstructured-86.sta", iban: "DE46700202700015123456", count: 3, sum: "215.00", stmts: []int{3}},
	// 14875.00 - 4321.09 - 25.00.
	{path: "mt940/testdata/volksbank-long-svwz-blz.sta", iban: "DE61760501010012345678", count: 3, sum: "10528.91", stmts: []int{3}},
	// +250.00 - 45.50, Dutch /TAG/ details.
	{path: "mt940/testdata/triodos-nl-slash-tags.sta", iban: "NL91ABNA0417164300", count: 2, sum: "204.50", stmts: []int{2}},
	// -99.00, padded subfields.
	{path: "mt940/testdata/deutschebank-padded-subfields.sta", iban: "DE43100700000123456700", count: 1, sum: "-99.00", stmts: []int{1}},
	// ABN AMRO: a plain header before the first field; 3236.28 - 9.00 + 120.50.
	{path: "mt940/testdata/abnamro-plain-header.sta", iban: "NL91ABNA0417164300", count: 2, sum: "111.50", stmts: []int{2}},

	// 500.00 - 23.47 - (100.00 + 1.00 fee) - 50.00 + 23.47 - 2.40 - 2.40 (two equal
	// payments, both imported, neither twice); PENDING and REVERTED left out.
	{path: "csvimport/testdata/revolut-personal-fee-state.csv", count: 7, sum: "344.20", stmts: []int{7}},
	// -12.50 + 1499.00 - 67.89; the pending row left out.
	{path: "csvimport/testdata/sparkasse-csv-mt940-cp1252.csv", count: 3, sum: "1418.61", stmts: []int{3}},
	// -34.99 + 2000.00 - 1187.00; the 0,00 row refused.
	{path: "csvimport/testdata/consorsbank-cp1252.csv", count: 3, sum: "778.01", stmts: []int{3}, rowErrs: 1},
	// S 89.00, H 150.00, S 4.95; the Anfangssaldo and Endsaldo rows left out.
	{path: "csvimport/testdata/volksbank-old-unnamed-sh-saldo-rows.csv", count: 3, sum: "56.05", stmts: []int{3}},
	// -1200.00 - 12.99 + 5000.00 - 0.41.
	{path: "csvimport/testdata/wise-statement-dd-mm-yyyy.csv", count: 4, sum: "3786.60", stmts: []int{4}},
	// -120.00 + 2380.00 - 9.90.
	{path: "csvimport/testdata/hypovereinsbank-empfaenger12-cp1252.csv", count: 3, sum: "2250.10", stmts: []int{3}},
	// -45.99 - 189.00 + 150.00 - 17.98.
	{path: "csvimport/testdata/dkb-visa-wertstellung-cp1252.csv", count: 4, sum: "-102.97", stmts: []int{4}},
	// -12.50 + 2500.00 - 3.99, the file's own IBAN.
	{path: "csvimport/testdata/bunq-counterparty-iban.csv", iban: "NL91ABNA0417164300", count: 3, sum: "2483.51", stmts: []int{3}},
	// -49.95 + 1785.00 - 9.90, the file's own IBAN.
	{path: "csvimport/testdata/commerzbank-2024-auftraggeberkonto.csv", iban: "DE89370400440532013000", count: 3, sum: "1725.15", stmts: []int{3}},
	// -156.30 + 85.00 - 43.58, the Girokonto's section only.
	{path: "csvimport/testdata/comdirect-all-accounts-sections-cp1252.csv", count: 3, sum: "-114.88", stmts: []int{3}},
}

// TestBankRealFilesImport: each real-layout file imports through the
// gateway into a fresh tenant's bank account with the hand-worked count
// and sum, balanced statements, and imports nothing the second time.
func TestBankRealFilesImport(t *testing.T) {
	p, _, _ := setup(t, nil, "Echte Auszuege GmbH")
	for _, f := range realStatementFiles {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			key, tenant := p.newTenant("Real " + filepath.Base(f.path))
			acc := p.bankAccountFor(tenant, cmpOr(f.iban, defaultIBAN), "1800")
			data := readStatement(t, f.path)
			path := "/v1/bank-accounts/" + acc + "/upload"
			if f.iban != "" {
				path = "/v1/bank-transactions/import-file" // the file's IBAN finds the account
			}
			r := p.upload(201, path, key, statementPart(filepath.Base(f.path), data))
			var res fileResult
			decodeJSON(t, r.Raw, &res)
			if res.Imported != f.count || res.SkippedDuplicates != 0 || res.TotalRows != f.count+f.rowErrs || len(res.Errors) != f.rowErrs ||
				res.BankAccountID != acc || res.DuplicateFile || len(res.Statements) != len(f.stmts) {
				t.Fatalf("first import: %s", r.Raw)
			}
			for i, st := range res.Statements {
				if st.Entries != f.stmts[i] || st.Imported != f.stmts[i] || st.BalanceMismatch {
					t.Errorf("statement %d: %+v, want %d entries imported and balanced", i, st, f.stmts[i])
				}
			}
			n, sum := p.bankTotals(acc)
			if n != f.count || !sum.Equal(decimal.RequireFromString(f.sum)) {
				t.Fatalf("stored %d transactions summing %s, want %d and %s", n, sum, f.count, f.sum)
			}

			again := p.upload(201, "/v1/bank-accounts/"+acc+"/upload", key, statementPart("wieder.dat", data))
			var res2 fileResult
			decodeJSON(t, again.Raw, &res2)
			if res2.Imported != 0 || res2.SkippedDuplicates != f.count || !res2.DuplicateFile {
				t.Fatalf("second import: %s", again.Raw)
			}
			if n2, _ := p.bankTotals(acc); n2 != f.count {
				t.Fatalf("after the second import %d transactions, want %d", n2, f.count)
			}
		})
	}
	eventuallyUploadsEmpty(t, p)
}

// TestBankBatchBookedAndDetailed imports a day's camt.053, which books
// three batches as one entry each, and the camt.054 that details them, in
// both orders: whichever form of a batch comes first stays, the other
// counts as a duplicate, so the account holds each batch once and its sum
// is the statement's movement (-5,617.49), not the batches twice.
func TestBankBatchBookedAndDetailed(t *testing.T) {
	p, _, _ := setup(t, nil, "Gruenwerk Kooperative eG")
	statement := readStatement(t, "camt/testdata/camt053.v4.gls-batch-totals.xml")
	notification := readStatement(t, "camt/testdata/camt054.v4.gls-batches.xml")
	type step struct {
		name                      string
		data                      []byte
		imported, skipped, stored int
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		// The statement's four entries; then the notification's 3 + 4
		// parts of booked batches and its third batch, which does not add
		// up and stays one entry under the booking's own reference.
		{"statement first", []step{{"053", statement, 4, 0, 4}, {"054", notification, 0, 8, 4}}},
		// The notification's eight; then of the statement only the single
		// credit: its batches are in as their parts.
		{"notification first", []step{{"054", notification, 8, 0, 8}, {"053", statement, 1, 3, 9}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			key, tenant := p.newTenant("Batch " + c.name)
			acc := p.bankAccountFor(tenant, "DE37430609674000123400", "1800")
			for _, s := range c.steps {
				r := p.upload(201, "/v1/bank-accounts/"+acc+"/upload", key, statementPart(s.name+".xml", s.data))
				var res fileResult
				decodeJSON(t, r.Raw, &res)
				if res.Imported != s.imported || res.SkippedDuplicates != s.skipped {
					t.Fatalf("%s: imported %d, skipped %d; want %d and %d: %s", s.name, res.Imported, res.SkippedDuplicates, s.imported, s.skipped, r.Raw)
				}
				if n, _ := p.bankTotals(acc); n != s.stored {
					t.Fatalf("after %s: %d transactions, want %d", s.name, n, s.stored)
				}
			}
			if _, sum := p.bankTotals(acc); !sum.Equal(decimal.RequireFromString("-5617.49")) {
				t.Errorf("the account sums to %s, want -5617.49", sum)
			}
		})
	}
}
