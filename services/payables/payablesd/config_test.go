package payablesd_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/services/payables/payablesd"
)

func TestExtractConfig(t *testing.T) {
	def := payablesd.ExtractSettings{Workers: 1, AckWait: 2 * time.Minute, Wait: 25 * time.Second, RetryDelay: 2 * time.Second}
	tests := []struct {
		env  map[string]string
		want payablesd.ExtractSettings
		bad  bool
	}{
		{env: nil, want: def},
		{env: map[string]string{"PAYABLES_EXTRACT_WORKERS": "0", "PAYABLES_EXTRACT_ACK_WAIT": "5m", "PAYABLES_EXTRACT_WAIT": "3s"},
			want: payablesd.ExtractSettings{Workers: 0, AckWait: 5 * time.Minute, Wait: 3 * time.Second, RetryDelay: 2 * time.Second}},
		{env: map[string]string{"PAYABLES_EXTRACT_WORKERS": "-1"}, bad: true},
		{env: map[string]string{"PAYABLES_EXTRACT_WORKERS": "65"}, bad: true},
		{env: map[string]string{"PAYABLES_EXTRACT_WORKERS": "two"}, bad: true},
		{env: map[string]string{"PAYABLES_EXTRACT_ACK_WAIT": "1s"}, bad: true},
		{env: map[string]string{"PAYABLES_EXTRACT_ACK_WAIT": "2h"}, bad: true},
		{env: map[string]string{"PAYABLES_EXTRACT_WAIT": "30s"}, bad: true},
		{env: map[string]string{"PAYABLES_EXTRACT_WAIT": "0s"}, bad: true},
	}
	for _, tt := range tests {
		got, err := payablesd.ExtractConfig(func(k string) string { return tt.env[k] })
		if tt.bad {
			if err == nil {
				t.Errorf("%v: no error", tt.env)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tt.env, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.env, diff)
		}
	}
	for v, want := range map[string]bool{"": true, "on": true, "off": false} {
		if got, err := payablesd.APIConfig(func(string) string { return v }); err != nil || got != want {
			t.Errorf("PAYABLES_API=%q: %v %v", v, got, err)
		}
	}
	if _, err := payablesd.APIConfig(func(string) string { return "no" }); err == nil {
		t.Error("PAYABLES_API=no accepted")
	}
}
