package allinone_test

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/services/bank/camt/camttest"
)

// liveHeap is the heap the last garbage collection found live: what the
// process holds, without the garbage a collection has yet to free (whose
// amount depends on GOGC and on everything else in the process).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkBankStatementImport uploads a generated camt.053 through the
// gateway (HTTP, the object store, the bank's work queue, the parser,
// one transaction) and waits for its answer: entries 10,000 for the
// issue's time aim (3 s end to end), 38,000 (a 50 MB file) for the peak
// live heap the import adds to the process, sampled every 10 ms.
func BenchmarkBankStatementImport(b *testing.B) {
	p := startPlatform(b, env{"BANK_IMPORT_WAIT": "25s"})
	for _, n := range []int{10000, 38000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				key, tenant := p.newTenant("Bench " + strconv.Itoa(n) + "-" + strconv.Itoa(i))
				acc := p.bankAccountFor(tenant, defaultIBAN, "1800")
				file := camttest.Statement053(n, defaultIBAN, i+1)
				// The request body exists before the baseline: the client's
				// copy of the file is not the platform's memory.
				body, ct := multipartBody(b, statementPart("gross.xml", file))
				fileMB := float64(len(file)) / (1 << 20)
				file = nil
				runtime.GC()
				base := liveHeap()
				var peakHeap atomic.Uint64
				stop := make(chan struct{})
				go func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(10 * time.Millisecond):
							if h := liveHeap(); h > peakHeap.Load() {
								peakHeap.Store(h)
							}
						}
					}
				}()
				b.StartTimer()
				start := time.Now()
				r := p.call("POST", "/v1/bank-accounts/"+acc+"/upload", key, body, "Content-Type", ct)
				imported := r.Body["imported"]
				if r.Status == 202 { // still running when the call's wait ended
					for r.str("state") != "done" && r.str("state") != "failed" {
						time.Sleep(300 * time.Millisecond)
						r = p.must(200, "GET", "/v1/bank-imports/"+r.str("id"), key, nil)
					}
					imported = r.Body["imported"]
				} else if r.Status != 201 {
					b.Fatalf("upload: %d %.300s", r.Status, r.Raw)
				}
				elapsed := time.Since(start)
				b.StopTimer()
				close(stop)
				if imported != float64(n) {
					b.Fatalf("imported %v of %d: %.300s", imported, n, r.Raw)
				}
				b.ReportMetric(elapsed.Seconds(), "s/import")
				b.ReportMetric(float64(n)/elapsed.Seconds(), "entries/s")
				b.ReportMetric(fileMB, "file-MB")
				if grow := int64(peakHeap.Load()) - int64(base); grow > 0 {
					b.ReportMetric(float64(grow)/(1<<20), "peak-live-heap-growth-MB")
				}
				b.StartTimer()
			}
		})
	}
}
