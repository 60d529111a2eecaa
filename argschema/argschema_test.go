package argschema_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

const searchSchema = `{
  "type": "object",
  "required": ["query"],
  "additionalProperties": false,
  "properties": {
    "query":  {"type": "string", "minLength": 1},
    "limit":  {"type": "integer", "minimum": 1, "maximum": 50},
    "status": {"enum": ["open", "paid", "overdue"]},
    "email":  {"type": "string", "format": "email"},
    "number": {"type": "string", "pattern": "^INV-[0-9]+$"},
    "filter": {"type": "object", "required": ["since"], "properties": {"since": {"type": "string", "format": "date"}}},
    "ids":    {"type": "array", "maxItems": 2, "items": {"type": "integer"}}
  }
}`

func TestCheck(t *testing.T) {
	s, err := argschema.Compile([]byte(searchSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		input string
		want  string // "" for valid
	}{
		{"a valid input passes", `{"query":"late invoices","limit":10}`, ""},
		{"every argument may be checked at once", `{"query":"x","status":"paid","email":"a@b.example","number":"INV-7","filter":{"since":"2025-01-31"},"ids":[1,2]}`, ""},
		{"a missing required argument is named", `{"limit":10}`, `argument "query" is missing`},
		{"a wrong type says what it must be", `{"query":"x","limit":"ten"}`, `argument "limit" must be an integer, not a string`},
		{"a fraction is not an integer", `{"query":"x","limit":2.5}`, `argument "limit" must be an integer, not a number`},
		{"a number above the maximum", `{"query":"x","limit":500}`, `argument "limit" must be at most 50`},
		{"a number below the minimum", `{"query":"x","limit":0}`, `argument "limit" must be at least 1`},
		{"a value outside the enum lists the allowed ones", `{"query":"x","status":"late"}`, `argument "status" must be one of "open", "paid", "overdue"`},
		{"an unknown argument is named", `{"query":"x","qurey":"y"}`, `argument "qurey" is not an argument of this tool`},
		{"an empty string is too short", `{"query":""}`, `argument "query" must be at least 1 character long`},
		{"format is asserted", `{"query":"x","email":"not-an-email"}`, `argument "email" must be a valid email`},
		{"a pattern is quoted", `{"query":"x","number":"7"}`, `argument "number" must match the pattern "^INV-[0-9]+$"`},
		{"nested arguments get a dotted name", `{"query":"x","filter":{}}`, `argument "filter.since" is missing`},
		{"array items get an index", `{"query":"x","ids":[1,"two"]}`, `argument "ids[1]" must be an integer, not a string`},
		{"too many items", `{"query":"x","ids":[1,2,3]}`, `argument "ids" must have at most 2 items`},
		{"all problems are listed", `{"limit":"ten","status":"late"}`, `argument "limit" must be an integer, not a string; argument "query" is missing; argument "status" must be one of`},
		{"text that is not JSON", `late invoices`, `it is not JSON; send the arguments as one JSON object, such as {"query": …}`},
		{"JSON that is not an object", `"late invoices"`, `it is a string; send the arguments as one JSON object, such as {"query": …}`},
		{"an array", `[1]`, `it is an array`},
		{"trailing text after the object", `{"query":"x"} and more`, `it is not JSON`},
		{"an empty input", ``, `it is not JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Check(tt.input)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check(%s) = %q; want nil", tt.input, err)
			case tt.want != "" && err == nil:
				t.Errorf("Check(%s) = nil; want %q", tt.input, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("Check(%s) = %q; want it to contain %q", tt.input, err, tt.want)
			}
		})
	}
}

func TestCompileRejects(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"text that is not JSON", `{type: object}`, "the schema is not JSON"},
		{"a schema that is not an object", `true`, "the schema is a boolean, not a JSON object"},
		{"a root type other than object", `{"type":"string"}`, `the schema's type is "string"`},
		{"a root type list without object", `{"type":["string","number"]}`, `its type must be "object"`},
		{"an invalid keyword value", `{"type":"object","required":"query"}`, "not a valid JSON Schema"},
		{"an unknown type", `{"type":"object","properties":{"q":{"type":"text"}}}`, "not a valid JSON Schema"},
		{"a $ref to a file", `{"type":"object","properties":{"q":{"$ref":"file:///etc/passwd"}}}`, "only references inside the schema"},
		{"a $ref to a URL", `{"$ref":"https://example.com/schema.json"}`, "only references inside the schema"},
		{"an invalid regular expression", `{"type":"object","properties":{"q":{"pattern":"("}}}`, "not a valid JSON Schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := argschema.Compile([]byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile(%s) = %v; want an error containing %q", tt.schema, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "toolsafe.invalid") {
				t.Errorf("the error shows the internal URL: %v", err)
			}
		})
	}
}

func TestRefsInsideTheSchemaWork(t *testing.T) {
	s, err := argschema.Compile([]byte(`{"type":"object","properties":{"since":{"$ref":"#/$defs/date"}},"$defs":{"date":{"type":"string","format":"date"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(`{"since":"yesterday"}`); err == nil || !strings.Contains(err.Error(), `argument "since" must be a valid date`) {
		t.Errorf("Check = %v", err)
	}
}

func TestMiddlewareMakesNoCallOnInvalidInput(t *testing.T) {
	mw, err := argschema.Validate([]byte(searchSchema))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	tool := mw(middleware.Func("search", "searches", func(context.Context, string) (string, error) {
		calls++
		return "found", nil
	}))

	ctx, call := call.Begin(context.Background(), "search", "", "", nil)
	_, err = tool.Call(ctx, `{"limit":"ten"}`)
	var ie *argschema.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("Call error = %v; want an *argschema.InputError", err)
	}
	f := call.Result(ctx, "", err).Failure
	if f.Kind != middleware.KindArgsInvalid || f.Attempts != 0 || f.Tool != "search" || f.Retryable {
		t.Errorf("Failure = %+v; want args-invalid for search, 0 attempts, not retryable", f)
	}
	if want := `search was not called: the input is invalid: argument "limit" must be an integer, not a string; argument "query" is missing. Fix the input and call it again.`; f.Error() != want {
		t.Errorf("the model sees %q; want %q", f.Error(), want)
	}
	if calls != 0 {
		t.Errorf("the tool was called %d times on invalid input", calls)
	}

	out, err := tool.Call(context.Background(), `{"query":"late invoices"}`)
	if out != "found" || err != nil || calls != 1 {
		t.Errorf("a valid input: %q, %v, %d calls; want found, nil, 1", out, err, calls)
	}
}

func TestManyProblemsAreCounted(t *testing.T) {
	s, err := argschema.Compile([]byte(`{"type":"object","required":["a","b","c","d","e","f","g","h"]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Check(`{}`)
	if err == nil || !strings.HasSuffix(err.Error(), `argument "f" is missing; and 2 more problems`) {
		t.Errorf("Check = %v", err)
	}
}
