package allinone_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ledgerplatform/ledger/services/bank/camt/camttest"
)

// TestBankImportProgress: an import that outlasts its request answers 202
// with the job, and the job shows the entries written so far while it
// runs, then the totals once done.
func TestBankImportProgress(t *testing.T) {
	t.Parallel()
	p := startPlatform(t, env{"BANK_IMPORT_WAIT": "0s"})
	key, tenant := p.newTenant("Fortschritt GmbH")
	acc := p.bankAccountFor(tenant, defaultIBAN, "1800")
	const n = 20000
	body, ct := multipartBody(t, statementPart("gross.xml", camttest.Statement053(n, defaultIBAN, 1)))
	r := p.must(202, "POST", "/v1/bank-accounts/"+acc+"/upload", key, body, "Content-Type", ct)
	job := r.str("id")
	var seen []float64
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := p.must(200, "GET", "/v1/bank-imports/"+job, key, nil)
		done, _ := j.Body["rows_done"].(float64)
		if s := j.str("state"); s == "done" {
			if done != n || j.Body["imported"] != float64(n) {
				t.Fatalf("done: %.300s", j.Raw)
			}
			break
		} else if s == "running" && done > 0 {
			seen = append(seen, done)
		} else if s == "failed" {
			t.Fatalf("failed: %.300s", j.Raw)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done within 60s: %.300s", j.Raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(seen) == 0 || seen[0] >= n {
		t.Fatalf("no progress seen while running: %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Fatalf("progress went back: %v", seen)
		}
	}
	t.Log(fmt.Sprint("rows_done seen while running: ", seen))
}
