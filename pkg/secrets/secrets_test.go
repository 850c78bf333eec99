package secrets_test

import (
	"testing"

	"github.com/ledgerplatform/ledger/pkg/secrets"
)

func TestCheckNotPlaceholder(t *testing.T) {
	tests := []struct {
		value string
		ok    bool
	}{
		{"", true},
		{"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", true},
		{"postgres://identity:s3cr3t-Pa55@db.internal:5432/ledger", true},
		{"CHANGE-ME-to-a-random-value-of-32-or-more-characters", false},
		{"changeme0123456789012345678901234567", false},
		{"Change_Me", false},
		{"postgres://ledger:CHANGE-ME@postgres.example.internal:5432/ledger", false},
		{"my-PLACEHOLDER-key-0123456789abcdef0123", false},
		{"replace-me", false},
	}
	for _, tt := range tests {
		err := secrets.CheckNotPlaceholder("BOOTSTRAP_API_KEY", tt.value)
		if (err == nil) != tt.ok {
			t.Errorf("CheckNotPlaceholder(%q) = %v, want ok %v", tt.value, err, tt.ok)
		}
	}
}
