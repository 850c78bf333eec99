package allinone_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// reconFixture is what the happy paths of reconciliation and evidence
// need in a fixture tenant: an invoice (receivable 1000.00 on 1200) that
// many small payments settle in part, a booking already on 1800, open
// transactions for each reconcile case and reconciled ones for each
// unmatch case.
type reconFixture struct {
	invoice, cash                          string
	txItem, txMCP, txBattery, txBooking    string
	txUnmatch, txUnmatchMCP, txUnmatchBatt string
	txBatch, txBatchBattery, txEvidence    string
	txGroup, txGroupMCP, txGroupBattery    string
}

func newReconFixture(t *testing.T, p *platform, f *fixture) *reconFixture {
	t.Helper()
	a := f.admin
	r := &reconFixture{}
	r.invoice = p.book(a, bookingBody("2025-03-14", "Fixture Ausgangsrechnung", bline("1200", "4400", "1000.00", "external_reference", "RE-F"))).IntentID
	r.cash = p.book(a, bookingBody("2025-03-14", "Fixture Bareinzahlung", bline("1800", "2900", "20.00"))).IntentID
	refs := []*string{&r.txItem, &r.txMCP, &r.txBattery, &r.txUnmatch, &r.txUnmatchMCP, &r.txUnmatchBatt, &r.txBatch, &r.txBatchBattery, &r.txEvidence,
		&r.txGroup, &r.txGroupMCP, &r.txGroupBattery}
	var items []any
	for i := range refs {
		items = append(items, map[string]any{"tx_date": "2025-03-20", "amount": json.Number("10.00"), "reference": fmt.Sprintf("Abgleich %d", i), "bank_reference": fmt.Sprintf("ABG-%d", i)})
	}
	items = append(items, map[string]any{"tx_date": "2025-03-20", "amount": json.Number("20.00"), "reference": "Abgleich Kasse", "bank_reference": "ABG-KASSE"})
	p.must(201, "POST", "/v1/bank-transactions", a, map[string]any{"bank_account_id": f.bankAccount, "transactions": items})
	byRef := map[string]string{}
	for _, tx := range p.must(200, "GET", "/v1/bank-transactions?limit=500", a, nil).list("transactions") {
		if ref, ok := tx["reference"].(string); ok {
			byRef[ref] = tx["id"].(string)
		}
	}
	for i, ref := range refs {
		*ref = byRef[fmt.Sprintf("Abgleich %d", i)]
	}
	r.txBooking = byRef["Abgleich Kasse"]
	eventually(t, 20*time.Second, func() error {
		if n := count(t, p.owner, `SELECT count(*) FROM bank.open_items WHERE tenant_id = $1 AND intent_id = $2`, f.tenant, r.invoice); n != 1 {
			return fmt.Errorf("the fixture invoice is not projected yet")
		}
		if n := count(t, p.owner, `SELECT count(*) FROM bank.ledger_bookings WHERE tenant_id = $1 AND intent_id = $2`, f.tenant, r.cash); n != 1 {
			return fmt.Errorf("the fixture cash booking is not projected yet")
		}
		return nil
	})
	for _, tx := range []string{r.txUnmatch, r.txUnmatchMCP, r.txUnmatchBatt} {
		p.must(200, "POST", "/v1/bank-transactions/"+tx+"/reconcile", a, map[string]any{"intent_id": r.invoice})
	}
	return r
}

func init() {
	reconcileBody := func(f *fixture, tx string) happyReq {
		return f.as(happyReq{params: pathID("id", tx), body: map[string]any{"intent_id": f.rec.invoice, "candidate_kind": "open_receivable", "open_item_account": "1200"}})
	}
	pair := func(f *fixture, tx string) happyReq {
		return f.as(happyReq{body: map[string]any{"pairs": []any{map[string]any{"bank_transaction_id": tx, "intent_id": f.rec.invoice, "candidate_kind": "open_receivable"}}}})
	}
	happyCases["reconcileBankTransaction"] = []happyCase{
		{name: "open item", build: func(f *fixture) happyReq { return reconcileBody(f, f.rec.txItem) },
			battery: func(f *fixture) happyReq { return reconcileBody(f, f.rec.txBattery) },
			mcp:     func(f *fixture, args map[string]any) { args["id"] = f.rec.txMCP }},
		{name: "bank booking", build: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.rec.txBooking), body: map[string]any{"intent_id": f.rec.cash, "candidate_kind": "bank_booking"}})
		}},
	}
	happyCases["unmatchBankTransaction"] = []happyCase{{
		build:   func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rec.txUnmatch)}) },
		battery: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rec.txUnmatchBatt)}) },
		mcp:     func(f *fixture, args map[string]any) { args["id"] = f.rec.txUnmatchMCP }}}
	happyCases["batchReconcileBankTransactions"] = []happyCase{{
		build:   func(f *fixture) happyReq { return pair(f, f.rec.txBatch) },
		battery: func(f *fixture) happyReq { return pair(f, f.rec.txBatchBattery) }}}
	group := func(f *fixture, tx string) happyReq {
		return f.as(happyReq{body: map[string]any{"bank_transaction_ids": []any{tx}, "allocations": []any{map[string]any{
			"intent_id": f.rec.invoice, "candidate_kind": "open_receivable", "open_item_account": "1200", "allocated_bank_amount": json.Number("10.00")}}}})
	}
	happyCases["createBankMatchGroup"] = []happyCase{{
		build:   func(f *fixture) happyReq { return group(f, f.rec.txGroup) },
		battery: func(f *fixture) happyReq { return group(f, f.rec.txGroupBattery) },
		mcp:     func(f *fixture, args map[string]any) { args["bank_transaction_ids"] = []any{f.rec.txGroupMCP} }}}
	happyCases["putBankTransactionEvidence"] = []happyCase{
		{name: "eigenbeleg", build: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.rec.txEvidence), example: true})
		}},
		{name: "uploaded document", build: func(f *fixture) happyReq {
			return f.as(happyReq{params: pathID("id", f.rec.txEvidence), body: map[string]any{"evidence_type": "uploaded_document", "document_id": f.doc,
				"title": "Rechnung", "metadata": map[string]any{"quelle": "upload"}}})
		}},
	}
	happyCases["getBankTransactionEvidence"] = []happyCase{
		{name: "none", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.bankTx)}) }},
		{name: "stored", build: func(f *fixture) happyReq { return f.as(happyReq{params: pathID("id", f.rec.txEvidence)}) }},
	}
}
