package gateway

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerplatform/ledger/contracts"
)

// TestOpenAPIMatchesRoutes fails when a route exists in routes.go but not in
// contracts/openapi.yaml, or the other way round.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	b, err := openAPIJSON(contracts.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi version %q, want 3.1.x", doc.OpenAPI)
	}
	methods := regexp.MustCompile(`^(get|put|post|patch|delete)$`)
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if methods.MatchString(m) {
				documented = append(documented, strings.ToUpper(m)+" "+p)
			}
		}
	}
	var routed []string
	for _, rt := range Routes {
		routed = append(routed, rt.Method+" "+rt.Pattern)
	}
	slices.Sort(documented)
	slices.Sort(routed)
	if diff := cmp.Diff(routed, documented); diff != "" {
		t.Fatalf("routes.go (-) and openapi.yaml (+) differ:\n%s", diff)
	}
}
