package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// pauseChildEnv makes the test binary the resuming process of
// TestAPauseIsCarriedToAnotherProcess.
const pauseChildEnv = "TOOLSAFE_TEST_RESUME_CHILD"

// Regression (issue "exactly once under store faults", item 12): a pause
// could not be carried to another process: approval.Required with Err set
// marshalled to "Err":{} and did not unmarshal. Its wire form has stable
// lower-case names and Err's text; this process pauses (its approver
// fails), writes the pause to a pipe, and a second process (this test
// binary again) reads it, grants it, and resumes it with run.Resume: the
// call runs there once, under the paused call's idempotency key and ID.
func TestAPauseIsCarriedToAnotherProcess(t *testing.T) {
	if os.Getenv(pauseChildEnv) == "1" {
		resumeFromStdin(t)
		return
	}
	down := errors.New("grants store: dial tcp 10.0.0.7:6379: connection refused")
	refund := toolsafe.Wrap(keyedRefund(), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithApproval(approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
			return approval.Pending, down
		})))
	_, err := refund.Call(context.Background(), `{"order":"A-1001","amount_eur":5}`)
	var ar *approval.Required
	if !errors.As(err, &ar) || !errors.Is(err, down) || ar.IdempotencyKey == "" || ar.CallID == "" {
		t.Fatalf("the call: %v; want a pause carrying the approver's error, a key and a call ID", err)
	}
	data, err := json.Marshal(ar)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tool", "call_id", "input", "reason", "attempt", "idempotency_key", "error"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("the wire form %s has no %q", data, k)
		}
	}
	if fields["error"] != down.Error() || len(fields) != 7 {
		t.Errorf("the wire form %s; want the seven fields set, the error as its text", data)
	}

	child := exec.Command(os.Args[0], "-test.run=^TestAPauseIsCarriedToAnotherProcess$", "-test.count=1")
	child.Env = append(os.Environ(), pauseChildEnv+"=1")
	child.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	child.Stdout, child.Stderr = &out, &stderr
	if err := child.Run(); err != nil {
		t.Fatalf("the resuming process: %v\n%s%s", err, out.String(), stderr.String())
	}
	want := fmt.Sprintf("resumed: refunded, key %s, call %s, after %q\n", ar.IdempotencyKey, ar.CallID, down.Error())
	if got, _, _ := strings.Cut(out.String(), "PASS"); got != want {
		t.Errorf("the resuming process said\n %q\nwant\n %q", got, want)
	}
}

// keyedRefund is a refund that answers with the idempotency key and the
// call ID it was called with.
func keyedRefund() tools.Tool {
	return middleware.Func("refund", "refunds an order", func(ctx context.Context, _ string) (string, error) {
		return fmt.Sprintf("refunded, key %s, call %s", middleware.IdempotencyKey(ctx), middleware.CallID(ctx)), nil
	})
}

// resumeFromStdin is the second process: it reads the pause, grants it,
// resumes it and prints what the tool answered.
func resumeFromStdin(t *testing.T) {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		t.Fatal(err)
	}
	var ar approval.Required
	if err := json.Unmarshal(data, &ar); err != nil {
		t.Fatalf("the pause %s: %v", data, err)
	}
	grants := approval.NewGrants()
	grants.Grant(ar.Tool, ar.Input)
	refund := toolsafe.Wrap(keyedRefund(), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithApproval(grants))
	out, err := refund.Call(run.Resume(context.Background(), &ar), ar.Input)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("resumed: %s, after %q\n", out, ar.Err)
}
