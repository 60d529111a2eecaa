package test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestAPersonsChangesAreCheckedAgainstTheToolsSchemaBeforeTheyRun(t *testing.T) {
	schema, err := argschema.Compile([]byte(`{"type":"object","properties":{"order":{"type":"string"},"amount_eur":{"type":"number","maximum":100}},"required":["order","amount_eur"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	grants := approval.NewGrants()
	var ran []string
	refund := middleware.Func("refund", "refunds an order", func(_ context.Context, input string) (string, error) {
		ran = append(ran, input)
		return "refunded", nil
	})
	tool := toolsafe.Wrap(refund, toolsafe.WithApproval(grants), toolsafe.WithArgs(schema))
	// What a person may write with toolsafe-approvals -input, or any
	// program calling Reply: the store cannot know the tool's schema.
	r := pauseAndEdit(t, grants, tool, "run-schema", `{"order":"A-1001","amount_eur":25}`, `{"order":"A-1001","amount_eur":"2500","note":1}`)
	if len(ran) != 0 {
		t.Fatalf("the tool ran with %q, which its own schema refuses (%s)", ran, r.Observation())
	}
	if r.Kind() != middleware.KindArgsInvalid || !strings.HasPrefix(r.Observation(), "A person changed this call") {
		t.Fatalf("kind %s; the model reads %q", r.Kind(), r.Observation())
	}
	t.Log(r.Observation())
}
