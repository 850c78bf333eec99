package contract

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a JSON schema outside the document, checked as the document's
// request schemas are: the input schemas the MCP tools publish.
type Schema struct{ s *jsonschema.Schema }

// CompileSchema compiles schema, given as Go values (maps, slices,
// strings), under name.
func CompileSchema(name string, schema any) (*Schema, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "date", Validate: validDate})
	url := "urn:ledger:schema:" + name
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	return &Schema{s}, nil
}

// Check validates v, a value DecodeJSON returned; a refusal is
// INVALID_INPUT with a detail per problem, named by its path.
func (s *Schema) Check(v any) error {
	if err := s.s.Validate(v); err != nil {
		return refusal("invalid arguments", validationDetails(err, ""))
	}
	return nil
}
