package bankd_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

// TestSuggestionsRoute: the route checks its query itself (the gateway's
// boundary is not the only fence), answers an array, empty while nothing
// is open, and another tenant's bank account is NOT_FOUND.
func TestSuggestionsRoute(t *testing.T) {
	t.Parallel()
	h, _ := start(t)
	as := claims(uuid.NewString())
	acc := newAccount(t, h, as, "DE89370400440532013000", "1800")
	sub := bankv1.SubjectSuggestions
	for _, q := range []url.Values{{}, {"bank_account_id": {"nope"}}, {"bank_account_id": {acc}, "period": {"2026-3"}},
		{"bank_account_id": {acc}, "limit": {"0"}}, {"bank_account_id": {acc}, "limit": {"1001"}}} {
		h.Fails(sub, testkit.Rq{As: as, Query: q}, 400, errs.InvalidInput)
	}
	h.Fails(sub, testkit.Rq{As: claims(uuid.NewString()), Query: url.Values{"bank_account_id": {acc}}}, 404, errs.NotFound)

	var none []bankv1.Suggestion
	h.OK(sub, testkit.Rq{As: as, Query: url.Values{"bank_account_id": {acc}}}, 200, &none)
	if none == nil || len(none) != 0 {
		t.Fatalf("nothing open: %v", none)
	}
	h.OK(bankv1.SubjectTransactionsImport, testkit.Rq{As: as, Body: importBody(acc,
		item{"tx_date": "2026-03-06", "amount": json.Number("119.00"), "reference": "RE-2026-001"})}, 201, nil)
	// No open items are projected in this test: nothing to suggest yet.
	var got []bankv1.Suggestion
	h.OK(sub, testkit.Rq{As: as, Query: url.Values{"bank_account_id": {acc}, "period": {"2026-03"}, "limit": {"5"}}}, 200, &got)
	if len(got) != 0 {
		t.Fatalf("suggestions without open items: %v", got)
	}
}
