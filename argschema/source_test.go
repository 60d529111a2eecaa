package argschema_test

import (
	"fmt"
	"testing"

	"github.com/toolsafe/toolsafe/argschema"
)

func TestSourceIsTheCompiledSchemaCompacted(t *testing.T) {
	s, err := argschema.Compile([]byte("{\n  \"type\": \"object\",\n  \"required\": [\"q\"]\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(s.Source()), `{"type":"object","required":["q"]}`; got != want {
		t.Errorf("Source %s; want %s", got, want)
	}
	var nilSchema *argschema.Schema
	if got := nilSchema.Source(); got != nil {
		t.Errorf("a nil Schema's Source is %s; want nil", got)
	}
}

// The schema a check was compiled from can be given to a model as a
// function's parameters.
func ExampleSchema_Source() {
	s, err := argschema.Compile([]byte(`{
		"type": "object",
		"properties": {"city": {"type": "string"}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(s.Source()))
	// Output: {"type":"object","properties":{"city":{"type":"string"}}}
}
