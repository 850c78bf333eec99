package allinone_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/pkg/migrate"
	"github.com/ledgerplatform/ledger/services/payables/postgres"
)

// drainInvoices are the e-invoices of a queue to drain: every syntax and
// profile of the reader's samples.
var drainInvoices = []string{
	"CII_example1.xml", "kosit-01.01a-INVOICE_ubl.xml", "kosit-01.01a-INVOICE_uncefact.xml", "kosit-01.05a-INVOICE_uncefact.xml",
	"kosit-01.14a-INVOICE_uncefact.xml", "kosit-01.18a-INVOICE_ubl.xml", "kosit-02.01a-INVOICE_ubl.xml", "ubl-creditnote-noprefix.xml",
	"zugferd-basic-einfach.xml", "zugferd-en16931-einfach.xml", "zugferd-en16931-gutschrift.xml", "zugferd-en16931-rabatte.xml",
	"zugferd-minimum-rechnung.xml", "zugferd-xrechnung-einfach.xml",
}

// BenchmarkExtractQueueDrain queues the extraction of 20 invoice
// documents at once, as a batch of e-mails does, and measures until the
// last is done: the outbox, the PAYABLES_EXTRACT work queue, the ledger's
// document read, extraction and vendor matching, with one and with two
// extraction workers. The documents are e-invoices attached to PDFs.
func BenchmarkExtractQueueDrain(b *testing.B) {
	const n = 20
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
			files := map[string][]byte{}
			for _, f := range drainInvoices {
				files[f] = einvoiceSample(b, f)
			}
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				key, tenant := p.newTenant(fmt.Sprintf("Drain %d-%d", workers, i))
				docs := make([]string, n)
				for j := range docs {
					name := drainInvoices[j%len(drainInvoices)]
					// The attachment's time makes each PDF distinct: the
					// ledger keeps a content once.
					pdf := pdfWith(b, "xrechnung.xml", files[name], j)
					docs[j] = p.upload(201, "/v1/documents", key, fileField(fmt.Sprintf("rechnung-%d.pdf", j), "application/pdf", pdf)).str("id")
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
					if time.Since(start) > 2*time.Minute {
						b.Fatalf("%d of %d extractions finished after 2 minutes", done, n)
					}
					time.Sleep(5 * time.Millisecond)
				}
				elapsed := time.Since(start)
				b.StopTimer()
				if failed := count(b, p.owner, `SELECT count(*) FROM payables.extractions WHERE tenant_id = $1 AND state = 'failed'`, tenant); failed != 0 {
					var why string
					_ = p.owner.QueryRow(ctx, `SELECT error_code || ' ' || error FROM payables.extractions WHERE tenant_id = $1 AND state = 'failed' LIMIT 1`, tenant).Scan(&why)
					b.Fatalf("%d extractions failed: %s", failed, why)
				}
				b.ReportMetric(elapsed.Seconds(), "s/drain")
				b.ReportMetric(float64(n)/elapsed.Seconds(), "invoices/s")
				b.StartTimer() // b.Loop wants it running
			}
		})
	}
}
