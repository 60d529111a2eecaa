package toolsafe_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// New reports a configuration mistake as an error up front, naming the tool,
// what is wrong and how to fix it; Wrap would return a tool whose every call
// returns the same error.
func ExampleNew() {
	fetch := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		return `{"status":"paid"}`, nil
	})

	_, err := toolsafe.New(fetch,
		toolsafe.WithTimeout(5*time.Second), toolsafe.WithDeadline(time.Second))
	fmt.Println(err)

	_, err = toolsafe.New(fetch, toolsafe.WithApproval(nil))
	fmt.Println(err)

	_, err = toolsafe.New(toolsafe.Wrap(fetch), toolsafe.WithRetry(policy.Retry{MaxRetries: 3}))
	fmt.Println(errors.Is(err, toolsafe.ErrWrapped), err)

	// A guard is set once: a second WithTimeout (or WithApproval, ...) would
	// silently replace the first, so New refuses it.
	_, err = toolsafe.New(fetch, toolsafe.WithTimeout(2*time.Second), toolsafe.WithTimeout(0))
	fmt.Println(errors.Is(err, toolsafe.ErrConfig), err)
	// Output:
	// toolsafe: tool "fetch_invoice": attempt timeout 5s is longer than the deadline 1s: the deadline would always cut the attempt short; make the timeout shorter or the deadline longer
	// toolsafe: tool "fetch_invoice": the approver is nil: pass an Approver to WithApproval, such as approval.NewGrants()
	// true toolsafe: tool "fetch_invoice": the tool is a *toolsafe.Tool already: wrap the tool inside it once, with all the options, instead of wrapping it again
	// true toolsafe: tool "fetch_invoice": WithTimeout is given twice: each sets the attempt timeout, and the second would silently replace the first's, dropping the limit that holds a tool that ignores its context; give one WithTimeout, with the value you mean
}
