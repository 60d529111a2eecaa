package toolcall_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolcall"
)

// described is a tool that describes its own input, as an MCP tool does.
type described struct {
	name   string
	schema string
}

func (d described) Name() string        { return d.name }
func (d described) Description() string { return "A tool with its own schema." }
func (d described) Call(_ context.Context, in string) (string, error) {
	return d.name + " got " + in, nil
}
func (d described) ArgsSchema() json.RawMessage { return json.RawMessage(d.schema) }

func plain(name string) tools.Tool {
	return middleware.Func(name, "A tool of one string.", func(_ context.Context, in string) (string, error) {
		return name + " got " + in, nil
	})
}

const invoiceSchema = `{
	"type": "object",
	"required": ["number"],
	"properties": {
		"number": {"type": "string", "pattern": "^INV-[0-9]+$", "description": "the invoice number"},
		"with_lines": {"type": "boolean"}
	},
	"additionalProperties": false
}`

// openAIName is what OpenAI accepts as a function name.
var openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// metaschemaCheck validates a definition's parameters against the
// meta-schema of the draft the schema names (2020-12 when it names none),
// with the JSON Schema library on its own: an independent check of what
// Definitions produced.
func metaschemaCheck(t *testing.T, params any) {
	t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatalf("the parameters do not marshal: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the parameters are not JSON: %v", err)
	}
	meta := "https://json-schema.org/draft/2020-12/schema"
	if s, ok := doc.(map[string]any)["$schema"].(string); ok {
		meta = s
	}
	sch, err := jsonschema.NewCompiler().Compile(meta)
	if err != nil {
		t.Fatalf("meta-schema %s: %v", meta, err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("the parameters %s break the meta-schema %s: %v", raw, meta, err)
	}
	if typ := doc.(map[string]any)["type"]; typ != "object" {
		t.Errorf(`the parameters' root "type" is %v; OpenAI requires "object"`, typ)
	}
}

func TestDefinitions(t *testing.T) {
	invoice := toolsafe.Wrap(plain("fetch_invoice"), toolsafe.WithArgs(compiled([]byte(invoiceSchema))))
	draft7 := described{name: "lookup-word", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"word":{"type":"string","minLength":1}}}`}
	untyped := described{name: "search", schema: `{"properties":{"q":{"type":"string"}},"required":["q"]}`}
	calculator := plain("calculator")

	defs, err := toolcall.Definitions(invoice, toolsafe.Wrap(draft7), untyped, calculator)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 4 {
		t.Fatalf("%d definitions; want 4", len(defs))
	}
	for _, d := range defs {
		if d.Type != "function" || d.Function == nil {
			t.Fatalf("definition %+v is not a function", d)
		}
		if !openAIName.MatchString(d.Function.Name) {
			t.Errorf("name %q would be refused by OpenAI", d.Function.Name)
		}
		if _, ok := d.Function.Parameters.(map[string]any); !ok {
			t.Errorf("%s: Parameters is a %T; providers such as googleai take only map[string]any", d.Function.Name, d.Function.Parameters)
		}
		metaschemaCheck(t, d.Function.Parameters)
		// The definition survives the trip to an OpenAI request body.
		if _, err := json.Marshal(llms.Tool(d)); err != nil {
			t.Errorf("%s: %v", d.Function.Name, err)
		}
	}

	t.Run("the meta-schema check catches a broken schema", func(t *testing.T) {
		sch, err := jsonschema.NewCompiler().Compile("https://json-schema.org/draft/2020-12/schema")
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(map[string]any{"type": "strin"}); err == nil {
			t.Error(`{"type":"strin"} passed the meta-schema`)
		}
	})
	t.Run("a checked schema is the parameters, whole", func(t *testing.T) {
		var want map[string]any
		if err := json.Unmarshal([]byte(invoiceSchema), &want); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(defs[0].Function.Parameters)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(got, wantJSON) {
			t.Errorf("parameters %s; want %s", got, wantJSON)
		}
		if defs[0].Function.Name != "fetch_invoice" || defs[0].Function.Description != "A tool of one string." {
			t.Errorf("name and description %q, %q", defs[0].Function.Name, defs[0].Function.Description)
		}
	})
	t.Run(`a tool's own schema is forwarded through toolsafe, less its "$schema"`, func(t *testing.T) {
		p := defs[1].Function.Parameters.(map[string]any)
		if _, ok := p["$schema"]; ok || p["properties"] == nil {
			t.Errorf("parameters %v; want the properties without $schema, which strict function calling rejects", p)
		}
	})
	t.Run(`a schema without a root "type" gets "object"`, func(t *testing.T) {
		if p := defs[2].Function.Parameters.(map[string]any); p["type"] != "object" || p["required"] == nil {
			t.Errorf("parameters %v", p)
		}
	})
	t.Run("a tool without a schema takes one string, as langchaingo advertises it", func(t *testing.T) {
		got, _ := json.Marshal(defs[3].Function.Parameters)
		want := `{"properties":{"__arg1":{"title":"__arg1","type":"string"}},"required":["__arg1"],"type":"object"}`
		if string(got) != want {
			t.Errorf("parameters %s; want %s", got, want)
		}
	})
}

func TestDefinitionsRefuse(t *testing.T) {
	cases := []struct {
		name  string
		tools []tools.Tool
		want  []string
	}{
		{"names OpenAI refuses", []tools.Tool{plain("weather.get"), plain("has space"), plain(strings.Repeat("a", 65)), plain("")},
			[]string{`tool "weather.get": the name has '.'`, `tool "has space": the name has ' '`, "is 65 bytes long; function names are at most 64", "a tool has an empty name"}},
		{"names equal but for case", []tools.Tool{plain("Search"), plain("search")},
			[]string{`"Search" and 2 "search" have names that differ only in case`}},
		{"a schema that is not a JSON Schema", []tools.Tool{described{name: "q", schema: `{"type":"object","properties":{"q":{"type":"strin"}}}`}},
			[]string{`tool "q": argschema: the schema is not a valid JSON Schema`}},
		{"a schema that is not JSON", []tools.Tool{described{name: "q", schema: `{"type":`}},
			[]string{`tool "q": argschema: the schema is not JSON`}},
		{"a root that may be null", []tools.Tool{described{name: "q", schema: `{"type":["object","null"]}`}},
			[]string{`tool "q": the schema's root "type" is ["object","null"]; a function's parameters must have "type": "object"`}},
		{"a nil tool", []tools.Tool{plain("ok"), nil}, []string{"tool 2 of 2 is nil"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defs, err := toolcall.Definitions(c.tools...)
			if err == nil {
				t.Fatalf("no error; definitions %+v", defs)
			}
			if defs != nil {
				t.Errorf("definitions %+v along with the error", defs)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// Strict function calling takes a subset of JSON Schema: "$schema" (which
// every TypeScript-SDK MCP server puts in its tools' schemas) and the other
// keywords outside it are stripped at every depth, while a property that
// shares a keyword's name is kept.
func TestDefinitionsStripWhatStrictFunctionCallingRejects(t *testing.T) {
	schema := `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"urn:x","type":"object",
		"properties":{"$schema":{"type":"string"},"not":{"type":"string"},
			"tags":{"type":"array","uniqueItems":true,"items":{"type":"string","$comment":"c"}},
			"kind":{"anyOf":[{"type":"string","not":{"const":"x"}},{"type":"null"}]}},
		"$defs":{"id":{"type":"string","allOf":[{"minLength":1}]}},
		"if":{"required":["tags"]},"then":{"required":["kind"]},
		"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false,"required":["tags"]}`
	defs, err := toolcall.Definitions(described{name: "tagger", schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(defs[0].Function.Parameters)
	want := `{"$defs":{"id":{"type":"string"}},"additionalProperties":false,` +
		`"properties":{"$schema":{"type":"string"},"kind":{"anyOf":[{"type":"string"},{"type":"null"}]},"not":{"type":"string"},` +
		`"tags":{"items":{"type":"string"},"type":"array"}},"required":["tags"],"type":"object"}`
	if string(got) != want {
		t.Errorf("parameters\n%s\nwant\n%s", got, want)
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
