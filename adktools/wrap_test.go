package adktools_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/adk/v2/tool/geminitool"
	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile"
)

// Issue 31, item 5: Wrap took an adktools.FunctionTool, so every caller
// wrote an unchecked type assertion on the tool.Tool functiontool.New
// returns. It takes that tool.Tool now, as New and WrapAll do.
func TestWrapTakesTheToolThatFunctiontoolNewReturns(t *testing.T) {
	tries := 0
	var lookup tool.Tool // what functiontool.New returns, as it returns it
	lookup, err := functiontool.New(functiontool.Config{Name: "fetch_invoice", Description: "Fetches one invoice."},
		func(_ agent.Context, a invoiceArgs) (map[string]any, error) {
			if tries++; tries == 1 {
				return nil, middleware.Transient(errors.New("billing API busy"))
			}
			return map[string]any{"number": a.Number, "status": "paid"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var results []middleware.Result
	invoice := adktools.Wrap(lookup,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: policy.Constant(0)}),
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) { results = append(results, r) }))
	if err := invoice.Err(); err != nil {
		t.Fatalf("Err() = %v; want nil for a function tool", err)
	}
	m := script(calls(call("call-1", "fetch_invoice", map[string]any{"number": "INV-1001"})), say("INV-1001 is paid."))
	newLoop(t, m, invoice).run(t, context.Background(), "s1", ask("Is INV-1001 paid?"))
	if len(results) != 1 || results[0].Status() != "ok" || results[0].Attempts != 2 {
		t.Fatalf("results %+v; want one call, ok after 2 attempts", results)
	}
	if got := m.response(t, "call-1"); got["status"] != "paid" {
		t.Errorf("the model got %v; want the invoice", got)
	}

	f, err := policyfile.Parse([]byte("version: 1\ntools:\n  fetch_invoice: {retries: 1, backoff: {base: 1ms}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := adktools.WrapAll(f, lookup)
	if err != nil || len(ts) != 1 || ts[0].Name() != "fetch_invoice" {
		t.Fatalf("WrapAll(the tool.Tool) = %v, %v; want the wrapped fetch_invoice", ts, err)
	}
}

// Issue 31, item 5: a tool Wrap cannot guard (one the model runs itself,
// as geminitool's do) is refused with ErrNotFunctionTool, an error that
// names the tool and says what to do; a nil tool is refused too. Neither
// panics, in New, Wrap, WrapAll or the methods of what Wrap returns.
func TestAToolThatIsNotAFunctionToolIsRefusedWithAClearError(t *testing.T) {
	search := geminitool.New("google_search", "Searches the web.", &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
	if _, err := adktools.New(search); !errors.Is(err, adktools.ErrNotFunctionTool) ||
		!strings.Contains(err.Error(), `"google_search"`) || !strings.Contains(err.Error(), "llmagent.Config.Tools as it is") {
		t.Errorf("New(geminitool) error %v; want ErrNotFunctionTool naming google_search and saying to give it to the agent as it is", err)
	}
	f, err := policyfile.Parse([]byte("version: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adktools.WrapAll(f, search); !errors.Is(err, adktools.ErrNotFunctionTool) {
		t.Errorf("WrapAll(geminitool) error %v; want ErrNotFunctionTool", err)
	}

	w := adktools.Wrap(search)
	if !errors.Is(w.Err(), adktools.ErrNotFunctionTool) {
		t.Fatalf("Wrap(geminitool).Err() = %v; want ErrNotFunctionTool", w.Err())
	}
	if w.Name() != "google_search" || w.Declaration() == nil || w.Declaration().Name != "google_search" {
		t.Errorf("Wrap(geminitool): name %q, declaration %+v; want google_search's, so the model's call gets the error", w.Name(), w.Declaration())
	}
	m := script(calls(call("call-1", "google_search", map[string]any{})), say("I cannot search."))
	newLoop(t, m, w).run(t, context.Background(), "s1", ask("Search for toolsafe."))
	if got, _ := m.response(t, "call-1")["error"].(string); !strings.Contains(got, "not a function tool") {
		t.Errorf("the model got %q; want Wrap's error", got)
	}

	var typedNil *adktools.Tool
	for name, nilTool := range map[string]tool.Tool{"nil": nil, "a nil *adktools.Tool": typedNil} {
		if _, err := adktools.New(nilTool); err == nil || !strings.Contains(err.Error(), "nil") {
			t.Errorf("New(%s) error %v; want one saying the tool is nil", name, err)
		}
		w := adktools.Wrap(nilTool)
		if w.Err() == nil || w.Name() != "" || w.Description() != "" || w.Declaration() != nil {
			t.Errorf("Wrap(%s): Err %v, name %q, declaration %v; want the error and nothing else", name, w.Err(), w.Name(), w.Declaration())
		}
		if _, err := adktools.WrapAll(f, nilTool); err == nil {
			t.Errorf("WrapAll(%s) took it", name)
		}
	}
}
