package errs

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		code string
		want int
	}{
		{InvalidInput, http.StatusBadRequest},
		{Unauthenticated, http.StatusUnauthorized},
		{Forbidden, http.StatusForbidden},
		{NotFound, http.StatusNotFound},
		{PeriodAlreadyLocked, http.StatusConflict},
		{IdempotencyKeyReused, http.StatusUnprocessableEntity},
		{IdempotencyKeyInProgress, http.StatusConflict},
		{RateLimited, http.StatusTooManyRequests},
		{OCRFailed, http.StatusInternalServerError},
		{"SOMETHING_UNKNOWN", http.StatusInternalServerError},
	}
	for _, tt := range tests {
		if got := Status(tt.code); got != tt.want {
			t.Errorf("Status(%q) = %d, want %d", tt.code, got, tt.want)
		}
	}
}

func TestPublicHidesInternals(t *testing.T) {
	wrapped := Wrap("store.CreateUser", fmt.Errorf("pq: relation users does not exist"))
	code, msg, _ := Public(wrapped)
	if diff := cmp.Diff([]string{Internal, "internal error"}, []string{code, msg}); diff != "" {
		t.Fatalf("Public(internal) mismatch (-want +got):\n%s", diff)
	}
	e := Invalid("bad", Field("email", "required"))
	code, msg, details := Public(Wrap("op", e))
	if diff := cmp.Diff([]any{InvalidInput, "bad", []Detail{{Field: "email", Issue: "required"}}}, []any{code, msg, details}); diff != "" {
		t.Fatalf("Public(invalid) mismatch (-want +got):\n%s", diff)
	}
	if !errors.Is(Wrap("op", e), e) || !Is(Wrap("op", e), InvalidInput) {
		t.Fatal("wrapped error lost its identity")
	}
}
