package argschema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

// Regression: a hostile MCP server's schema of 30,000 allOf entries took
// 21 s to compile, and 2,000 nested levels 19 s, ignoring the caller's
// context. Compile refuses such schemas at once, saying which limit.
func TestCompileRefusesSchemasPastItsLimits(t *testing.T) {
	many := `{"type":"object","allOf":[` + strings.Repeat(`{"type":"object"},`, 10000) + `{}]}`
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"properties":{"a":`, 200) + `{}` + strings.Repeat(`}}`, 200) + `}}`
	huge := `{"type":"object","description":"` + strings.Repeat("x", argschema.MaxSize) + `"}`
	for _, tt := range []struct{ name, schema, says string }{
		{"too many subschemas", many, "more than 1024 objects"},
		{"too deep", deep, "nests deeper than 64 levels"},
		{"too large", huge, "more than the 262144 this package accepts"},
		{"a $ref cycle every input meets", `{"$ref":"#"}`, "a $ref cycle that no input can get past"},
		{"a $ref cycle through $defs", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, "a $ref cycle"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := argschema.Compile([]byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Compile: %v; want an error saying %q", err, tt.says)
			}
		})
	}
	// Within the limits, a schema of their size compiles.
	fine := `{"type":"object","allOf":[` + strings.Repeat(`{"type":"object"},`, argschema.MaxNodes-2) + `{}]}`
	if _, err := argschema.Compile([]byte(fine)); err != nil {
		t.Fatalf("a schema of %d objects: %v", argschema.MaxNodes, err)
	}
}

// Regression: a $ref cycle only some inputs meet made every such call
// args-invalid, and showed the model the validator's "both … resolve to …
// causing reference cycle". It is the schema's fault: the call fails
// (tool-failed, not to be repeated), and the model sees no schema text.
func TestARefCycleInTheSchemaIsNotTheInputsFault(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`)
	var ran int
	tool, err := toolsafe.New(middleware.Func("lookup", "", func(context.Context, string) (string, error) {
		ran++
		return "ok", nil
	}), toolsafe.WithArgs(compiled(schema)))
	if err != nil {
		t.Fatal(err)
	}
	if r := tool.Run(context.Background(), `{"b":1}`); r.Status() != "ok" {
		t.Fatalf("an input that does not reach the cycle: %v", r.Kind())
	}
	r := tool.Run(context.Background(), `{"a":1}`)
	if r.Kind() != middleware.KindFailed || r.Failure.Retryable || ran != 1 {
		t.Fatalf("%v (retryable %v), ran %d; want tool-failed, not retryable, the tool not called", r.Kind(), r.Failure.Retryable, ran)
	}
	if strings.Contains(r.Observation(), "resolve") || strings.Contains(r.Observation(), "$ref") || strings.Contains(r.Observation(), "cycle") {
		t.Errorf("the model is shown the schema's internals: %q", r.Observation())
	}
}

// What a schema at each limit costs to compile.
func BenchmarkCompileAtTheLimits(b *testing.B) {
	levels := argschema.MaxDepth/2 - 1 // each level is a properties object and a schema
	for name, schema := range map[string]string{
		"nodes": `{"type":"object","allOf":[` + strings.Repeat(`{"type":"object"},`, argschema.MaxNodes-2) + `{}]}`,
		"depth": strings.Repeat(`{"type":"object","properties":{"a":`, levels) + `{}` + strings.Repeat(`}}`, levels),
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := argschema.Compile([]byte(schema)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// compiled is the compiled form of a schema the test writes itself, as
// toolsafe.WithArgs takes it; a schema that does not compile is the test's
// own mistake.
func compiled(schema []byte) *argschema.Schema {
	s, err := argschema.Compile(schema)
	if err != nil {
		panic(err)
	}
	return s
}
