package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of uploaded scans
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// run runs one tool under ctx and answers its standard output. A tool
// that cannot start, is killed or fails is an OCR_FAILED; callers that
// can tell a bad document from the exit code look at *exec.ExitError.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	// Tesseract's OpenMP threads fight each other and the other workers
	// of the machine; one thread per page is faster overall (tesseract's
	// own advice for batch work).
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ocrFailed(fmt.Errorf("%s: %w", filepath.Base(name), ctx.Err()))
	}
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, ocrFailed(fmt.Errorf("%s is not installed (make tools installs it): %w", name, err))
		}
		return stdout.Bytes(), fmt.Errorf("%s: %w: %s", filepath.Base(name), err, clip(strings.TrimSpace(stderr.String()), 300))
	}
	return stdout.Bytes(), nil
}

// tempDir makes the document's scratch directory; the caller removes it.
func tempDir() (string, error) {
	dir, err := os.MkdirTemp("", "extract-*")
	if err != nil {
		return "", ocrFailed(fmt.Errorf("temp dir: %w", err))
	}
	return dir, nil
}

// pdfText is the PDF's text layer, laid out as on the page.
func (e *Extractor) pdfText(ctx context.Context, data []byte) (string, error) {
	// pdftotext reads the PDF from stdin ("-") badly (it needs to seek),
	// so the bytes go through a file.
	dir, err := tempDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return "", ocrFailed(fmt.Errorf("write pdf: %w", err))
	}
	out, err := run(ctx, e.o.PDFToText, "-layout", "-enc", "UTF-8", "-l", strconv.Itoa(MaxPages), in, "-")
	if err != nil {
		return "", pdfToolErr(err)
	}
	return string(out), nil
}

// pdfToolErr tells a PDF poppler cannot read (exit 1: "error opening a
// PDF file", 3: permissions, 99: anything else about the file, such as a
// broken page tree or no pages) from a failure of the tool (2: its output
// file; killed; missing): a bad file is refused at once, while a failing
// tool is worth a retry.
func pdfToolErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && (ee.ExitCode() == 1 || ee.ExitCode() == 3 || ee.ExitCode() == 99) {
		return invalid("file", "the PDF could not be opened")
	}
	if errs.As(err) != nil {
		return err
	}
	return ocrFailed(err)
}

// hasTextLayer reports whether pdftotext found real text: a scanned PDF
// yields nothing or a few stray characters per page.
func hasTextLayer(text string) bool {
	n := 0
	for _, r := range text {
		if r > ' ' {
			n++
		}
	}
	pages := strings.Count(text, "\f")
	if pages == 0 {
		pages = 1
	}
	return n >= 40*pages || n >= 200
}

// ocrPDF rasterises the first MaxPages pages and reads each by OCR.
func (e *Extractor) ocrPDF(ctx context.Context, data []byte) (string, error) {
	dir, err := tempDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return "", ocrFailed(fmt.Errorf("write pdf: %w", err))
	}
	prefix := filepath.Join(dir, "page")
	// Raw PGM, not PNG: compressing a noisy 300 dpi scan costs pdftoppm
	// 14 s of CPU per page, writing 8.7 MB of PGM under one.
	if _, err := run(ctx, e.o.PDFToPPM, "-r", strconv.Itoa(e.o.DPI), "-gray", "-l", strconv.Itoa(MaxPages), in, prefix); err != nil {
		return "", pdfToolErr(err)
	}
	pages, err := filepath.Glob(prefix + "*.pgm")
	if err != nil || len(pages) == 0 {
		return "", invalid("file", "the PDF has no pages")
	}
	// page-1.pgm … page-10.pgm: order by the page number, not the text.
	sort.Slice(pages, func(i, j int) bool {
		return len(pages[i]) < len(pages[j]) || len(pages[i]) == len(pages[j]) && pages[i] < pages[j]
	})
	var b strings.Builder
	for i, p := range pages {
		if i > 0 {
			b.WriteString("\f")
		}
		t, err := e.tesseract(ctx, p)
		if err != nil {
			return "", err
		}
		b.WriteString(t)
	}
	return b.String(), nil
}

// ocrImage reads one scanned image.
func (e *Extractor) ocrImage(ctx context.Context, data []byte, mimeType string) (string, error) {
	dir, err := tempDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	ext := ".png"
	if mimeType != "image/png" {
		ext = ".jpg"
	}
	in := filepath.Join(dir, "in"+ext)
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return "", ocrFailed(fmt.Errorf("write image: %w", err))
	}
	return e.tesseract(ctx, in)
}

// tesseract reads one page image. --psm 4 (one column of text of
// variable sizes) keeps table rows on one line better than 6 on
// invoices, whose header blocks and tables differ in size.
func (e *Extractor) tesseract(ctx context.Context, img string) (string, error) {
	out, err := run(ctx, e.o.Tesseract, img, "stdout", "-l", e.o.Languages, "--psm", "4")
	if err != nil {
		if errs.As(err) != nil {
			return "", err
		}
		return "", ocrFailed(err)
	}
	return string(out), nil
}

// maxPixels bounds an image handed to tesseract: a 300 dpi A4 page has
// 8.7 million; a decompression bomb claims billions.
const maxPixels = 60_000_000

// checkImage refuses bytes that are no JPEG or PNG, or absurdly large.
func checkImage(data []byte) error {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "jpeg" && format != "png") {
		return invalid("file", "the document is not a readable JPEG or PNG image")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxPixels {
		return invalid("file", "the image is %d×%d pixels, at most %d million pixels are read", cfg.Width, cfg.Height, maxPixels/1_000_000)
	}
	return nil
}
