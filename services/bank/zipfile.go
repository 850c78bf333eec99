package bank

import (
	"archive/zip"
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

// formatZIP is a ZIP archive of camt files, as Sparkasse and other banks
// offer their statements for download ("camt-ZIP"). It imports as camt:
// every entry in name order, into the same statements.
const formatZIP = "zip"

// Bounds of an archive, against a small upload that unpacks to gigabytes.
const (
	maxZIPEntries = 1000
	maxZIPBytes   = 256 << 20 // all entries unpacked
)

// readZIP parses each camt file of the ZIP archive r into sink. A ZIP
// needs random access, so the archive (at most the upload limit) goes to
// a temporary file first; the entries then stream through the parser.
func (s *Service) readZIP(r io.Reader, sink Sink) error {
	f, err := os.CreateTemp("", "bank-import-*.zip")
	if err != nil {
		return fmt.Errorf("bank.readZIP: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := io.Copy(f, io.LimitReader(r, bankv1.MaxStatementFileBytes+1))
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(f, n)
	if err != nil {
		return errs.Invalid("the ZIP archive cannot be read", errs.Field("file", "not a readable ZIP archive"))
	}
	var files []*zip.File
	for _, zf := range zr.File {
		base := path.Base(zf.Name)
		if zf.FileInfo().IsDir() || strings.HasPrefix(base, ".") || strings.HasPrefix(zf.Name, "__MACOSX/") {
			continue // folders and the archivers' own files
		}
		files = append(files, zf)
	}
	switch {
	case len(files) == 0:
		return errs.Invalid("the ZIP archive holds no camt file", errs.Field("file", "no camt file in the archive"))
	case len(files) > maxZIPEntries:
		return errs.Invalid(fmt.Sprintf("the ZIP archive holds %d files; at most %d are imported at once", len(files), maxZIPEntries),
			errs.Field("file", "too many files in the archive"))
	}
	slices.SortFunc(files, func(a, b *zip.File) int { return cmp.Compare(a.Name, b.Name) })
	left := int64(maxZIPBytes)
	for _, zf := range files {
		if err := s.readZIPEntry(zf, &left, sink); err != nil {
			return err
		}
	}
	return nil
}

// errZIPTooLarge is the unpacked size limit reached.
var errZIPTooLarge = errors.New("unpacked size limit")

func (s *Service) readZIPEntry(zf *zip.File, left *int64, sink Sink) error {
	rc, err := zf.Open()
	if err != nil {
		return errs.Invalid("the ZIP archive cannot be read", errs.Field("file", zf.Name+": "+err.Error()))
	}
	defer rc.Close()
	br := bufio.NewReaderSize(&budgetReader{r: rc, left: left}, 64<<10)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return zipEntryError(zf.Name, err)
	}
	if Sniff(head) != FormatCAMT {
		return errs.E(errs.InvalidFileType, "%s in the ZIP archive is not a camt.052/053/054 file; an archive may hold camt files only", zf.Name)
	}
	if err := s.files.parsers.CAMT(br, sink); err != nil {
		return zipEntryError(zf.Name, err)
	}
	// To the end, so the archive's checksum of the entry is verified.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return zipEntryError(zf.Name, err)
	}
	return nil
}

// zipEntryError names the entry a refusal is about; an error of the sink
// or of reading the upload keeps its kind.
func zipEntryError(name string, err error) error {
	var e *errs.Error
	var st storeError
	var src sourceError
	switch {
	case errors.Is(err, errZIPTooLarge):
		return errs.Invalid("the ZIP archive unpacks to more than 256 MB", errs.Field("file", "archive too large when unpacked"))
	case errors.As(err, &st), errors.As(err, &src):
		return err
	case errors.As(err, &e) && e.Code != errs.Internal && e.Code != "":
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// budgetReader reads until the archive's unpacked budget is spent.
type budgetReader struct {
	r    io.Reader
	left *int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if *b.left <= 0 {
		return 0, errZIPTooLarge
	}
	if int64(len(p)) > *b.left {
		p = p[:*b.left]
	}
	n, err := b.r.Read(p)
	*b.left -= int64(n)
	return n, err
}
