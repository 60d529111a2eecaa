package argschema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// resourceURL is the made-up address the schema is compiled under. It only
// serves to resolve "$ref"s that point inside the schema.
const resourceURL = "https://toolsafe.invalid/args-schema.json"

// Schema is a compiled JSON Schema for a tool's arguments. It is safe for
// concurrent use and never changes after Compile.
type Schema struct {
	schema  *jsonschema.Schema
	example string // the shape of a good input, for the model: {"query": …}
	source  []byte // the schema as compiled, compacted (see Source)
}

// The limits of a schema Compile accepts. A tool's argument schema is a
// few kilobytes; these bound what a hostile one (from an MCP server, say)
// can cost to compile, which grows quickly with its nesting.
const (
	// MaxSize is the largest schema, in bytes: 256 KiB.
	MaxSize = 256 << 10
	// MaxDepth is how deeply the schema's JSON may nest objects and arrays.
	MaxDepth = 64
	// MaxNodes is how many JSON objects (each a possible subschema) the
	// schema may hold.
	MaxNodes = 1024
)

// Compile compiles schema, a JSON Schema as JSON text (see the package
// documentation for the drafts and what "format" and "$ref" do). It returns
// an error when schema is not JSON, is larger than MaxSize, nests deeper
// than MaxDepth or holds more than MaxNodes objects, is not a JSON object,
// has a root "type" that excludes "object", refers to another document,
// has a "$ref" cycle that any input meets, or is not a valid JSON Schema.
func Compile(schema []byte) (*Schema, error) {
	if len(schema) > MaxSize {
		return nil, fmt.Errorf("argschema: the schema is %d bytes, more than the %d this package accepts: a tool's argument schema is a few kilobytes", len(schema), MaxSize)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("argschema: the schema is not JSON: %w", err)
	}
	if err := checkShape(doc); err != nil {
		return nil, err
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("argschema: the schema is %s, not a JSON object such as {\"type\": \"object\", \"properties\": {...}}", jsonType(doc))
	}
	if t, ok := root["type"]; ok && !allowsObject(t) {
		return nil, fmt.Errorf("argschema: the schema's type is %s: a tool's arguments are a JSON object, so its type must be \"object\" (or be left out)", compactJSON(t))
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, fmt.Errorf("argschema: %w", err)
	}
	compiled, err := c.Compile(resourceURL)
	if err != nil {
		return nil, fmt.Errorf("argschema: the schema is not a valid JSON Schema: %s", schemaError(err))
	}
	// A "$ref" that leads back to itself without a step into the input
	// fails every input: say so now, not to the model at each call.
	var ve *jsonschema.ValidationError
	if err := compiled.Validate(map[string]any{}); errors.As(err, &ve) {
		if c := refCycle(ve); c != nil {
			return nil, fmt.Errorf("argschema: the schema's %s and %s both lead to %s, a $ref cycle that no input can get past", c.KeywordLocation1, c.KeywordLocation2, c.URL)
		}
	}
	return &Schema{schema: compiled, example: example(root), source: compact(schema)}, nil
}

// checkShape refuses a schema document that nests deeper than MaxDepth or
// holds more than MaxNodes objects.
func checkShape(doc any) error {
	nodes := 0
	type item struct {
		v     any
		depth int
	}
	stack := []item{{doc, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var kids []any
		switch v := it.v.(type) {
		case map[string]any:
			if nodes++; nodes > MaxNodes {
				return fmt.Errorf("argschema: the schema holds more than %d objects: a tool's argument schema needs far fewer", MaxNodes)
			}
			for _, k := range v {
				kids = append(kids, k)
			}
		case []any:
			kids = v
		default:
			continue
		}
		if it.depth > MaxDepth {
			return fmt.Errorf("argschema: the schema nests deeper than %d levels: flatten it, or name shared parts in \"$defs\" and refer to them with \"$ref\"", MaxDepth)
		}
		for _, k := range kids {
			stack = append(stack, item{k, it.depth + 1})
		}
	}
	return nil
}

// refCycle returns the $ref cycle among e and its causes, if any.
func refCycle(e *jsonschema.ValidationError) *kind.RefCycle {
	if c, ok := e.ErrorKind.(*kind.RefCycle); ok {
		return c
	}
	for _, cause := range e.Causes {
		if c := refCycle(cause); c != nil {
			return c
		}
	}
	return nil
}

// Validate compiles schema (see Compile) and returns the middleware that
// checks each call's input against it. A valid input goes on unchanged; an
// invalid one ends the call with an *InputError (kind args-invalid, no
// attempt made) naming each wrong argument, and the tool is not called. It returns Compile's error when
// schema is invalid.
func Validate(schema []byte) (middleware.Middleware, error) {
	s, err := Compile(schema)
	if err != nil {
		return nil, err
	}
	return s.Middleware(), nil
}

// Middleware returns the middleware that checks each call's input against
// s, as Validate describes. Safe for concurrent use.
func (s *Schema) Middleware() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx) // a tool that checks its own input (an MCP tool) behind WithArgs checks once
			if !c.Checked(s, input) {
				if err := s.Check(input); err != nil {
					return "", err
				}
				c.MarkChecked(s, input)
			}
			return next.Call(ctx, input)
		})
	}
}

// Check reports whether input, a tool's arguments as a JSON object, is
// valid. It returns nil when it is, and otherwise an *InputError whose text
// is safe to show the model: which argument is wrong and how. An input
// whose keys repeat or differ only in case is invalid whatever the schema
// says (see canonical.JSON): the schema and the tool could read it
// differently.
func (s *Schema) Check(input string) error {
	if _, err := canonical.JSON(input); err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(input))
	if err != nil {
		return &InputError{Problems: []string{"it is not JSON; send the arguments as one JSON object, such as " + s.example}}
	}
	if _, ok := v.(map[string]any); !ok {
		return &InputError{Problems: []string{fmt.Sprintf("it is %s; send the arguments as one JSON object, such as %s", jsonType(v), s.example)}}
	}
	err = s.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &InputError{Problems: []string{"it does not match the tool's argument schema"}}
	}
	if c := refCycle(ve); c != nil {
		// The schema's fault, not the input's: nothing the model can fix.
		return middleware.Permanent(fmt.Errorf("argschema: the schema's %s and %s both lead to %s, a $ref cycle", c.KeywordLocation1, c.KeywordLocation2, c.URL))
	}
	return &InputError{Problems: describe(ve)}
}

// InputError is an input that does not match the schema: a
// middleware.ArgsError, whose Problems name the arguments and say what is
// wrong, and never hold more than a short quote of the input.
type InputError = middleware.ArgsError

// refuseLoader refuses every document but the schema itself: a schema from
// a config file must not read files or reach the network.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref to %s: only references inside the schema (such as #/$defs/name) are allowed", url)
}

func allowsObject(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return true // not a valid type keyword: the compiler reports it
}

// schemaError is the text of a compile error without the made-up URL; for
// a schema that breaks the metaschema, the keywords at fault and why.
func schemaError(err error) string {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		var leaves []string
		metaLeaves(ve, &leaves)
		if len(leaves) > 0 {
			if len(leaves) > 3 {
				leaves = leaves[:3]
			}
			return strings.Join(leaves, "; ")
		}
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) && le.Err != nil {
		err = le.Err
	}
	s := err.Error()
	s = strings.ReplaceAll(s, resourceURL+"#", "#")
	s = strings.ReplaceAll(s, resourceURL, "the schema")
	return strings.Join(strings.Fields(s), " ")
}

// example returns the shape of a good input for the model: the required
// properties (or the first properties) of the root schema, such as
// {"query": …, "limit": …}.
func example(root map[string]any) string {
	var names []string
	if req, ok := root["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
	}
	if len(names) == 0 {
		if props, ok := root["properties"].(map[string]any); ok {
			for name := range props {
				names = append(names, name)
			}
			slices.Sort(names)
		}
	}
	if len(names) > 4 {
		names = names[:4]
	}
	if len(names) == 0 {
		return "{}"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = quoteName(n) + ": …"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// quoteName quotes an argument name as JSON does, so the model sees the
// exact key to send.
func quoteName(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// metaLeaves collects, for each innermost metaschema error, "at
// /properties/q/type: got string, want array".
func metaLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			metaLeaves(c, out)
		}
		return
	}
	loc := "/" + strings.Join(e.InstanceLocation, "/")
	msg := fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(english))
	if !slices.Contains(*out, msg) {
		*out = append(*out, msg)
	}
}
