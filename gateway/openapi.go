package gateway

import (
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ledgerplatform/ledger/contracts"
	"github.com/ledgerplatform/ledger/gateway/contract"
)

// loadContract compiles the document once per process: every gateway (tests
// start many) checks requests against the same operations.
var loadContract = sync.OnceValues(func() (*contract.Doc, error) { return contract.Load(contracts.OpenAPI) })

// openAPIJSON converts the YAML document once at start-up.
func openAPIJSON(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("parse openapi.yaml: %w", err)
	}
	return json.Marshal(v)
}
