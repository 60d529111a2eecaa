package policyfile_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

func mustParse(t *testing.T, yaml string) *policyfile.File {
	t.Helper()
	cfg, err := policyfile.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestWrapAllGivesEachToolItsPolicies(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	defer srv.Close()
	srv.Always(billing.InvoicePath("INV-2001"), toolsafetest.Reset())
	fetch := billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient())
	// lookup calls the same upstream under another name; the file does not
	// name it, so it gets the defaults.
	lookup := middleware.Func("lookup", "looks an invoice up", fetch.Call)

	cfg := mustParse(t, `
defaults: {retries: 1, backoff: {base: 1ms}}
tools:
  fetch_invoice: {retries: 3, backoff: {base: 1ms, multiplier: 2}}
`)
	wrapped, err := cfg.WrapAll(fetch, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(wrapped) != 2 || wrapped[0].Name() != "fetch_invoice" || wrapped[1].Name() != "lookup" {
		t.Fatalf("WrapAll returned %v; want fetch_invoice, lookup in the order given", names(wrapped))
	}
	tests := []struct {
		tool     tools.Tool
		attempts int
	}{
		{wrapped[0], 4}, // retries: 3 from its entry
		{wrapped[1], 2}, // retries: 1 from the defaults
	}
	for _, tt := range tests {
		t.Run(tt.tool.Name()+" makes the attempts of its policy", func(t *testing.T) {
			before := srv.Requests("")
			r := tt.tool.(*toolsafe.Tool).Run(context.Background(), `{"number":"INV-2001"}`)
			if r.Failure == nil || r.Failure.Kind != middleware.KindFailed {
				t.Fatalf("Run = %+v; want tool-failed", r)
			}
			if r.Attempts != tt.attempts || srv.Requests("")-before != tt.attempts {
				t.Errorf("%d attempts, %d requests upstream; want %d of each", r.Attempts, srv.Requests("")-before, tt.attempts)
			}
		})
	}
}

func TestWrapAllChecksTheSchemaBeforeAnyAttempt(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	defer srv.Close()
	cfg := mustParse(t, `
tools:
  fetch_invoice:
    retries: 3
    args_schema:
      type: object
      required: [number]
      additionalProperties: false
      properties: {number: {type: string, pattern: "^INV-[0-9]+$"}}
`)
	wrapped, err := cfg.WrapAll(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()))
	if err != nil {
		t.Fatal(err)
	}
	tool := wrapped[0].(*toolsafe.Tool)

	r := tool.Run(context.Background(), `{"number":"1002"}`)
	if r.Failure == nil || r.Failure.Kind != middleware.KindArgsInvalid || r.Attempts != 0 {
		t.Fatalf("Run = %+v; want args-invalid with 0 attempts", r)
	}
	if want := `fetch_invoice was not called: the input is invalid: argument "number" must match the pattern "^INV-[0-9]+$". Fix the input and call it again.`; r.Observation() != want {
		t.Errorf("the model sees %q; want %q", r.Observation(), want)
	}
	if n := srv.Requests(""); n != 0 {
		t.Errorf("%d requests reached the upstream; want 0", n)
	}

	if r := tool.Run(context.Background(), `{"number":"INV-1002"}`); r.Status() != "ok" || !strings.Contains(r.Output, "Globex") {
		t.Errorf("a valid input: %+v", r)
	}
}

func TestWrapAllReportsEveryBindingProblem(t *testing.T) {
	cfg := mustParse(t, `
tools:
  fetch_invoice: {retries: 3}
  serch: {retries: 1}
`)
	echo := func(name string) tools.Tool {
		return middleware.Func(name, "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	}
	_, err := cfg.WrapAll(echo("fetch_invoice"), echo("search"), nil, echo("search"))
	var ce *policyfile.Error
	if !errors.As(err, &ce) {
		t.Fatalf("WrapAll error %v; want a *Error", err)
	}
	want := []wantProblem{
		{tool: "serch", line: 4, says: `"serch" is named in the file but was not passed to WrapAll: pass it, or remove its entry; did you mean "search"?`},
		{says: "tool 3 of the 4 passed to WrapAll is nil"},
		{tool: "search", says: `two tools passed to WrapAll are named "search"`},
	}
	if len(ce.Problems) != len(want) {
		t.Fatalf("%d problems; want %d:\n%v", len(ce.Problems), len(want), err)
	}
	for i, w := range want {
		p := ce.Problems[i]
		if p.Tool != w.tool || p.Line != w.line || !strings.Contains(p.Message, w.says) {
			t.Errorf("problem %d is %q (tool %q, line %d); want tool %q, line %d: %s", i+1, p.Message, p.Tool, p.Line, w.tool, w.line, w.says)
		}
	}
}

// The case of the open issue on composed guarantees: the file gates
// Refund, and code passes an ungated refund beside it. langchaingo's
// executor would run whichever comes last for the model's "Refund", so
// WrapAll refuses the pair, naming both.
func TestWrapAllRefusesAToolThatCollidesWithAGatedOne(t *testing.T) {
	file := mustParse(t, "tools:\n  Refund: {approval: every_attempt}\n")
	echo := func(name string) tools.Tool {
		return middleware.Func(name, "refunds", func(context.Context, string) (string, error) { return "refunded", nil })
	}
	wrapped, err := file.WithApprover(approval.NewGrants()).WrapAll(echo("Refund"), echo("refund"))
	var pe *policyfile.Error
	if !errors.As(err, &pe) || len(pe.Problems) != 1 || wrapped != nil {
		t.Fatalf("WrapAll = %v, %v; want one problem and no tools", wrapped, err)
	}
	p := pe.Problems[0]
	if want := `two tools passed to WrapAll are named "Refund" and "refund": langchaingo's executor looks tools up by their upper-cased name, so the later would answer the model's calls to both, whatever policies the other has; rename one`; p.Message != want || p.Tool != "refund" {
		t.Errorf("problem %+v;\nwant the message %q about refund", p, want)
	}
}

func TestWrapAllNamesAnUnknownFallbackTool(t *testing.T) {
	cfg := mustParse(t, "tools:\n  search:\n    fallback: {tool: archive_serch}\n")
	search := middleware.Func("search", "searches", func(context.Context, string) (string, error) { return "", nil })
	archive := middleware.Func("archive_search", "searches the archive", func(context.Context, string) (string, error) { return "", nil })
	_, err := cfg.WrapAll(search, archive)
	var p *policyfile.Problem
	found := false
	var ce *policyfile.Error
	if errors.As(err, &ce) {
		for _, p = range ce.Problems {
			if p.Field == "fallback.tool" {
				found = true
				break
			}
		}
	}
	if !found {
		t.Fatalf("WrapAll error %v; want a problem with fallback.tool", err)
	}
	if p.Tool != "search" || p.Line != 3 || !strings.Contains(p.Message, `unknown fallback tool "archive_serch": it was not passed to WrapAll`) || !strings.Contains(p.Message, `did you mean "archive_search"?`) {
		t.Errorf("problem %+v", p)
	}
}

func TestWithAddsOptionsToEveryTool(t *testing.T) {
	cfg := mustParse(t, "defaults: {retries: 1}\n")
	var mu sync.Mutex
	var seen []string
	record := toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Tool+" "+r.Status())
	})
	ok := middleware.Func("a", "answers", func(context.Context, string) (string, error) { return "fine", nil })
	bad := middleware.Func("b", "fails", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("no such thing")
	})
	wrapped, err := cfg.With(record).WrapAll(ok, bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wrapped {
		_, _ = w.Call(context.Background(), "{}")
	}
	if got := strings.Join(seen, ", "); got != "a ok, b error" {
		t.Errorf("results seen: %s; want a ok, b error", got)
	}
	// The original Config is unchanged.
	seen = nil
	wrapped, _ = cfg.WrapAll(ok)
	_, _ = wrapped[0].Call(context.Background(), "{}")
	if len(seen) != 0 {
		t.Errorf("With changed the Config it was called on: %v", seen)
	}
}

func names(ts []tools.Tool) []string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Name())
	}
	return s
}

// tracing: true traces through the global providers, which the user sets
// once; tracing: false leaves a tool untraced.
func TestTracingFromTheFileUsesTheGlobalProvider(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	old := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(old)

	cfg := mustParse(t, "defaults: {tracing: true}\ntools:\n  quiet: {tracing: false}\n")
	echo := func(name string) tools.Tool {
		return middleware.Func(name, "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	}
	wrapped, err := cfg.WrapAll(echo("loud"), echo("quiet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wrapped {
		if _, err := w.Call(context.Background(), "{}"); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range spans.Ended() {
		got = append(got, s.Name())
	}
	if strings.Join(got, ", ") != "attempt 1, execute_tool loud" {
		t.Errorf("spans %v; want attempt 1 and execute_tool loud only", got)
	}
}

// WithTracing's Hook traces the tools with tracing: true, and only those.
func TestWithTracingGivesTheFileItsHook(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	cfg := mustParse(t, "defaults: {tracing: true}\ntools:\n  quiet: {tracing: false}\n").
		WithTracing(otelhook.New(otelhook.WithTracerProvider(tp)))
	echo := func(name string) tools.Tool {
		return middleware.Func(name, "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	}
	wrapped, err := cfg.WrapAll(echo("loud"), echo("quiet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wrapped {
		if _, err := w.Call(context.Background(), "{}"); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range spans.Ended() {
		got = append(got, s.Name())
	}
	if strings.Join(got, ", ") != "attempt 1, execute_tool loud" {
		t.Errorf("spans on the File's provider %v; want attempt 1 and execute_tool loud only", got)
	}
}

func TestTheZeroConfigIsAnEmptyFile(t *testing.T) {
	var cfg policyfile.File
	echo := middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	wrapped, err := cfg.WrapAll(echo)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := wrapped[0].Call(context.Background(), "hi"); out != "hi" || err != nil {
		t.Errorf("Call = %q, %v", out, err)
	}
	if got := cfg.Describe("echo"); got != "surface → tool echo" {
		t.Errorf("Describe = %q; want surface → tool echo", got)
	}
}

func TestCheckToolsChecksTheFileAgainstNamesWithoutWrapping(t *testing.T) {
	file := mustParse(t, `
tools:
  refund: {approval: every_attempt}
  search: {fallback: archive_search}
`)
	tests := []struct {
		name  string
		tools []string
		says  []string // every problem, in order
	}{
		{name: "the tools of the file and their fallbacks pass, approval or not", tools: []string{"refund", "search", "archive_search"}},
		{
			name:  "a name given twice, as WrapAll would refuse two tools of one name",
			tools: []string{"refund", "search", "archive_search", "search"},
			says:  []string{`two of the agent's tools given are named "search"`},
		},
		{
			name:  "a tool of the file and a fallback not among the names",
			tools: []string{"refund", "serch"},
			says: []string{
				`"search" is named in the file but is not one of the agent's tools given (refund, serch): add it to them, or remove its entry; did you mean "serch"?`,
				`unknown fallback tool "archive_search": it is not one of the agent's tools given; add it to them, or name one of refund, serch`,
			},
		},
		{
			name:  "names that differ only in case",
			tools: []string{"refund", "search", "archive_search", "Refund"},
			says:  []string{`two of the agent's tools given are named "refund" and "Refund"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := file.CheckTools(tt.tools...)
			if len(tt.says) == 0 {
				if err != nil {
					t.Fatalf("CheckTools = %v; want nil", err)
				}
				return
			}
			var pe *policyfile.Error
			if !errors.As(err, &pe) || len(pe.Problems) != len(tt.says) {
				t.Fatalf("CheckTools = %v; want %d problems", err, len(tt.says))
			}
			for i, want := range tt.says {
				if !strings.Contains(pe.Problems[i].Message, want) {
					t.Errorf("problem %d is %q; want …%s…", i+1, pe.Problems[i].Message, want)
				}
			}
		})
	}
}

// Regression (issue "exactly once under store faults", item 10): WrapAll
// took a *toolsafe.Tool, as the README's "Many replicas" snippet passed
// one: with approval in both layers each call needed two grants, and with
// retries in both the outer layer reported ok for an inner failure. It is
// a problem naming the tool, reported with the others, and no tool is
// wrapped.
func TestWrapAllRefusesAToolWrappedAlready(t *testing.T) {
	file := mustParse(t, "tools:\n  refund: {approval: per_call}\n")
	refund := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) { return "refunded", nil })
	grants := approval.NewGrants()
	wrapped, err := file.WithApprover(grants).WrapAll(toolsafe.Wrap(refund, toolsafe.WithApproval(grants)), nil)
	var pe *policyfile.Error
	if !errors.As(err, &pe) || len(pe.Problems) != 2 || wrapped != nil {
		t.Fatalf("WrapAll = %v, %v; want two problems and no tools", wrapped, err)
	}
	p := pe.Problems[1]
	if want := `tool 1 of the 2 passed to WrapAll, "refund", is a *toolsafe.Tool already: pass the tool it wraps, unwrapped`; !strings.HasPrefix(p.Message, want) || p.Tool != "refund" {
		t.Errorf("problem %+v;\nwant it to start %q, about refund", p, want)
	}
	if _, err := file.WithApprover(grants).WrapAll(refund); err != nil {
		t.Errorf("the same tool unwrapped: %v", err)
	}
}

// Regression (issue 32, item 10, the policies file's sibling): an option
// given to File.With replaced the guard the file set for a tool ("the later
// wins"): File.With(toolsafe.WithTimeout(0)) dropped the file's attempt
// timeout, and File.With(toolsafe.WithApproval(approveAll)) answered for the
// file's approver, which was never asked. WrapAll refuses both, naming the
// tool, the option and the fix; options that guard nothing still apply.
func TestAnOptionOfWithThatSetsAGuardTheFileSetsIsRefused(t *testing.T) {
	var calls int
	refund := middleware.Func("refund", "refunds an order", func(context.Context, string) (string, error) {
		calls++
		return "refunded", nil
	})
	lookup := middleware.Func("lookup", "looks an order up", func(context.Context, string) (string, error) { return "found", nil })
	cfg := mustParse(t, `
tools:
  refund: {timeout: 2s, approval: per_call, side_effects: not_idempotent}
`).WithApprover(approval.NewGrants())
	approveAll := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		return approval.Approved, nil
	})
	tests := []struct {
		name string
		opt  toolsafe.Option
		says string
	}{
		{"a timeout", toolsafe.WithTimeout(0), "WithTimeout is given twice"},
		{"an approver", toolsafe.WithApproval(approveAll), "WithApproval is given twice"},
		{"side effects", toolsafe.WithSideEffects(middleware.NoSideEffects), "WithSideEffects is given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrapped, err := cfg.With(tt.opt).WrapAll(refund, lookup)
			var pe *policyfile.Error
			if !errors.As(err, &pe) || wrapped != nil {
				t.Fatalf("WrapAll: %v; want a *policyfile.Error and no tools", err)
			}
			if len(pe.Problems) != 1 || pe.Problems[0].Tool != "refund" {
				t.Fatalf("problems %v; want one, about refund (lookup's policies set no guard)", pe.Problems)
			}
			msg := pe.Problems[0].Message
			for _, want := range []string{tt.says, "File.With sets again what the file sets", "drop the option from File.With, or the field from the file"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the problem %q does not say %q", msg, want)
				}
			}
		})
	}
	if calls != 0 {
		t.Errorf("refund was called %d times", calls)
	}

	// An option that is invalid on its own is reported as it is, without
	// blaming the file.
	_, err := cfg.With(toolsafe.WithDeadline(-1)).WrapAll(refund, lookup)
	if err == nil || strings.Contains(err.Error(), "File.With sets again") || !strings.Contains(err.Error(), "deadline -1ns is negative") {
		t.Errorf("an invalid option of With: %v", err)
	}
}
