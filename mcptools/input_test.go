package mcptools_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// confirmingServer has delete_alert, which asks "Delete alert A-7 for
// good?" (an InputRequiredResult) and deletes only when the answer
// accepts with confirm true; it counts the deletions.
func confirmingServer(t *testing.T) (*mcp.ClientSession, *atomic.Int32) {
	t.Helper()
	var deleted atomic.Int32
	server := mcp.NewServer(&mcp.Implementation{Name: "alerts", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{Name: "delete_alert", Description: "Deletes an alert.", InputSchema: objectSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			answer, _ := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			switch {
			case answer == nil:
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
					Message: "Delete alert A-7 for good?",
					RequestedSchema: map[string]any{"type": "object", "required": []string{"confirm"},
						"properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}},
				}}, RequestState: "alert A-7"}, nil
			case answer.Action == "accept" && answer.Content["confirm"] == true && req.Params.RequestState == "alert A-7":
				deleted.Add(1)
				return text("Alert A-7 deleted."), nil
			}
			r := text("Alert A-7 was kept: the user said no.")
			r.IsError = true
			return r, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	served, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"},
		&mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	session, err := client.Connect(context.Background(), mcptools.Transport(ct), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close(); _ = served.Wait() })
	return session, &deleted
}

// Issue 27: an input request during a call (InputRequiredResult) becomes a
// toolsafe pause whose request, in the approvals inbox, shows the server's
// question; the person's answer resumes the call, which the server then
// completes once. Denied, the server hears no, and its reply is the
// model's.
func TestAnInputRequestPausesForAPersonAndTheAnswerResumesTheCall(t *testing.T) {
	for _, approve := range []bool{true, false} {
		name := map[bool]string{true: "approved", false: "denied"}[approve]
		t.Run(name, func(t *testing.T) {
			session, deleted := confirmingServer(t)
			grants := approval.NewGrants()
			ts, err := mcptools.List(context.Background(), session, mcptools.WithInputApprover(grants))
			if err != nil {
				t.Fatal(err)
			}
			tool := toolsafe.Wrap(ts[0], toolsafe.WithRetry(fast()))
			// A ledger of the test's own: the process's default one outlives
			// the test, and -count=2 would resume the first run.
			runID := "delete-alert-" + name
			ctx := run.With(context.Background(), runID, run.NewMemoryLedger())
			_, err = tool.Call(ctx, `{"id":"A-7"}`)
			var ar *approval.Required
			if !errors.As(err, &ar) || deleted.Load() != 0 {
				t.Fatalf("%v, %d deleted; want a pause, nothing deleted", err, deleted.Load())
			}
			requests := grants.Requests()
			if len(requests) != 1 || requests[0].Call.Tool != "delete_alert (input requested)" ||
				!strings.Contains(requests[0].Call.Input, `"question":"Delete alert A-7 for good?"`) ||
				!strings.Contains(requests[0].Call.Input, `"approving_answers":{"confirm":true}`) {
				t.Fatalf("the inbox lists %+v; want the server's question", requests)
			}
			if ar.Tool != requests[0].Call.Tool || ar.Input != requests[0].Call.Input || ar.RunID != runID {
				t.Errorf("the pause %+v is not the request the inbox shows", ar)
			}
			if approve {
				grants.Grant(ar.Tool, ar.Input)
			} else {
				grants.Deny(ar.Tool, ar.Input)
			}
			r := tool.Run(run.Resume(ctx, ar), `{"id":"A-7"}`)
			switch {
			case approve && (r.Output != "Alert A-7 deleted." || deleted.Load() != 1):
				t.Errorf("%s, %d deleted; want the alert deleted once", r.Observation(), deleted.Load())
			case !approve && (r.Kind() != middleware.KindToolError || !strings.Contains(r.Observation(), "the user said no") || deleted.Load() != 0):
				t.Errorf("%s (%s), %d deleted; want the server's reply to a no, nothing deleted", r.Observation(), r.Kind(), deleted.Load())
			}
			if len(grants.Requests()) != 0 {
				t.Errorf("the inbox still lists %+v", grants.Requests())
			}
		})
	}
}

// A question approving cannot answer (a form with a field to fill in) is
// told to the model as needing a person's input, even with an approver:
// nothing is put in the inbox that a decision could not answer.
func TestAnInputRequestApprovingCannotAnswerIsToldAsNeedingAPerson(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "v1"}, nil)
	rawTool(server, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"city": &mcp.ElicitParams{Message: "Which city?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	served, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"},
		&mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	session, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close(); _ = served.Wait() })
	grants := approval.NewGrants()
	ts, err := mcptools.List(context.Background(), session, mcptools.WithInputApprover(grants))
	if err != nil {
		t.Fatal(err)
	}
	r := toolsafe.Wrap(ts[0]).Run(context.Background(), `{}`)
	if r.Kind() != middleware.KindToolError || !strings.Contains(r.Observation(), "needs a person's input") || len(grants.Requests()) != 0 {
		t.Errorf("%s (%s), %d in the inbox; want the model told it needs a person, nothing in the inbox", r.Observation(), r.Kind(), len(grants.Requests()))
	}
}
