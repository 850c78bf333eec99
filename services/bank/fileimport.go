package bank

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

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
	// ImportFile imports one file into one bank account in one
	// transaction: the imports row (for a file the account imported
	// before, none: the result says DuplicateFile and the writer only
	// counts), then run, which parses the file into the writer. run may be
	// called again when the transaction is retried. The bank account must
	// be the tenant's (NOT_FOUND).
	ImportFile(ctx context.Context, tenantID, accountID string, imp ImportMeta, run func(StatementWriter) (FileParse, error)) (ImportResult, error)
	FileJobStore
	// ImportJob reads one import; an unknown id is NOT_FOUND.
	ImportJob(ctx context.Context, tenantID, id string) (bankv1.ImportJob, error)
	// FileImport is the id of the import that brought the file with this
	// SHA-256 into the bank account.
	FileImport(ctx context.Context, tenantID, accountID, sha string) (string, error)
}

// StatementWriter writes a file's statements inside its import's
// transaction as the parser hands them over: Begin with a statement's
// header, Write its entries a chunk at a time, End with its closing
// balance. A 50 MB statement is never held whole.
type StatementWriter interface {
	Begin(Statement) error
	// Write stores the entries not yet stored for the bank account (by
	// their dedup key); it keeps no reference to es.
	Write(es []Entry) error
	End(StatementEnd) (StatementResult, error)
}

// writeChunk is how many entries go to the store at once: large enough
// for a batch to pay off, small enough to bound memory.
const writeChunk = 500

// files is what the service needs to import statement files.
type files struct {
	uploads Uploads
	parsers Parsers
	jobs    bool // imports run as jobs of the import workers
	wait    time.Duration
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

// mt940Start: a SWIFT block, a field tag, or the plain header ABN AMRO
// writes first (its BIC, then "940").
var mt940Start = regexp.MustCompile(`^(\{1:|:\d\d[A-Z]?:|[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?\r?\n94[02]\r?\n)`)

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
	case bytes.HasPrefix(h, []byte("PK\x03\x04")):
		return formatZIP
	case bytes.IndexByte(h, 0) >= 0 || bytes.HasPrefix(h, []byte("%PDF")):
		return ""
	}
	// Text: the CSV parser decides whether a header row fits.
	return FormatCSV
}

// fileSink streams a file's statements for one bank account into a
// StatementWriter and keeps what the result shows of each, and the CSV
// rows left out. ibans, when set, are the statements' IBANs that go to
// this account (the others are skipped); without, every statement naming
// an IBAN must be acc's.
type fileSink struct {
	w     StatementWriter
	acc   Account
	ibans map[string]bool

	n        int  // statements seen
	skip     bool // the current statement is another account's
	currency string
	cur      bankv1.StatementResult
	opening  *Balance
	buf      []Entry
	stmts    []bankv1.StatementResult
	rowErrs  []bankv1.FileRowError
	refused  map[int]bool
	written  int            // entries handed to the writer
	progress func(rows int) // nil: nobody watches
}

// Statement implements Sink.
func (f *fileSink) Statement(st Statement) error {
	f.n++
	iban := st.IBAN
	switch {
	case f.ibans == nil && iban != "" && iban != f.acc.IBAN:
		return errs.Invalid(fmt.Sprintf("statement %d of the file is for IBAN %s, not for this bank account's IBAN %s", f.n, iban, f.acc.IBAN),
			errs.Field("file", fmt.Sprintf("statement %d: IBAN %s is not %s", f.n, iban, f.acc.IBAN)))
	case f.ibans != nil && !f.ibans[iban]:
		f.skip = true // another account's
		return nil
	}
	f.skip = false
	// Entries without a currency (an MT940 snippet) are in the
	// statement's, else the account's.
	f.currency = cmp.Or(st.Currency, f.acc.Currency)
	f.opening = st.Opening
	f.cur = bankv1.StatementResult{Kind: st.Kind, StatementRef: st.ID, Sum: money.Amount{Decimal: decimal.Zero}}
	if iban != "" {
		f.cur.IBAN = &iban
	}
	if o := st.Opening; o != nil {
		f.cur.Opening = &money.Amount{Decimal: o.Amount}
	}
	return stored(f.w.Begin(st))
}

// Entry implements Sink.
func (f *fileSink) Entry(e Entry) error {
	if f.skip {
		return nil
	}
	if e.Currency == "" {
		e.Currency = f.currency
	}
	f.cur.Entries++
	f.cur.Sum.Decimal = f.cur.Sum.Decimal.Add(e.Amount)
	f.buf = append(f.buf, e)
	if len(f.buf) >= writeChunk {
		return f.flush()
	}
	return nil
}

func (f *fileSink) flush() error {
	err := stored(f.w.Write(f.buf))
	f.written += len(f.buf)
	clear(f.buf) // let the strings go
	f.buf = f.buf[:0]
	if err == nil && f.progress != nil {
		f.progress(f.written)
	}
	return err
}

// End implements Sink.
func (f *fileSink) End(end StatementEnd) error {
	if f.skip {
		f.skip = false
		return nil
	}
	if err := f.flush(); err != nil {
		return err
	}
	res, err := f.w.End(end)
	if err != nil {
		return stored(err)
	}
	sr := f.cur
	if c := end.Closing; c != nil {
		sr.Closing = &money.Amount{Decimal: c.Amount}
	}
	expected, _, mismatch := BalanceMismatch(f.opening, end)
	if sr.Opening != nil && sr.Closing != nil {
		sr.ExpectedClosing = &money.Amount{Decimal: expected}
	}
	sr.BalanceMismatch = mismatch
	if res.ID != "" {
		sr.ID = &res.ID
	}
	sr.Imported, sr.SkippedDuplicates = res.Imported, res.SkippedDuplicates
	f.stmts = append(f.stmts, sr)
	return nil
}

// storeError marks an error of writing what was parsed: the parser hands
// it back as it is, and it must never be answered as a broken file (its
// text is the database's).
type storeError struct{ err error }

func (e storeError) Error() string { return "storing the statement: " + e.err.Error() }
func (e storeError) Unwrap() error { return e.err }

func stored(err error) error {
	if err == nil {
		return nil
	}
	return storeError{err}
}

// ibanSink records each statement's IBAN and nothing else.
type ibanSink struct{ ibans []string }

func (s *ibanSink) Statement(st Statement) error {
	if st.IBAN == "" {
		return errs.E(errs.Unprocessable, "statement %d of the file names no IBAN; upload the file to its bank account (POST /v1/bank-accounts/{id}/upload)", len(s.ibans)+1)
	}
	s.ibans = append(s.ibans, st.IBAN)
	return nil
}
func (s *ibanSink) Entry(Entry) error      { return nil }
func (s *ibanSink) End(StatementEnd) error { return nil }

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
// The file streams: entries are written in chunks of writeChunk as the
// parser hands them over, so memory stays bounded whatever the size of a
// statement. Each bank account's
// statements import in one transaction that also records the file's
// SHA-256, so an import cut short leaves nothing of that account written,
// and a retry imports nothing twice. A file for several accounts (found
// by IBAN) is read once to find them and once per account.
func (s *Service) ImportFile(ctx context.Context, tenantID, accountID string, in gatewayv1.UploadRequest) (bankv1.FileImportResult, error) {
	return s.importFile(ctx, tenantID, accountID, in, true, nil)
}

// checkUpload checks the gateway's description of an upload.
func checkUpload(ref gatewayv1.UploadRef) error {
	switch {
	case ref.Bucket != gatewayv1.UploadsBucket || ref.Name == "" || !sha256Hex.MatchString(ref.SHA256):
		return errs.Invalid("no uploaded file", errs.Field("file", "required"))
	case ref.Size > bankv1.MaxStatementFileBytes:
		return errs.E(errs.FileTooLarge, "statement files may have at most 50 MB")
	case ref.Size == 0:
		return errs.E(errs.EmptyFile, "the file is empty")
	}
	return nil
}

// importFile is ImportFile; drop deletes the object when the import is
// done or refused (a job deletes it once its outcome is recorded), and
// progress, when set, hears the entries written so far after each chunk.
func (s *Service) importFile(ctx context.Context, tenantID, accountID string, in gatewayv1.UploadRequest, drop bool, progress func(rows int)) (bankv1.FileImportResult, error) {
	if s.files.uploads == nil {
		return bankv1.FileImportResult{}, errs.E(errs.Unavailable, "statement files cannot be imported here")
	}
	ref := in.Upload
	if drop {
		defer func() {
			// The caller may be gone; the object must go all the same.
			_ = s.files.uploads.Delete(context.WithoutCancel(ctx), ref.Bucket, ref.Name)
		}()
	}
	if err := checkUpload(ref); err != nil {
		return bankv1.FileImportResult{}, err
	}

	type target struct {
		acc   Account
		ibans map[string]bool // the statements' IBANs that go to it; "" too for the route's account
	}
	var targets []target
	format, err := s.sniffFile(ctx, ref)
	if err != nil {
		return bankv1.FileImportResult{}, err
	}
	if accountID != "" {
		if !ValidID(accountID) {
			return bankv1.FileImportResult{}, notFound(accountID)
		}
		acc, err := s.store.Account(ctx, tenantID, accountID)
		if err != nil {
			return bankv1.FileImportResult{}, err
		}
		targets = []target{{acc: acc}}
	} else {
		// A first pass finds the accounts; it keeps no entries.
		scan := &ibanSink{}
		if _, err := s.readFile(ctx, ref, scan); err != nil {
			return bankv1.FileImportResult{}, err
		}
		ibans := scan.ibans
		if len(ibans) == 0 {
			return bankv1.FileImportResult{}, errs.Invalid("the file holds no statement", errs.Field("file", "no statement"))
		}
		list, err := s.store.Accounts(ctx, tenantID)
		if err != nil {
			return bankv1.FileImportResult{}, err
		}
		byIBAN := map[string]Account{}
		for _, a := range list {
			byIBAN[a.IBAN] = a
		}
		at := map[string]int{}
		for i, iban := range ibans {
			a, ok := byIBAN[iban]
			if !ok {
				return bankv1.FileImportResult{}, errs.E(errs.BankAccountNotFound, "no bank account with IBAN %s (statement %d of the file); create it first", iban, i+1)
			}
			k, ok := at[a.ID]
			if !ok {
				k = len(targets)
				at[a.ID] = k
				targets = append(targets, target{acc: a, ibans: map[string]bool{}})
			}
			targets[k].ibans[iban] = true
		}
	}

	out := bankv1.FileImportResult{Statements: []bankv1.StatementResult{}, Errors: []bankv1.FileRowError{}}
	for i, tg := range targets {
		base := out.TotalRows // the accounts before this one
		acc := tg.acc
		var (
			stmts   []bankv1.StatementResult
			rowErrs []bankv1.FileRowError
		)
		meta := ImportMeta{ID: newID(), Source: sourceOf[format], FileSHA256: ref.SHA256}
		r, err := s.store.ImportFile(ctx, tenantID, acc.ID, meta, func(w StatementWriter) (FileParse, error) {
			// From the start again when the transaction is retried.
			sink := &fileSink{w: w, acc: acc, ibans: tg.ibans}
			if progress != nil {
				sink.progress = func(rows int) { progress(base + rows) }
			}
			stmts, rowErrs = nil, nil
			if _, err := s.readFile(ctx, ref, sink); err != nil {
				return FileParse{}, err
			}
			if sink.n == 0 {
				return FileParse{}, errs.Invalid("the file holds no statement", errs.Field("file", "no statement"))
			}
			stmts, rowErrs = sink.stmts, sink.rowErrs
			fp := FileParse{Refused: len(sink.refused)}
			for _, e := range sink.rowErrs {
				fp.Errors = append(fp.Errors, bankv1.RowError{Index: e.Row, Field: e.Field, Issue: e.Issue})
			}
			return fp, nil
		})
		if err != nil {
			return bankv1.FileImportResult{}, err
		}
		if r.DuplicateFile {
			// The answer names the import that brought the file.
			if r.ImportID, err = s.store.FileImport(ctx, tenantID, acc.ID, ref.SHA256); err != nil {
				return bankv1.FileImportResult{}, err
			}
		}
		if i == 0 {
			out.BatchID, out.BankAccountID, out.Format = r.ImportID, acc.ID, format
			if format == formatZIP {
				out.Format = FormatCAMT // what the archive holds
			}
			out.Errors = append(out.Errors, rowErrs...)
		}
		out.TotalRows += r.TotalRows
		out.Imported += r.Imported
		out.SkippedDuplicates += r.SkippedDuplicates
		out.DuplicateFile = out.DuplicateFile || r.DuplicateFile
		out.Statements = append(out.Statements, stmts...)
	}
	return out, nil
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

var sourceOf = map[string]string{FormatCAMT: SourceCAMT, FormatMT940: SourceMT940, FormatCSV: SourceCSV, formatZIP: SourceCAMT}

// FileParse is what parsing a file found besides its statements.
type FileParse struct {
	Refused int // CSV rows left out
	Errors  []bankv1.RowError
}

// sniffFile tells the uploaded file's format from its first bytes.
func (s *Service) sniffFile(ctx context.Context, ref gatewayv1.UploadRef) (string, error) {
	rc, err := s.files.uploads.Open(ctx, ref.Bucket, ref.Name)
	if err != nil {
		return "", errs.Wrap("bank.ImportFile: open upload", err)
	}
	defer rc.Close()
	head := make([]byte, sniffSize)
	n, err := io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", errs.Wrap("bank.ImportFile: read upload", err)
	}
	if f := Sniff(head[:n]); f != "" {
		return f, nil
	}
	return "", errs.E(errs.InvalidFileType, "the file is neither camt.052/053/054 XML (or a ZIP archive of them), MT940 nor a CSV export of online banking")
}

// readFile streams the uploaded file through its parser into sink and
// returns its format. The whole object is read, so the bucket checks its
// digest.
func (s *Service) readFile(ctx context.Context, ref gatewayv1.UploadRef, sink Sink) (string, error) {
	rc, err := s.files.uploads.Open(ctx, ref.Bucket, ref.Name)
	if err != nil {
		return "", errs.Wrap("bank.ImportFile: open upload", err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(sourceReader{rc}, 64<<10)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", errs.Wrap("bank.ImportFile: read upload", err)
	}
	format := Sniff(head)
	var parse Parser
	switch format {
	case FormatCAMT:
		parse = s.files.parsers.CAMT
	case FormatMT940:
		parse = s.files.parsers.MT940
	case FormatCSV:
		parse = s.files.parsers.CSV
	case formatZIP:
		if err := s.readZIP(br, sink); err != nil {
			return "", s.parseError(FormatCAMT, err)
		}
		return FormatCAMT, nil
	default:
		return "", errs.E(errs.InvalidFileType, "the file is neither camt.052/053/054 XML (or a ZIP archive of them), MT940 nor a CSV export of online banking")
	}
	if err := parse(br, sink); err != nil {
		return "", s.parseError(format, err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return "", errs.Wrap("bank.ImportFile: read upload", err)
	}
	return format, nil
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
	var st storeError
	if errors.As(err, &st) {
		return errs.Wrap("bank.ImportFile: write", st.err)
	}
	var e *errs.Error
	if errors.As(err, &e) && e.Code != errs.Internal && e.Code != "" {
		return e
	}
	var src sourceError
	if errors.As(err, &src) {
		// Reading the stored upload failed: not the file's fault.
		return errs.Wrap("bank.ImportFile: read upload", errs.E(errs.Unavailable, "the uploaded file could not be read; send it again"))
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

// ImportJob reads one of the tenant's imports.
func (s *Service) ImportJob(ctx context.Context, tenantID, id string) (bankv1.ImportJob, error) {
	if !ValidID(id) {
		return bankv1.ImportJob{}, errs.NotFoundf("import %s not found", id)
	}
	if j, found, err := s.store.FileJob(ctx, tenantID, id); err != nil || found {
		return j, err
	}
	return s.store.ImportJob(ctx, tenantID, id)
}

// sourceReader marks the errors of reading the stored upload, so a
// parser's "read failed" is never answered as a broken file.
type sourceReader struct{ r io.Reader }

func (s sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = sourceError{err}
	}
	return n, err
}

type sourceError struct{ err error }

func (e sourceError) Error() string { return "reading the upload: " + e.err.Error() }
func (e sourceError) Unwrap() error { return e.err }
