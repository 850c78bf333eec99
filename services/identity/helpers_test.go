package identity_test

import (
	"testing"

	"github.com/ledgerplatform/ledger/pkg/errs"
)

// wantCode fails unless err carries the machine code; code "" wants no error.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	switch {
	case code == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case code != "" && !errs.Is(err, code):
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

func ptr[T any](v T) *T { return &v }
