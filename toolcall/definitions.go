package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/internal/typednil"
)

// Schemer is a tool that describes its input with a JSON Schema; see
// argschema.Schemer. *toolsafe.Tool implements it, and so do the tools of an
// MCP server (module github.com/toolsafe/toolsafe/mcptools).
type Schemer = argschema.Schemer

// MaxNameLength is the longest function name Definitions accepts, in
// bytes: OpenAI's limit.
const MaxNameLength = 64

// Definitions returns the function definitions to give a model with
// llms.WithTools, one per tool in the order given: the tool's name,
// description and JSON Schema (its ArgsSchema, root type "object"), less the
// keywords OpenAI's strict function calling rejects ($schema, $id, allOf,
// not, if/then/else, patternProperties, ...); toolsafe still checks input
// against the whole schema. A tool with no schema takes one "__arg1" string.
// It refuses, naming every problem, a nil tool, a name OpenAI rejects (1 to
// 64 of [A-Za-z0-9_-]), names equal but for case, and an invalid schema.
func Definitions(ts ...tools.Tool) ([]llms.Tool, error) {
	var problems []error
	if err := toolsafe.Tools(ts).Check(); err != nil {
		problems = append(problems, err) // nil tools, names that collide
	}
	defs := make([]llms.Tool, 0, len(ts))
	for _, t := range ts {
		if typednil.Is(t) {
			continue
		}
		name := t.Name()
		if err := checkName(name); err != nil {
			problems = append(problems, err)
		}
		params, err := parameters(t)
		if err != nil {
			problems = append(problems, fmt.Errorf("tool %q: %w", name, err))
			continue
		}
		defs = append(defs, llms.Tool{
			Type: "function",
			Function: &llms.FunctionDefinition{
				Name:        name,
				Description: t.Description(),
				Parameters:  params,
			},
		})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("toolcall: %w", errors.Join(problems...))
	}
	return defs, nil
}

// checkName reports a name that OpenAI would refuse as a function name.
func checkName(name string) error {
	if name == "" {
		return errors.New("a tool has an empty name")
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("tool %q: the name is %d bytes long; function names are at most %d", name, len(name), MaxNameLength)
	}
	for _, r := range name {
		if !nameRune(r) {
			return fmt.Errorf("tool %q: the name has %q; function names are made of ASCII letters, digits, \"_\" and \"-\" only", name, r)
		}
	}
	return nil
}

func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// schemaOf returns t's JSON Schema, or nil when it has none.
func schemaOf(t tools.Tool) json.RawMessage {
	s, ok := t.(Schemer)
	if !ok || typednil.Is(s) {
		return nil
	}
	if raw := s.ArgsSchema(); len(bytes.TrimSpace(raw)) > 0 {
		return raw
	}
	return nil
}

// parameters returns the Parameters of t's definition.
func parameters(t tools.Tool) (map[string]any, error) {
	raw := schemaOf(t)
	if raw == nil {
		return stringArgument(), nil
	}
	if _, err := argschema.Compile(raw); err != nil {
		return nil, err
	}
	var params map[string]any
	if err := json.Unmarshal(raw, &params); err != nil {
		// Compile accepted it, so it is an object; this is a number too
		// large for a float64 and the like.
		return nil, fmt.Errorf("the schema cannot be decoded: %w", err)
	}
	switch typ, ok := params["type"]; {
	case !ok:
		params["type"] = "object"
	case typ != "object":
		return nil, fmt.Errorf(`the schema's root "type" is %s; a function's parameters must have "type": "object"`, compactJSON(typ))
	}
	strict(params)
	return params, nil
}

// unsupported are the JSON Schema keywords outside the subset OpenAI's
// structured outputs (strict function calling) documents as supported: the
// meta keywords, and the applicators and assertions it does not take. Each
// one only narrows what a schema accepts (or says nothing), so without them
// the model sees a looser schema; toolsafe still checks each input against
// the whole one (argschema).
var unsupported = []string{
	"$schema", "$id", "$comment",
	"allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
	"patternProperties", "unevaluatedProperties", "unevaluatedItems",
	"contains", "minContains", "maxContains", "uniqueItems",
}

// strict removes the unsupported keywords from schema and from every
// schema inside it (under properties, $defs, definitions, items,
// prefixItems, anyOf, oneOf and additionalProperties), never a property
// that happens to share a keyword's name.
func strict(schema map[string]any) {
	for _, k := range unsupported {
		delete(schema, k)
	}
	for _, k := range []string{"properties", "$defs", "definitions"} {
		if m, ok := schema[k].(map[string]any); ok {
			for _, sub := range m {
				strictAny(sub)
			}
		}
	}
	for _, k := range []string{"items", "prefixItems", "anyOf", "oneOf", "additionalProperties"} {
		strictAny(schema[k])
	}
}

// strictAny applies strict to v when it is a schema, or to each schema of
// v when it is a list of them.
func strictAny(v any) {
	switch v := v.(type) {
	case map[string]any:
		strict(v)
	case []any:
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				strict(m)
			}
		}
	}
}

// arg1 is the name of the one string argument langchaingo's agents
// advertise for a tool.
const arg1 = "__arg1"

// stringArgument is the parameters of a tool without a schema, the same as
// langchaingo's OpenAI-functions agent advertises for every tool.
func stringArgument() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			arg1: map[string]any{"title": arg1, "type": "string"},
		},
		"required": []any{arg1},
	}
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
