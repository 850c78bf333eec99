package bankd_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/services/bank"
	"github.com/ledgerplatform/ledger/services/bank/postgres"
)

// TestImportFileCrashAndRetry: a file import that dies after writing some
// statements (the process killed, the parser failing late) leaves nothing;
// the retry imports everything once, and the file again imports nothing.
func TestImportFileCrashAndRetry(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	tenant := uuid.NewString()
	acc := newAccount(t, h, claims(tenant), "DE89370400440532013000", "1800")
	store := postgres.New(h.Pool)
	ctx := context.Background()
	d := decimal.RequireFromString
	st := func(id string, amounts ...string) bank.ParsedStatement {
		s := bank.ParsedStatement{Statement: bank.Statement{ID: id, Kind: "mt940"}}
		for i, a := range amounts {
			s.Entries = append(s.Entries, bank.Entry{BookingDate: "2025-03-03", Amount: d(a), Currency: "EUR", BankReference: id + "-" + string(rune('a'+i))})
			s.End.Sum = s.End.Sum.Add(d(a))
		}
		s.End.Entries = len(amounts)
		return s
	}
	file := []bank.ParsedStatement{st("S1", "10", "-2.5"), st("S2", "7"), st("S3", "-1")}
	sha := strings.Repeat("ef", 32)
	meta := func() bank.ImportMeta {
		return bank.ImportMeta{ID: uuid.NewString(), Source: bank.SourceMT940, FileSHA256: sha}
	}
	// add writes a statement an entry at a time, as a long one is written.
	add := func(w bank.StatementWriter, s bank.ParsedStatement) error {
		if err := w.Begin(s.Statement); err != nil {
			return err
		}
		for _, e := range s.Entries {
			if err := w.Write([]bank.Entry{e}); err != nil {
				return err
			}
		}
		_, err := w.End(s.End)
		return err
	}
	crash := errors.New("killed")
	_, err := store.ImportFile(ctx, tenant, acc, meta(), func(w bank.StatementWriter) (bank.FileParse, error) {
		for _, s := range file[:2] {
			if err := add(w, s); err != nil {
				return bank.FileParse{}, err
			}
		}
		return bank.FileParse{}, crash
	})
	if !errors.Is(err, crash) {
		t.Fatalf("err = %v", err)
	}
	counts := func() (tx, stmts, imports int) {
		t.Helper()
		for _, q := range []struct {
			sql string
			n   *int
		}{{"bank.transactions", &tx}, {"bank.statements", &stmts}, {"bank.imports", &imports}} {
			if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM `+q.sql+` WHERE tenant_id = $1`, tenant).Scan(q.n); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if tx, stmts, imports := counts(); tx+stmts+imports != 0 {
		t.Fatalf("after the crash: %d transactions, %d statements, %d imports", tx, stmts, imports)
	}

	all := func(w bank.StatementWriter) (bank.FileParse, error) {
		for _, s := range file {
			if err := add(w, s); err != nil {
				return bank.FileParse{}, err
			}
		}
		return bank.FileParse{}, nil
	}
	r, err := store.ImportFile(ctx, tenant, acc, meta(), all)
	if err != nil || r.Imported != 4 || r.SkippedDuplicates != 0 || r.TotalRows != 4 || len(r.Statements) != 3 || r.DuplicateFile {
		t.Fatalf("retry: %+v, %v", r, err)
	}
	again, err := store.ImportFile(ctx, tenant, acc, meta(), all)
	if err != nil || again.Imported != 0 || again.SkippedDuplicates != 4 || !again.DuplicateFile {
		t.Fatalf("again: %+v, %v", again, err)
	}
	if tx, stmts, imports := counts(); tx != 4 || stmts != 3 || imports != 1 {
		t.Fatalf("stored %d transactions, %d statements, %d imports", tx, stmts, imports)
	}
	job, err := store.ImportJob(ctx, tenant, r.ImportID)
	if err != nil || job.State != "done" || job.RowsDone != 4 || job.Imported != 4 || job.Source == nil || *job.Source != "mt940" {
		t.Fatalf("job %+v, %v", job, err)
	}
	if id, err := store.FileImport(ctx, tenant, acc, sha); err != nil || id != r.ImportID {
		t.Fatalf("file import %q, %v", id, err)
	}
}
