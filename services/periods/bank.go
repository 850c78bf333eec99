package periods

import (
	"context"
	"time"

	"github.com/ledgerplatform/ledger/contracts/bankv1"
	"github.com/ledgerplatform/ledger/contracts/periodsv1"
)

// Bank is what the service needs of the bank: the state of the bank
// transactions booked in a date range, for the closing checklist.
type Bank interface {
	// PeriodStatus counts the tenant's bank transactions booked from from
	// to to (YYYY-MM-DD, inclusive) by state.
	PeriodStatus(ctx context.Context, tenant, from, to string) (bankv1.PeriodStatus, error)
}

// WithBank lets the closing task "bank reconciliation" ask the bank; without
// it the task is skipped.
func WithBank(b Bank) Option { return func(s *Service) { s.bank = b } }

// bankTask evaluates the computed task TaskBankReconciled of period p: done
// when every bank transaction booked in the month is reconciled or
// evidenced, with the counts.
func (s *Service) bankTask(ctx context.Context, p periodsv1.Period, task func(key, title, status, detail string) periodsv1.Task) periodsv1.Task {
	const title = "Bank accounts reconciled"
	k, ok := ParsePeriod(p.Period)
	switch {
	case s.bank == nil:
		return task(TaskBankReconciled, title, periodsv1.TaskSkipped, "available once the bank service exists")
	case !ok || k.IsAdjustment():
		return task(TaskBankReconciled, title, periodsv1.TaskSkipped, "an adjustment period has no bank transactions")
	}
	first := time.Date(k.Year, time.Month(k.Month), 1, 0, 0, 0, 0, time.UTC)
	from, to := first.Format(time.DateOnly), first.AddDate(0, 1, -1).Format(time.DateOnly)
	st, err := s.bank.PeriodStatus(ctx, p.TenantID, from, to)
	switch {
	case err != nil:
		return task(TaskBankReconciled, title, periodsv1.TaskOpen, "the bank transactions could not be counted right now; try again")
	case st.BankAccounts == 0:
		return task(TaskBankReconciled, title, periodsv1.TaskSkipped, "the tenant has no bank accounts")
	case st.Total == 0:
		return task(TaskBankReconciled, title, periodsv1.TaskDone, "no bank transactions booked in the period")
	case st.Open > 0:
		return task(TaskBankReconciled, title, periodsv1.TaskOpen, itoa(st.Open)+" of "+itoa(st.Total)+" bank transaction(s) of the period open ("+
			itoa(st.Reconciled)+" reconciled, "+itoa(st.Evidenced)+" evidenced): GET /v1/bank-transactions?status=open&from="+from+"&to="+to)
	}
	return task(TaskBankReconciled, title, periodsv1.TaskDone, "all "+itoa(st.Total)+" bank transaction(s) of the period reconciled or evidenced ("+
		itoa(st.Reconciled)+" reconciled, "+itoa(st.Evidenced)+" evidenced)")
}
