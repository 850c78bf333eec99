//go:build chaos

package allinone_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/shopspring/decimal"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/services/bank/camt/camttest"
)

// TestBankCrash runs the bank service as a process of its own beside the
// in-process platform and kills it with SIGKILL: once while a large
// statement file is being written, and repeatedly while a batch of
// reconciliations posts its clearing bookings. After a restart and the
// client's retry nothing is missing and nothing is there twice: every
// entry of the file once, every transaction reconciled once, one clearing
// booking per transaction in the ledger, every open item settled once and
// one transaction_reconciled event per reconciliation.
//
// It is part of `make chaos` (build tag chaos).
func TestBankCrash(t *testing.T) {
	p := startPlatformWithout(t, env{"RATE_LIMIT_PER_MINUTE": "1000000", "REQUEST_TIMEOUT": "8s"}, "bank")
	bank := newBankProcess(t, p)
	bank.start(t)
	admin, tenant := p.newTenant("Absturz GmbH")
	w := p.apiKey(admin, "journal:write", "journal:read", "bank:read", "bank:write")
	ctx := context.Background()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := p.owner.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("import", func(t *testing.T) {
		const n = 30000
		acc := p.bankAccountFor(tenant, defaultIBAN, "1800")
		file := camttest.Statement053(n, defaultIBAN, 1)
		want := camtSum(t, file)
		body, ct := multipartBody(t, statementPart("gross.xml", file))
		r := p.call("POST", "/v1/bank-accounts/"+acc+"/upload", w, body, "Content-Type", ct)
		if r.Status != 202 {
			t.Fatalf("upload: %d %.300s (want 202: the job still running)", r.Status, r.Raw)
		}
		job := r.str("id")
		// Killed while the entries are being written: as soon as the job
		// reports its first written chunk (rows_done, kept beside the
		// import's own transaction), long before its last.
		eventually(t, 30*time.Second, func() error {
			if count(`SELECT count(*) FROM bank.file_jobs WHERE id = $1 AND state = 'running' AND rows_done > 0`, job) != 1 {
				return fmt.Errorf("job %s has written nothing yet", job)
			}
			return nil
		})
		bank.kill(t)
		if c := count(`SELECT count(*) FROM bank.file_jobs WHERE id = $1 AND state = 'running'`, job); c != 1 {
			t.Fatalf("the import ended before the kill; make the file larger")
		}
		if got := count(`SELECT count(*) FROM bank.transactions WHERE bank_account_id = $1`, acc); got != 0 {
			t.Fatalf("a killed import left %d transactions", got)
		}
		if got := count(`SELECT count(*) FROM bank.imports WHERE bank_account_id = $1`, acc); got != 0 {
			t.Fatalf("a killed import left %d imports", got)
		}

		bank.start(t) // the job goes to the new process after BANK_IMPORT_ACK_WAIT
		var done resp
		eventually(t, 90*time.Second, func() error {
			// A process that has just started may not serve every route
			// yet: 503 is retried, as a client would.
			if done = p.call("GET", "/v1/bank-imports/"+job, w, nil); done.Status != 200 {
				return fmt.Errorf("GET the job: %d %.200s", done.Status, done.Raw)
			}
			if s := done.str("state"); s != "done" {
				return fmt.Errorf("job %s", s)
			}
			return nil
		})
		if done.Body["imported"] != float64(n) {
			t.Fatalf("after the restart: %.400s", done.Raw)
		}
		if got, sum := p.bankTotals(acc); got != n || !sum.Equal(want) {
			t.Fatalf("stored %d transactions summing to %s, want %d and %s", got, sum, n, want)
		}
		again := p.call("POST", "/v1/bank-accounts/"+acc+"/upload", w, body, "Content-Type", ct)
		for again.Status == 202 {
			time.Sleep(300 * time.Millisecond)
			again = p.must(200, "GET", "/v1/bank-imports/"+again.str("id"), w, nil)
			if s := again.str("state"); s == "done" || s == "failed" {
				break
			}
		}
		if got, _ := p.bankTotals(acc); got != n {
			t.Fatalf("the file again: %d transactions stored (%.300s)", got, again.Raw)
		}
	})

	t.Run("reconcile", func(t *testing.T) {
		const n = 150
		acc := p.bankAccountFor(tenant, "DE89370400440532013000", "1810")
		intents := make([]string, n)
		var items []any
		for i := range n {
			ref := fmt.Sprintf("RE-2026-%04d", i)
			amount := fmt.Sprintf("%d.%02d", 100+i, i%100)
			intents[i] = p.book(w, bookingBody("2026-03-02", "Ausgangsrechnung "+ref, bline("1200", "4400", amount, "external_reference", ref))).IntentID
			items = append(items, map[string]any{"tx_date": "2026-03-10", "amount": json.Number(amount), "reference": ref, "bank_reference": "CR-" + ref})
		}
		p.must(201, "POST", "/v1/bank-transactions", w, map[string]any{"bank_account_id": acc, "transactions": items})
		eventually(t, 30*time.Second, func() error {
			if c := count(`SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND account_number = '1200'`, tenant); c != n {
				return fmt.Errorf("%d open items projected", c)
			}
			return nil
		})
		txByRef := map[string]string{}
		for _, tx := range p.must(200, "GET", "/v1/bank-transactions?limit=500&bank_account_id="+acc, w, nil).list("transactions") {
			txByRef[tx["reference"].(string)] = tx["id"].(string)
		}
		var pairs []any
		for i := range n {
			pairs = append(pairs, map[string]any{"bank_transaction_id": txByRef[fmt.Sprintf("RE-2026-%04d", i)],
				"intent_id": intents[i], "candidate_kind": "open_receivable", "open_item_account": "1200"})
		}
		batch := map[string]any{"pairs": pairs}
		live := func() int {
			return count(`SELECT count(*) FROM bank.reconciliations WHERE tenant_id = $1 AND state IN ('pending', 'active')`, tenant)
		}

		// Kill the bank while the batch runs, until one kill lands between
		// a claim and its confirmation (the posting in flight or done).
		caught, posted := 0, 0
		for round := 0; round < 5 && caught == 0; round++ {
			before := live()
			if before >= n-20 {
				break
			}
			// The batch runs until killed. A call that ends before enough
			// progress (a transient refusal right after a restart ends a
			// batch: the client retries it) is sent again.
			answered := make(chan resp, 1)
			go func() { answered <- p.call("POST", "/v1/bank-transactions/batch-reconcile", w, batch) }()
			deadline := time.Now().Add(60 * time.Second)
			for live() < before+10 {
				select {
				case r := <-answered:
					t.Logf("round %d: the batch ended before the kill: %d %.300s", round, r.Status, r.Raw)
					go func() { answered <- p.call("POST", "/v1/bank-transactions/batch-reconcile", w, batch) }()
				case <-time.After(20 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d: no progress within 60s: %d reconciliations", round, live())
				}
			}
			bank.kill(t)
			caught = count(`SELECT count(*) FROM bank.reconciliations WHERE tenant_id = $1 AND state = 'pending'`, tenant)
			posted = count(`SELECT count(*) FROM bank.reconciliations r WHERE r.tenant_id = $1 AND r.state = 'pending'
				AND EXISTS (SELECT 1 FROM ledger.intents i WHERE i.tenant_id = r.tenant_id AND i.id = r.clearing_intent_id)`, tenant)
			t.Logf("round %d: killed with %d reconciliations live, %d pending (%d of them posted in the ledger)", round, live(), caught, posted)
			if r := <-answered; r.Status < 500 {
				t.Fatalf("the batch answered %d although its service was killed: %.300s", r.Status, r.Raw)
			}
			bank.start(t)
		}
		if caught == 0 {
			t.Fatal("no kill landed between a claim and its confirmation")
		}

		// The client retries the batch until every pair is reconciled.
		eventually(t, 60*time.Second, func() error {
			r := p.call("POST", "/v1/bank-transactions/batch-reconcile", w, batch)
			if r.Status != 200 {
				return fmt.Errorf("retry: %d %.200s", r.Status, r.Raw)
			}
			for _, e := range r.list("errors") {
				if e["code"] != "CONFLICT" {
					return fmt.Errorf("retry refused a pair: %v", e)
				}
			}
			if l := count(`SELECT count(*) FROM bank.reconciliations WHERE tenant_id = $1 AND state = 'active'`, tenant); l != n {
				return fmt.Errorf("%d of %d reconciled", l, n)
			}
			return nil
		})
		checks := []struct {
			what string
			sql  string
			want int
		}{
			{"transactions reconciled", `SELECT count(*) FROM bank.transactions WHERE bank_account_id = $2 AND tenant_id = $1 AND status = 'reconciled'`, n},
			{"pending reconciliations", `SELECT count(*) FROM bank.reconciliations WHERE tenant_id = $1 AND state = 'pending' AND $2::uuid IS NOT NULL`, 0},
			{"clearing bookings in the ledger", `SELECT count(*) FROM ledger.intents WHERE tenant_id = $1 AND source = 'bank' AND $2::uuid IS NOT NULL`, n},
			{"clearing bookings that no reconciliation names", `SELECT count(*) FROM ledger.intents i WHERE i.tenant_id = $1 AND i.source = 'bank' AND $2::uuid IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM bank.reconciliations r WHERE r.tenant_id = i.tenant_id AND r.clearing_intent_id = i.id AND r.state = 'active')`, 0},
			{"open items settled in full", `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND account_number = '1200' AND allocated_amount = original_amount AND $2::uuid IS NOT NULL`, n},
		}
		for _, c := range checks {
			if got := count(c.sql, tenant, acc); got != c.want {
				t.Errorf("%s: %d, want %d", c.what, got, c.want)
			}
		}
		var balance decimal.Decimal
		if err := p.owner.QueryRow(ctx, `SELECT COALESCE(sum(CASE WHEN account_debit = '1200' THEN amount ELSE -amount END), 0)
			FROM ledger.journal_events WHERE tenant_id = $1 AND '1200' IN (account_debit, account_credit)`, tenant).Scan(&balance); err != nil {
			t.Fatal(err)
		}
		if !balance.IsZero() {
			t.Errorf("receivables 1200 end at %s, want 0: a clearing booking is missing or doubled", balance)
		}
		// One event per reconciliation: a redelivered or re-published
		// event carries the same message id.
		js, err := jetstream.New(p.nc)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, func() error {
			st, err := js.Stream(ctx, bankv1.StreamEvents)
			if err != nil {
				return err
			}
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(bankv1.EventTransactionReconciled))
			if err != nil {
				return err
			}
			if got := info.State.Subjects[bankv1.EventTransactionReconciled]; got != n {
				return fmt.Errorf("%d transaction_reconciled events, want %d", got, n)
			}
			return nil
		})
	})
}

// camtSum is the sum of a camt file's entry amounts with their signs,
// read from the file by the platform's test generator's layout: every
// Ntry has one Amt and one CdtDbtInd.
func camtSum(t *testing.T, file []byte) decimal.Decimal {
	t.Helper()
	var doc struct {
		Entries []struct {
			Amt string `xml:"Amt"`
			Ind string `xml:"CdtDbtInd"`
		} `xml:"BkToCstmrStmt>Stmt>Ntry"`
	}
	if err := xml.Unmarshal(file, &doc); err != nil {
		t.Fatal(err)
	}
	sum := decimal.Zero
	for _, e := range doc.Entries {
		a := decimal.RequireFromString(e.Amt)
		if e.Ind == "DBIT" {
			a = a.Neg()
		}
		sum = sum.Add(a)
	}
	return sum
}

// bankProcess is the bank service run from its binary, as a deployment
// runs it.
type bankProcess struct {
	bin, log string
	env      []string
	cmd      *exec.Cmd
	p        *platform
}

func newBankProcess(t *testing.T, p *platform) *bankProcess {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bank")
	gobin := "go"
	if g := os.Getenv("GO"); g != "" {
		gobin = g
	}
	if out, err := exec.Command(gobin, "build", "-o", bin, "../../services/bank/cmd/bank").CombinedOutput(); err != nil {
		t.Fatalf("build bank: %v\n%s", err, out)
	}
	b := &bankProcess{bin: bin, log: filepath.Join(dir, "bank.log"), p: p}
	vars := env{
		"DATABASE_URL":         p.dbURL,
		"BANK_IMPORT_WORKERS":  "1",
		"BANK_IMPORT_WAIT":     "1s",
		"BANK_IMPORT_ACK_WAIT": "3s",
		"LOG_FORMAT":           "text",
	}
	for k, v := range p.bus.Env(t, "bank") {
		vars[k] = v
	}
	for k, v := range vars {
		b.env = append(b.env, k+"="+v)
	}
	t.Cleanup(func() {
		if b.cmd != nil && b.cmd.ProcessState == nil {
			_ = b.cmd.Process.Signal(syscall.SIGKILL)
			_ = b.cmd.Wait()
		}
		if t.Failed() {
			if out, err := os.ReadFile(b.log); err == nil {
				t.Logf("bank log:\n%s", tail(string(out), 4000))
			}
		}
	})
	return b
}

// start runs the bank and waits until it answers through the gateway.
func (b *bankProcess) start(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(b.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b.cmd = exec.Command(b.bin)
	b.cmd.Env = b.env
	b.cmd.Stdout, b.cmd.Stderr = f, f
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start bank: %v", err)
	}
	eventually(t, 60*time.Second, func() error {
		if r := b.p.call("GET", "/v1/bank-accounts", b.p.key, nil); r.Status != 200 {
			return fmt.Errorf("bank not answering: %d", r.Status)
		}
		return nil
	})
}

func (b *bankProcess) kill(t *testing.T) {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill bank: %v", err)
	}
	_ = b.cmd.Wait()
}
