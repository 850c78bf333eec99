package identity_test

import (
	"testing"

	"github.com/ledgerplatform/ledger/pkg/errs"
	"github.com/ledgerplatform/ledger/services/identity/internal/identitytest"
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

// resetMails lists the password reset mails in the outbox, oldest first.
func resetMails(t *testing.T, e *identitytest.Env) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range e.Payloads(t, "cmd.mail.v1.send") {
		if m["template"] == "password_reset" {
			out = append(out, m)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
