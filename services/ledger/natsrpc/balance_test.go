package natsrpc_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/contracts/money"
	"github.com/ledgerplatform/ledger/pkg/auth"
	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	"github.com/ledgerplatform/ledger/services/ledger"
)

// TestAccountBalanceForTheBank: the bank reads an account's balance at the
// end of a day under its own principal (debit minus credit over every
// entry booked up to it); nobody else may.
func TestAccountBalanceForTheBank(t *testing.T) {
	t.Parallel()
	c := newChartRPC(t)
	for _, b := range []ledger.Booking{
		{BookingDate: "2024-01-10", Description: "Kunde zahlt", Lines: []ledger.Line{{AccountDebit: "1800", AccountCredit: "1200", Amount: money.MustParse("119.00")}}},
		{BookingDate: "2024-02-05", Description: "Bankgebühr", Lines: []ledger.Line{{AccountDebit: "6855", AccountCredit: "1800", Amount: money.MustParse("10.50")}}},
	} {
		c.h.OK(ledgerv1.SubjectBookingsCreate, testkit.Rq{As: c.claims, Body: b}, 201, nil)
	}
	subject := ledgerv1.SubjectAccountBalance
	as := &auth.Claims{TenantID: c.claims.TenantID}
	for _, tc := range []struct {
		asOf, balance string
		entries       int64
	}{{"2024-01-09", "0.00", 0}, {"2024-01-10", "119.00", 1}, {"2024-02-04", "119.00", 1}, {"2024-02-05", "108.50", 2}, {"", "108.50", 2}} {
		var b ledgerv1.AccountBalance
		c.h.OK(subject, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountBalanceGet{Number: "1800", AsOf: tc.asOf}}, 200, &b)
		if b.Number != "1800" || b.Balance.StringFixed(2) != tc.balance || b.EntryCount != tc.entries || (tc.asOf != "") != (b.AsOf != nil) {
			t.Errorf("as of %q: %+v, want %s over %d entries", tc.asOf, b, tc.balance, tc.entries)
		}
	}
	c.h.Fails(subject, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountBalanceGet{Number: "1899"}}, 404, errs.NotFound)
	c.h.Fails(subject, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountBalanceGet{Number: "18a"}}, 400, errs.InvalidInput)
	c.h.Fails(subject, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountBalanceGet{Number: "1800", AsOf: "31.01.2024"}}, 400, errs.InvalidInput)
	c.h.Fails(subject, testkit.Rq{Service: "bank", As: as, Body: ledgerv1.AccountBalanceGet{TenantID: uuid.NewString(), Number: "1800"}}, 400, errs.InvalidInput)
	c.h.Fails(subject, testkit.Rq{As: c.claims, Body: ledgerv1.AccountBalanceGet{Number: "1800"}}, 403, errs.Forbidden)
	c.h.Fails(subject, testkit.Rq{Service: "periods", As: as, Body: ledgerv1.AccountBalanceGet{Number: "1800"}}, 403, errs.Forbidden)
}
