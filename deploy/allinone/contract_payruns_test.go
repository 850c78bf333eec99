package allinone_test

import (
	"strconv"
	"testing"
	"time"
)

// runsFixture is what the happy paths of payment runs need in a fixture
// tenant: open invoices of the fixture's vendor for the creations and a
// run in the status each state change starts from, a second one for its
// MCP run.
type runsFixture struct {
	invoice, invoiceMCP   string                           // open, in no run
	draft, draftMCP       string                           // approve
	approved              string                           // export (the MCP run exports it again)
	exported, exportedMCP string                           // complete
	cancel, cancelMCP     string                           // cancel
	completed             [2]struct{ run, invoice string } // a transfer returned, REST and MCP
	date                  string
}

func newRunsFixture(t *testing.T, p *platform, f *fixture) *runsFixture {
	t.Helper()
	a := f.admin
	r := &runsFixture{date: time.Now().UTC().AddDate(0, 0, 30).Format(time.DateOnly)}
	inv := func(n string) string {
		return p.postedInvoice(f.tenant, runInvoice{vendor: f.vendor, number: "ZL-" + f.label + "-" + n, gross: "119.00", rate: "2", until: time.Now().UTC().AddDate(0, 0, 60)})
	}
	var last string // the invoice of the last run
	run := func(n string, steps ...string) string {
		last = inv(n)
		id := p.must(201, "POST", "/v1/payment-runs", a, map[string]any{"bank_account_id": f.bankAccount, "execution_date": r.date,
			"invoice_ids": []string{last}, "label": "Fixture " + n}).str("id")
		for _, s := range steps {
			p.must(200, "POST", "/v1/payment-runs/"+id+"/"+s, a, nil)
		}
		return id
	}
	r.invoice, r.invoiceMCP = inv("happy"), inv("mcp")
	r.draft, r.draftMCP = run("draft"), run("draft-mcp")
	r.approved = run("approved", "approve")
	r.exported, r.exportedMCP = run("exported", "approve", "export"), run("exported-mcp", "approve", "export")
	r.cancel, r.cancelMCP = run("cancel"), run("cancel-mcp", "approve")
	for i := range r.completed {
		r.completed[i].run = run("completed-"+strconv.Itoa(i), "approve", "export", "complete")
		r.completed[i].invoice = last
	}
	return r
}

func init() {
	runID := func(pick func(*runsFixture) string) func(f *fixture) happyReq {
		return func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", pick(f.runs))}) }
	}
	mcpID := func(pick func(*runsFixture) string) func(f *fixture, args map[string]any) {
		return func(f *fixture, args map[string]any) { args["id"] = pick(f.runs) }
	}
	cases := map[string][]happyCase{
		"listPaymentRuns": {
			{name: "filtered", build: func(f *fixture) happyReq { return getAs(f, qs("status", "draft", "limit", "10", "offset", "0")) }},
			{name: "default", build: func(f *fixture) happyReq { return getAs(f, nil) }},
		},
		"createPaymentRun": {{build: func(f *fixture) happyReq {
			return f.as(happyReq{body: map[string]any{"bank_account_id": f.bankAccount, "execution_date": f.runs.date,
				"invoice_ids": []string{f.runs.invoice}, "label": "Zahllauf " + f.label}})
		}, mcp: func(f *fixture, args map[string]any) { args["invoice_ids"] = []string{f.runs.invoiceMCP} }}},
		"getPaymentRun":      {{build: runID(func(r *runsFixture) string { return r.exported })}},
		"approvePaymentRun":  {{build: runID(func(r *runsFixture) string { return r.draft }), mcp: mcpID(func(r *runsFixture) string { return r.draftMCP })}},
		"exportPaymentRun":   {{build: runID(func(r *runsFixture) string { return r.approved })}},
		"completePaymentRun": {{build: runID(func(r *runsFixture) string { return r.exported }), mcp: mcpID(func(r *runsFixture) string { return r.exportedMCP })}},
		"cancelPaymentRun":   {{build: runID(func(r *runsFixture) string { return r.cancel }), mcp: mcpID(func(r *runsFixture) string { return r.cancelMCP })}},
		"returnPaymentRunTransfer": {{build: func(f *fixture) happyReq {
			c := f.runs.completed[0]
			return f.as(happyReq{params: pathID("id", c.run), body: map[string]any{"invoice_id": c.invoice, "reason": "AC04 Konto erloschen"}})
		}, mcp: func(f *fixture, args map[string]any) {
			c := f.runs.completed[1]
			args["id"], args["invoice_id"], args["reason"] = c.run, c.invoice, "AC01 IBAN fehlerhaft"
		}}},
	}
	for op, cs := range cases {
		happyCases[op] = cs
	}
}
