//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

// schemaTool is a tool that describes its input, as an MCP tool does.
type schemaTool struct {
	schema json.RawMessage
}

func (schemaTool) Name() string                                 { return "lookup" }
func (schemaTool) Description() string                          { return "Looks a word up." }
func (schemaTool) Call(context.Context, string) (string, error) { return "ok", nil }
func (s schemaTool) ArgsSchema() json.RawMessage                { return s.schema }

func TestArgsSchema(t *testing.T) {
	own := json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}}}`)
	given := `{"type":"object","required":["word"]}`
	plain := middleware.Func("plain", "no schema", func(context.Context, string) (string, error) { return "", nil })

	t.Run("a wrapped tool's own schema is forwarded", func(t *testing.T) {
		got := toolsafe.Wrap(schemaTool{schema: own}).ArgsSchema()
		if string(got) != string(own) {
			t.Errorf("ArgsSchema %s; want %s", got, own)
		}
	})
	t.Run("the schema toolsafe checks wins over the tool's own", func(t *testing.T) {
		got := toolsafe.Wrap(schemaTool{schema: own}, toolsafe.WithArgsSchema([]byte(given))).ArgsSchema()
		if string(got) != given {
			t.Errorf("ArgsSchema %s; want %s", got, given)
		}
		s, err := argschema.Compile([]byte(given))
		if err != nil {
			t.Fatal(err)
		}
		if got := toolsafe.Wrap(plain, toolsafe.WithArgs(s)).ArgsSchema(); string(got) != given {
			t.Errorf("with WithArgs, ArgsSchema %s; want %s", got, given)
		}
	})
	t.Run("a schema removed by an option is not reported", func(t *testing.T) {
		w := toolsafe.Wrap(plain, toolsafe.WithArgsSchema(nil))
		if w.Err() != nil {
			t.Fatal(w.Err())
		}
		if got := w.ArgsSchema(); got != nil {
			t.Errorf("ArgsSchema %s; want nil", got)
		}
	})
	t.Run("a tool without a schema, a misconfigured one and a nil one have none", func(t *testing.T) {
		if got := toolsafe.Wrap(plain).ArgsSchema(); got != nil {
			t.Errorf("plain tool: %s", got)
		}
		if got := toolsafe.Wrap(schemaTool{schema: own}, toolsafe.WithTimeout(-1)).ArgsSchema(); got != nil {
			t.Errorf("misconfigured tool: %s", got)
		}
		var nilTool *toolsafe.Tool
		if got := nilTool.ArgsSchema(); got != nil {
			t.Errorf("nil tool: %s", got)
		}
	})
}
