package bank

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// Uploads reads the files the gateway put into its uploads bucket.
type Uploads interface {
	// Open streams one object; it verifies the object's digest at its end.
	Open(ctx context.Context, bucket, name string) (io.ReadCloser, error)
	// Delete removes an object once it was read.
	Delete(ctx context.Context, bucket, name string) error
}

// Parser reads one statement file format into a Sink (camt.Parse,
// mt940.Parse, csvimport.Parse). They live in subpackages that import
// this one, so the daemon hands them in.
type Parser func(r io.Reader, sink Sink) error

// Parsers are the statement parsers by format. The CSV parser reports
// the rows it leaves out to the sink's RowErrorReporter; CSVMissing names
// the missing columns of a file whose header row fits no layout (ok false
// for any other error).
type Parsers struct {
	CAMT, MT940, CSV Parser
	CSVMissing       func(error) (missing string, ok bool)
}

// FileImportStore is the part of Store that file imports need besides
// ImportStatements.
type FileImportStore interface {
	// ImportJob reads one import; an unknown id is NOT_FOUND.
	ImportJob(ctx context.Context, tenantID, id string) (bankv1.ImportJob, error)
	// FileImport is the id of the import that brought the file with this
	// SHA-256 into the bank account.
	FileImport(ctx context.Context, tenantID, accountID, sha string) (string, error)
}

// files is what the service needs to import statement files.
type files struct {
	uploads Uploads
	parsers Parsers
}

// WithFiles lets the service import statement files from uploads.
func (s *Service) WithFiles(u Uploads, p Parsers) *Service {
	s.files = files{uploads: u, parsers: p}
	return s
}

// File formats as the import result names them.
const (
	FormatCAMT  = "camt"
	FormatMT940 = "mt940"
	FormatCSV   = "csv"
)

// sniffSize is how much of a file its format is told from.
const sniffSize = 4096

var mt940Start = regexp.MustCompile(`^(\{1:|:\d\d[A-Z]?:)`)

// Sniff tells a statement file's format from its first bytes: XML holding
// a camt Document, MT940 (a SWIFT block or a field tag), else text as CSV.
// A file that is none of them (binary, other XML) is "".
func Sniff(head []byte) string {
	h := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	h = bytes.TrimLeft(h, " \t\r\n")
	switch {
	case len(h) == 0:
		return ""
	case h[0] == '<':
		if bytes.Contains(h, []byte("Document")) && bytes.Contains(h, []byte("camt.05")) ||
			bytes.Contains(h, []byte("BkToCstmr")) {
			return FormatCAMT
		}
		return ""
	case mt940Start.Match(h):
		return FormatMT940
	case bytes.IndexByte(h, 0) >= 0 || bytes.HasPrefix(h, []byte("%PDF")) || bytes.HasPrefix(h, []byte("PK\x03\x04")):
		return ""
	}
	// Text: the CSV parser decides whether a header row fits.
	return FormatCSV
}

// fileSink collects a file's statements and the CSV rows left out.
type fileSink struct {
	Collector
	rowErrs []bankv1.FileRowError
	refused map[int]bool
}

// RowErrorReporter is implemented by the sink a file import hands to the
// CSV parser; the daemon's adapter calls it for each row left out.
type RowErrorReporter interface {
	ReportRow(row int, field, issue string)
}

// ReportRow implements RowErrorReporter.
func (f *fileSink) ReportRow(row int, field, issue string) {
	if f.refused == nil {
		f.refused = map[int]bool{}
	}
	f.refused[row] = true
	f.rowErrs = append(f.rowErrs, bankv1.FileRowError{Row: row, Field: field, Issue: issue})
}

// ImportFile imports one statement file from the uploads bucket. With
// accountID (POST /v1/bank-accounts/{id}/upload) every statement naming an
// IBAN must be that account's; without (POST
// /v1/bank-transactions/import-file) each statement's IBAN names the
// tenant's bank account it goes to. The object is deleted once read,
// whatever the outcome: a refused file is sent again by the client.
//
// Each bank account's statements of the file import in one transaction,
// and the file's SHA-256 is recorded with them, so an import cut short
// leaves nothing of that account half-written and a retry imports nothing
// twice.
func (s *Service) ImportFile(ctx context.Context, tenantID, accountID string, in gatewayv1.UploadRequest) (bankv1.FileImportResult, error) {
	if s.files.uploads == nil {
		return bankv1.FileImportResult{}, errs.E(errs.Unavailable, "statement files cannot be imported here")
	}
	ref := in.Upload
	if ref.Bucket != gatewayv1.UploadsBucket || ref.Name == "" {
		return bankv1.FileImportResult{}, errs.Invalid("no uploaded file", errs.Field("file", "required"))
	}
	defer func() {
		// The caller may be gone; the object must go all the same.
		_ = s.files.uploads.Delete(context.WithoutCancel(ctx), ref.Bucket, ref.Name)
	}()
	if ref.Size > bankv1.MaxStatementFileBytes {
		return bankv1.FileImportResult{}, errs.E(errs.FileTooLarge, "statement files may have at most 50 MB")
	}
	if ref.Size == 0 {
		return bankv1.FileImportResult{}, errs.E(errs.EmptyFile, "the file is empty")
	}
	var route *Account
	if accountID != "" {
		if !ValidID(accountID) {
			return bankv1.FileImportResult{}, notFound(accountID)
		}
		acc, err := s.store.Account(ctx, tenantID, accountID)
		if err != nil {
			return bankv1.FileImportResult{}, err
		}
		route = &acc
	}

	rc, err := s.files.uploads.Open(ctx, ref.Bucket, ref.Name)
	if err != nil {
		return bankv1.FileImportResult{}, errs.Wrap("bank.ImportFile: open upload", err)
	}
	defer rc.Close()
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(rc, h), 64<<10)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return bankv1.FileImportResult{}, errs.Wrap("bank.ImportFile: read upload", err)
	}
	format := Sniff(head)
	var parse Parser
	source := ""
	switch format {
	case FormatCAMT:
		parse, source = s.files.parsers.CAMT, SourceCAMT
	case FormatMT940:
		parse, source = s.files.parsers.MT940, SourceMT940
	case FormatCSV:
		parse, source = s.files.parsers.CSV, SourceCSV
	default:
		return bankv1.FileImportResult{}, errs.E(errs.InvalidFileType, "the file is neither camt.052/053/054 XML, MT940 nor a CSV export of online banking")
	}
	sink := &fileSink{}
	if err := parse(br, sink); err != nil {
		return bankv1.FileImportResult{}, s.parseError(format, err)
	}
	// The parser may stop before the end (a CSV's trailer); the digest
	// covers the whole file, and reading to the end lets the bucket check
	// the object's own digest.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return bankv1.FileImportResult{}, errs.Wrap("bank.ImportFile: read upload", err)
	}
	sha := hex.EncodeToString(h.Sum(nil))
	if len(sink.Statements) == 0 {
		return bankv1.FileImportResult{}, errs.Invalid("the file holds no statement", errs.Field("file", "no statement"))
	}

	groups, order, err := s.assign(ctx, tenantID, route, sink.Statements)
	if err != nil {
		return bankv1.FileImportResult{}, err
	}
	out := bankv1.FileImportResult{Format: format, Errors: sink.rowErrs, Statements: []bankv1.StatementResult{}}
	if out.Errors == nil {
		out.Errors = []bankv1.FileRowError{}
	}
	rowErrs := make([]bankv1.RowError, len(sink.rowErrs))
	for i, e := range sink.rowErrs {
		rowErrs[i] = bankv1.RowError{Index: e.Row, Field: e.Field, Issue: e.Issue}
	}
	for i, accID := range order {
		meta := ImportMeta{ID: newID(), Source: source, FileSHA256: sha}
		if i == 0 {
			// Rows left out belong to the CSV file's one statement.
			meta.Refused, meta.Errors = len(sink.refused), rowErrs
		}
		stmts := groups[accID]
		r, err := s.store.ImportStatements(ctx, tenantID, accID, meta, stmts)
		if err != nil {
			return bankv1.FileImportResult{}, err
		}
		if r.DuplicateFile {
			// The answer names the import that brought the file.
			if r.ImportID, err = s.store.FileImport(ctx, tenantID, accID, sha); err != nil {
				return bankv1.FileImportResult{}, err
			}
		}
		if i == 0 {
			out.BatchID, out.BankAccountID = r.ImportID, accID
		}
		out.TotalRows += r.TotalRows
		out.Imported += r.Imported
		out.SkippedDuplicates += r.SkippedDuplicates
		out.DuplicateFile = out.DuplicateFile || r.DuplicateFile
		out.Statements = append(out.Statements, statementResults(stmts, r)...)
	}
	return out, nil
}

// parseError turns a parser's refusal into the answer: a CSV whose header
// fits no layout names the missing columns, a refused file keeps its
// code, anything else is a file that cannot be read.
func (s *Service) parseError(format string, err error) error {
	if format == FormatCSV && s.files.parsers.CSVMissing != nil {
		if missing, ok := s.files.parsers.CSVMissing(err); ok {
			return errs.Invalid("the CSV file lacks a column: "+missing, errs.Field("file", missing))
		}
	}
	var e *errs.Error
	if errors.As(err, &e) && e.Code != errs.Internal && e.Code != "" {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap("bank.ImportFile: parse", err)
	}
	msg := strings.TrimSpace(err.Error())
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return errs.Invalid("the "+format+" file cannot be read: "+strings.ToValidUTF8(msg, "?"), errs.Field("file", "unreadable "+format))
}

// assign names the bank account of each statement: the route's, when the
// file was uploaded to one (a statement naming another IBAN is refused),
// else the tenant's account with the statement's IBAN.
func (s *Service) assign(ctx context.Context, tenantID string, route *Account, stmts []ParsedStatement) (map[string][]ParsedStatement, []string, error) {
	groups := map[string][]ParsedStatement{}
	var order []string
	add := func(a Account, st ParsedStatement) {
		if _, ok := groups[a.ID]; !ok {
			order = append(order, a.ID)
		}
		// Entries without a currency (an MT940 snippet) are in the
		// statement's, else the account's.
		cur := cmp.Or(st.Statement.Currency, a.Currency)
		for i := range st.Entries {
			if st.Entries[i].Currency == "" {
				st.Entries[i].Currency = cur
			}
		}
		groups[a.ID] = append(groups[a.ID], st)
	}
	if route != nil {
		for i, st := range stmts {
			if iban := st.Statement.IBAN; iban != "" && iban != route.IBAN {
				return nil, nil, errs.Invalid(fmt.Sprintf("statement %d of the file is for IBAN %s, not for this bank account's IBAN %s", i+1, iban, route.IBAN),
					errs.Field("file", fmt.Sprintf("statement %d: IBAN %s is not %s", i+1, iban, route.IBAN)))
			}
			add(*route, st)
		}
		return groups, order, nil
	}
	list, err := s.store.Accounts(ctx, tenantID)
	if err != nil {
		return nil, nil, err
	}
	byIBAN := map[string]Account{}
	for _, a := range list {
		byIBAN[a.IBAN] = a
	}
	for i, st := range stmts {
		iban := st.Statement.IBAN
		if iban == "" {
			return nil, nil, errs.E(errs.Unprocessable, "statement %d of the file names no IBAN; upload the file to its bank account (POST /v1/bank-accounts/{id}/upload)", i+1)
		}
		a, ok := byIBAN[iban]
		if !ok {
			return nil, nil, errs.E(errs.BankAccountNotFound, "no bank account with IBAN %s (statement %d of the file); create it first", iban, i+1)
		}
		add(a, st)
	}
	return groups, order, nil
}

// statementResults pairs the parsed statements with what the store did.
// A file imported before yields no stored statements: each is reported
// as parsed, every entry skipped.
func statementResults(stmts []ParsedStatement, r ImportResult) []bankv1.StatementResult {
	out := make([]bankv1.StatementResult, len(stmts))
	for i, st := range stmts {
		sr := bankv1.StatementResult{Kind: st.Statement.Kind, StatementRef: st.Statement.ID, Entries: len(st.Entries),
			Sum: money.Amount{Decimal: sum(st.Entries)}}
		if st.Statement.IBAN != "" {
			iban := st.Statement.IBAN
			sr.IBAN = &iban
		}
		if o := st.Statement.Opening; o != nil {
			sr.Opening = &money.Amount{Decimal: o.Amount}
		}
		if c := st.End.Closing; c != nil {
			sr.Closing = &money.Amount{Decimal: c.Amount}
		}
		expected, _, mismatch := BalanceMismatch(st.Statement.Opening, st.End)
		if sr.Opening != nil && sr.Closing != nil {
			sr.ExpectedClosing = &money.Amount{Decimal: expected}
		}
		sr.BalanceMismatch = mismatch
		if i < len(r.Statements) {
			stored := r.Statements[i]
			sr.ID = &stored.ID
			sr.Imported, sr.SkippedDuplicates = stored.Imported, stored.SkippedDuplicates
		} else {
			sr.SkippedDuplicates = len(st.Entries)
		}
		out[i] = sr
	}
	return out
}

func sum(es []Entry) decimal.Decimal {
	t := decimal.Zero
	for _, e := range es {
		t = t.Add(e.Amount)
	}
	return t
}

// ImportJob reads one of the tenant's imports.
func (s *Service) ImportJob(ctx context.Context, tenantID, id string) (bankv1.ImportJob, error) {
	if !ValidID(id) {
		return bankv1.ImportJob{}, errs.NotFoundf("import %s not found", id)
	}
	return s.store.ImportJob(ctx, tenantID, id)
}
