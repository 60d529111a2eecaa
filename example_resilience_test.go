package toolsafe_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
)

// A call that needs approval pauses: Call returns *approval.Required, which a
// langchaingo executor returns from the run. Once a person grants it, the
// same call goes through, once.
func ExampleWithApproval() {
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(
		middleware.Func("refund", "Refunds an order.", func(_ context.Context, input string) (string, error) {
			return "refunded " + input, nil
		}),
		toolsafe.WithApproval(grants, approval.ApproveEachAttempt))

	_, err := refund.Call(context.Background(), "A-1001")
	var ar *approval.Required
	if errors.As(err, &ar) {
		fmt.Println("paused:", ar.Tool, ar.Input)
		grants.Grant(ar.Tool, ar.Input)
	}
	out, err := refund.Call(run.Resume(context.Background(), ar), "A-1001")
	fmt.Println(out, err)
	r := refund.Run(context.Background(), "A-1001")
	fmt.Println(r.Status()) // the grant was used up
	// Output:
	// paused: refund A-1001
	// refunded A-1001 <nil>
	// paused
}

// When the primary fails for good, the alternative answers, and the model
// is told where the answer came from.
func ExampleWithFallback() {
	lookup := middleware.Func("lookup_ticket", "Reads a ticket by ID.", func(_ context.Context, id string) (string, error) {
		return "", middleware.NewToolError("ticket %s was not found", id)
	})
	search := toolsafe.Wrap(middleware.Func("search_tickets", "Searches tickets.", func(_ context.Context, q string) (string, error) {
		return "T-1042 matches " + q, nil
	}))
	tool := toolsafe.Wrap(lookup, toolsafe.WithFallback(fallback.To(search)))
	r := tool.Run(context.Background(), "PAY-88")
	fmt.Println(r.Status(), r.Fallback)
	fmt.Println(r.Observation())
	// Output:
	// ok search_tickets
	// (lookup_ticket could not answer, so its fallback tool search_tickets did; this answer may be less fresh or less complete) T-1042 matches PAY-88
}
