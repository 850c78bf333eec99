package gateway

import (
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// openAPIJSON converts the YAML document once at start-up.
func openAPIJSON(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("parse openapi.yaml: %w", err)
	}
	return json.Marshal(v)
}
