package allinone_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"strconv"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// scannedInvoices are n distinct JPEG scans of the two sample scans
// (200 dpi, greyscale, noise, skew): one pixel differs, since the ledger
// keeps a content once.
func scannedInvoices(b *testing.B, n int) [][]byte {
	var bases []image.Image
	for _, f := range []string{"scan-de-19-7.jpg", "scan-en.jpg"} {
		img, err := jpeg.Decode(bytes.NewReader(readRepoFile(b, "deploy", "allinone", "testdata", "scans", f)))
		if err != nil {
			b.Fatal(err)
		}
		bases = append(bases, img)
	}
	out := make([][]byte, n)
	for i := range out {
		src := bases[i%len(bases)]
		img := image.NewGray(src.Bounds())
		draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
		img.SetGray(i, 0, color.Gray{Y: uint8(i)})
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
			b.Fatal(err)
		}
		out[i] = buf.Bytes()
	}
	return out
}

// BenchmarkExtractQueueDrain queues the extraction of 20 scanned invoices
// at once, as a batch of e-mails does, and measures until the last is
// done: the outbox, the PAYABLES_EXTRACT work queue, the ledger's document
// read, Tesseract OCR and the field rules, vendor matching and the review
// case, with one and with two extraction workers.
func BenchmarkExtractQueueDrain(b *testing.B) {
	const n = 20
	scans := scannedInvoices(b, n)
	for _, workers := range []int{1, 2} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			p := startPlatform(b, env{"PAYABLES_EXTRACT_WORKERS": strconv.Itoa(workers)})
			ctx := context.Background()
			pool, err := migrate.ServicePool(ctx, p.owner, "", postgres.Schema.Role, 2, postgres.Schema)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(pool.Close)
			store := postgres.New(pool)
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				key, tenant := p.newTenant(fmt.Sprintf("Drain %d-%d", workers, i))
				docs := make([]string, n)
				for j := range docs {
					docs[j] = p.upload(201, "/v1/documents", key, fileField(fmt.Sprintf("scan-%d.jpg", j), "image/jpeg", scans[j])).str("id")
				}
				b.StartTimer()
				start := time.Now()
				for _, d := range docs {
					if _, err := store.EnqueueExtraction(ctx, tenant, d, nil); err != nil {
						b.Fatal(err)
					}
				}
				for {
					done := count(b, p.owner, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND state IN ('done', 'failed')`, tenant)
					if done == n {
						break
					}
					if time.Since(start) > 10*time.Minute {
						b.Fatalf("%d of %d extractions finished after 10 minutes", done, n)
					}
					time.Sleep(20 * time.Millisecond)
				}
				elapsed := time.Since(start)
				b.StopTimer()
				if failed := count(b, p.owner, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND state = 'failed'`, tenant); failed != 0 {
					var why string
					_ = p.owner.QueryRow(ctx, `SELECT error_code || ' ' || error FROM payables.extractions WHERE tenant_id = $1 AND state = 'failed' LIMIT 1`, tenant).Scan(&why)
					b.Fatalf("%d extractions failed: %s", failed, why)
				}
				b.ReportMetric(elapsed.Seconds(), "s/drain")
				b.ReportMetric(elapsed.Seconds()/n, "s/invoice")
				b.StartTimer() // b.Loop wants it running
			}
		})
	}
}
