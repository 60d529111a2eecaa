package approval_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
)

// A person approves through Grants: the program lists what waits, grants
// it, and the next call with the same input goes through, once.
func ExampleGrants() {
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(
		middleware.Func("refund", "refunds an order", func(_ context.Context, input string) (string, error) {
			return "refunded " + input, nil
		}),
		toolsafe.WithApproval(grants), toolsafe.WithDestructive())

	_, err := refund.Call(context.Background(), `{"order":"A-1001"}`)
	var ar *approval.Required
	fmt.Println(errors.As(err, &ar), ar.Tool, ar.Input)
	for _, p := range grants.Pending() {
		fmt.Println("waiting:", p.Tool, p.Input)
	}

	grants.Grant("refund", `{ "order": "A-1001" }`) // the same JSON
	out, err := refund.Call(context.Background(), `{"order":"A-1001"}`)
	fmt.Println(out, err)
	_, err = refund.Call(context.Background(), `{"order":"A-1001"}`)
	fmt.Println(errors.As(err, &ar)) // the grant was used up
	// Output:
	// true refund {"order":"A-1001"}
	// waiting: refund {"order":"A-1001"}
	// refunded {"order":"A-1001"} <nil>
	// true
}
