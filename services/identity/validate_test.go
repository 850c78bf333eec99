package identity

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts/identityv1"
	"github.com/ledgerplatform/ledger/pkg/errs"
)

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	s := &Service{hashing: make(chan struct{}, 1)}
	ctx := context.Background()
	h, err := s.hashPassword(ctx, "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q is not argon2id in PHC format with m=19456,t=2,p=1", h)
	}
	h2, _ := s.hashPassword(ctx, "correct horse battery staple")
	if h == h2 {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	for pw, want := range map[string]bool{"correct horse battery staple": true, "correct horse battery stapler": false, "": false} {
		if got, err := s.checkPassword(ctx, h, pw); err != nil || got != want {
			t.Errorf("checkPassword(%q) = %v, %v; want %v", pw, got, err, want)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$a2V5", "$argon2id$v=18$m=1,t=1,p=1$c2FsdA$a2V5", "$argon2id$v=19$m=1,t=1,p=1$!!$a2V5", "$argon2id$v=19$m=1,t=1,p=1$c2FsdA$"} {
		if _, err := s.checkPassword(ctx, bad, "x"); err == nil {
			t.Errorf("checkPassword accepted malformed hash %q", bad)
		}
	}
}

func TestValidEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"anna@acme.example", true},
		{"anna.b+tag@sub.acme.de", true},
		{"", false},
		{"anna", false},
		{"anna@localhost", false},
		{"anna@acme.", false},
		{"Anna <anna@acme.example>", false},
		{"an na@acme.example", false},
		{strings.Repeat("a", 250) + "@x.de", false},
	}
	for _, tt := range tests {
		if got := validEmail(tt.in); got != tt.want {
			t.Errorf("validEmail(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestTenantPatchCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		patch TenantPatch
		want  []errs.Detail
	}{
		{"valid", TenantPatch{CompanyName: ptr("Acme GmbH"), VATID: ptr("de 123 456 789"), FiscalYearStartMonth: ptr(7),
			DATEVConsultantNumber: ptr("1234567"), DATEVClientNumber: ptr("1"), Address: &identityv1.Address{Country: "de"}}, nil},
		{"clearing optional fields", TenantPatch{VATID: ptr(""), DATEVConsultantNumber: ptr(""), DATEVClientNumber: ptr("")}, nil},
		{"foreign VAT ID", TenantPatch{VATID: ptr("ATU12345678")}, nil},
		{"empty company name", TenantPatch{CompanyName: ptr("  ")}, []errs.Detail{{Field: "company_name", Issue: "required"}}},
		{"long company name", TenantPatch{CompanyName: ptr(strings.Repeat("x", 256))}, []errs.Detail{{Field: "company_name", Issue: "must have at most 255 characters"}}},
		{"German VAT ID too short", TenantPatch{VATID: ptr("DE12345678")}, []errs.Detail{{Field: "vat_id", Issue: "a German VAT ID is DE followed by 9 digits"}}},
		{"tax id too long", TenantPatch{TaxID: ptr(strings.Repeat("1", 21))}, []errs.Detail{{Field: "tax_id", Issue: "must have at most 20 characters"}}},
		{"month 0 and 13", TenantPatch{FiscalYearStartMonth: ptr(13)}, []errs.Detail{{Field: "fiscal_year_start_month", Issue: "must be from 1 to 12"}}},
		{"DATEV numbers", TenantPatch{DATEVConsultantNumber: ptr("123"), DATEVClientNumber: ptr("12a")}, []errs.Detail{
			{Field: "datev_consultant_number", Issue: "must be 4 to 7 digits"},
			{Field: "datev_client_number", Issue: "must be 1 to 5 digits"},
		}},
		{"country", TenantPatch{Address: &identityv1.Address{Country: "Germany"}}, []errs.Detail{{Field: "address.country", Issue: "must be an ISO 3166-1 alpha-2 code such as DE"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.patch
			p.normalize()
			var got problems
			p.check(&got)
			if diff := cmp.Diff(tt.want, []errs.Detail(got)); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidRedirectURI(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"https://app.example/callback":         true,
		"http://localhost:8080/cb":             true,
		"http://127.0.0.1/cb":                  true,
		"http://app.example/cb":                false,
		"https://app.example/cb#frag":          false,
		"https://user@app.example/cb":          false,
		"/relative":                            false,
		"javascript:alert(1)":                  false,
		"https://" + strings.Repeat("a", 2000): false,
	}
	for in, want := range tests {
		if got := validRedirectURI(in); got != want {
			t.Errorf("validRedirectURI(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestAuditQueryParse(t *testing.T) {
	t.Parallel()
	day := func(s string) *time.Time { d, _ := time.Parse(time.DateOnly, s); return &d }
	tests := []struct {
		name    string
		q       AuditQuery
		want    AuditFilter
		details []errs.Detail
	}{
		{"defaults", AuditQuery{}, AuditFilter{Page: Page{Limit: 100}}, nil},
		{"dates include the whole to day", AuditQuery{From: "2025-01-01", To: "2025-01-31", Status: "403", Actor: "key:x", PageQuery: PageQuery{Limit: "500", Offset: "10"}},
			AuditFilter{From: day("2025-01-01"), To: day("2025-02-01"), Status: ptr(403), Actor: "key:x", Page: Page{Limit: 500, Offset: 10}}, nil},
		{"RFC 3339", AuditQuery{From: "2025-01-01T10:00:00Z"},
			AuditFilter{From: ptr(time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)), Page: Page{Limit: 100}}, nil},
		{"bad values", AuditQuery{From: "yesterday", Status: "abc", PageQuery: PageQuery{Limit: "0", Offset: "-1"}}, AuditFilter{}, []errs.Detail{
			{Field: "limit", Issue: "must be an integer from 1 to 500"},
			{Field: "offset", Issue: "must be an integer of at least 0"},
			{Field: "from", Issue: "must be an RFC 3339 time or a YYYY-MM-DD date"},
			{Field: "status", Issue: "must be an HTTP status code"},
		}},
		{"limit too large", AuditQuery{PageQuery: PageQuery{Limit: "501"}}, AuditFilter{}, []errs.Detail{{Field: "limit", Issue: "must be an integer from 1 to 500"}}},
		{"to before from", AuditQuery{From: "2025-02-01", To: "2025-01-01"}, AuditFilter{}, []errs.Detail{{Field: "to", Issue: "must be after from"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.q.parse()
			if tt.details != nil {
				e := errs.As(err)
				if e == nil || e.Code != errs.InvalidInput {
					t.Fatalf("parse() error = %v, want INVALID_INPUT", err)
				}
				if diff := cmp.Diff(tt.details, e.Details); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckBootstrapKey(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"lgr_" + strings.Repeat("k", 28):       true,
		strings.Repeat("k", 31):                false,
		"lgr_" + strings.Repeat("k", 27) + " ": false,
		"aaaaaaaaaa.bbbbbbbbbbbb.cccccccccccc": false,
		// Placeholders, such as deploy/k8s ships, are refused.
		"CHANGE-ME-to-a-random-value-of-32-or-more-characters": false,
		"changeme-changeme-changeme-changeme":                  false,
		"an-example-key-0123456789abcdef0123":                  false,
		"placeholder0123456789abcdef0123456789":                false,
	}
	for k, ok := range tests {
		if err := CheckBootstrapKey(k); (err == nil) != ok {
			t.Errorf("CheckBootstrapKey(%q) = %v, want ok=%v", k, err, ok)
		}
	}
}

func TestIsJWT(t *testing.T) {
	t.Parallel()
	if !isJWT("a.b.c") || isJWT(newRawKey()) || isJWT("a.b") {
		t.Error("isJWT tells session tokens from keys by their two dots")
	}
	k := newRawKey()
	if !strings.HasPrefix(k, KeyPrefix) || len(k) != len(KeyPrefix)+43 {
		t.Errorf("raw key %q: want lgr_ and 43 base64url characters", k)
	}
}
