package approval_test

import (
	"context"
	"encoding/json"
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
		toolsafe.WithApproval(grants, approval.ApproveEachAttempt))

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

// A pause travels to another process (a queue, a database) in its wire
// form, and comes back with run.Resume there; Err travels as its text.
func ExampleRequired_MarshalJSON() {
	ar := &approval.Required{Tool: "refund", CallID: "call_1", Input: `{"order":"A-1001"}`,
		Reason: "no approval has been granted for this input", Attempt: 1, IdempotencyKey: "key-1",
		Err: errors.New("grants store unreachable")}
	data, _ := json.Marshal(ar)
	fmt.Println(string(data))

	var back approval.Required
	err := json.Unmarshal(data, &back)
	fmt.Println(err, back.Tool, back.IdempotencyKey, back.Err)
	// Output:
	// {"tool":"refund","call_id":"call_1","input":"{\"order\":\"A-1001\"}","reason":"no approval has been granted for this input","attempt":1,"idempotency_key":"key-1","error":"grants store unreachable"}
	// <nil> refund key-1 grants store unreachable
}
