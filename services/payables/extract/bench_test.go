package extract

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkExtractEInvoice reads every sample XML e-invoice in turn and
// reports e-invoices per second (einvoicein, the mapping and the EN 16931
// and §14 checks; no external tools).
func BenchmarkExtractEInvoice(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("testdata", "einvoice", "*.xml"))
	var docs [][]byte
	for _, f := range files {
		if filepath.Base(f) == "invalid-malformed-1.xml" {
			continue
		}
		docs = append(docs, read(b, filepath.Base(f)))
	}
	e := New(Options{})
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := e.Extract(ctx, docs[i%len(docs)], "application/xml"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "einvoices/s")
}

// BenchmarkOCRPage reads one scanned A4 page (200 dpi PNG, grey, noisy,
// skewed) with Tesseract on one thread (OMP_THREAD_LIMIT=1, which run
// sets for every tesseract) and reports seconds per page.
func BenchmarkOCRPage(b *testing.B) {
	scan := samples[0].scan(b)
	e := New(Options{})
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, _, err := e.Extract(ctx, scan, "image/png")
		if err != nil {
			b.Fatal(err)
		}
		if r.TotalGross == nil {
			b.Fatal("no total read")
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/page")
}
