package policyfile_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// run calls a tool wrapped by WrapAll and returns the structured result.
func cfgRun(t *testing.T, tool tools.Tool, input string) middleware.Result {
	t.Helper()
	w, ok := tool.(*toolsafe.Tool)
	if !ok {
		t.Fatalf("%s is a %T, not a *toolsafe.Tool", tool.Name(), tool)
	}
	return w.Run(context.Background(), input)
}

func cfgKind(r middleware.Result) middleware.Kind {
	if r.Failure == nil {
		return ""
	}
	return r.Failure.Kind
}

// The tools of one dependency share its breaker: once fetch_invoice opened
// it, list_invoices fails fast without a request upstream.
func TestToolsOfADependencyShareItsBreaker(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	defer srv.Close()
	srv.Always(billing.InvoicePath("INV-2001"), toolsafetest.Reset())
	fetch := billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient())
	list := middleware.Func("list_invoices", "lists invoices", fetch.Call)

	cfg := mustParse(t, `
dependencies:
  billing: {breaker: {failures: 2, delay: 1m}}
tools:
  fetch_invoice: {dependency: billing}
  list_invoices: {dependency: billing}
`)
	wrapped, err := cfg.WrapAll(fetch, list)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if r := cfgRun(t, wrapped[0], "INV-2001"); cfgKind(r) != middleware.KindFailed {
			t.Fatalf("call %d: %s; want tool-failed", i+1, cfgKind(r))
		}
	}
	r := cfgRun(t, wrapped[1], "INV-1001")
	if cfgKind(r) != middleware.KindCircuitOpen || r.Attempts != 0 {
		t.Fatalf("list_invoices after the breaker opened: %s after %d attempts; want circuit-open after 0", cfgKind(r), r.Attempts)
	}
	if !strings.Contains(r.Observation(), "its dependency billing is down for about 1m0s more") {
		t.Errorf("the model sees %q", r.Observation())
	}
	if n := srv.Requests(""); n != 2 {
		t.Errorf("%d requests upstream; want the 2 that opened the breaker", n)
	}

	// A second WrapAll of the same Config shares the breaker too.
	again, err := cfg.WrapAll(fetch, list)
	if err != nil {
		t.Fatal(err)
	}
	if r := cfgRun(t, again[0], "INV-1001"); cfgKind(r) != middleware.KindCircuitOpen {
		t.Errorf("a tool of a second WrapAll: %s; want circuit-open", cfgKind(r))
	}
}

// window counts failures among the last attempts rather than in a row.
func TestABreakerWindowCountsFailuresAmongTheLastAttempts(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	defer srv.Close()
	path := billing.InvoicePath("INV-1001")
	srv.Enqueue(path, toolsafetest.Reset(), toolsafetest.Pass(), toolsafetest.Reset())
	cfg := mustParse(t, `
dependencies:
  billing: {breaker: {failures: 2, window: 3, delay: 1m}}
tools:
  fetch_invoice: {dependency: billing}
`)
	wrapped, err := cfg.WrapAll(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for range 4 {
		kinds = append(kinds, string(cfgKind(cfgRun(t, wrapped[0], "INV-1001"))))
	}
	if got, want := strings.Join(kinds, ","), "tool-failed,,tool-failed,circuit-open"; got != want {
		t.Errorf("kinds %s; want %s (2 failures in the last 3 attempts open it)", got, want)
	}
	if n := srv.Requests(path); n != 3 {
		t.Errorf("%d requests; want 3", n)
	}
}

// concurrency bounds the attempts in flight over every tool of the
// dependency.
func TestToolsOfADependencyShareItsBulkhead(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	slow := middleware.Func("slow_report", "takes long", func(ctx context.Context, _ string) (string, error) {
		close(entered)
		<-release
		return "report", nil
	})
	quick := middleware.Func("quick_lookup", "answers at once", func(context.Context, string) (string, error) {
		return "found", nil
	})
	cfg := mustParse(t, `
dependencies:
  reports: {concurrency: 1}
tools:
  slow_report: {dependency: reports}
  quick_lookup: {dependency: reports, retries: 2}
`)
	wrapped, err := cfg.WrapAll(slow, quick)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan middleware.Result)
	go func() { done <- cfgRun(t, wrapped[0], "{}") }()
	<-entered
	r := cfgRun(t, wrapped[1], "{}")
	if cfgKind(r) != middleware.KindBusy || r.Attempts != 0 {
		t.Errorf("quick_lookup while slow_report holds the only slot: %s after %d attempts; want tool-busy after 0, not retried", cfgKind(r), r.Attempts)
	}
	close(release)
	if r := <-done; r.Status() != "ok" {
		t.Errorf("slow_report: %+v", r)
	}
	if r := cfgRun(t, wrapped[1], "{}"); r.Status() != "ok" {
		t.Errorf("quick_lookup once the slot is free: %+v", r)
	}
}

// side_effects decides whether an attempt that may have landed is retried.
func TestSideEffectsDecideWhetherAResetIsRetried(t *testing.T) {
	tests := []struct {
		sideEffects string
		attempts    int
		kind        middleware.Kind
		unknown     bool
	}{
		{"none", 4, middleware.KindFailed, false},
		{"idempotent", 4, middleware.KindFailed, true},
		{"not_idempotent", 1, middleware.KindFailed, true},
	}
	for _, tt := range tests {
		t.Run("side_effects "+tt.sideEffects, func(t *testing.T) {
			srv := toolsafetest.NewUpstream(billing.Handler())
			defer srv.Close()
			srv.Always(billing.InvoicePath("INV-2001"), toolsafetest.Reset())
			cfg := mustParse(t, "tools:\n  fetch_invoice: {retries: 3, backoff: {base: 1ms}, side_effects: "+tt.sideEffects+"}\n")
			wrapped, err := cfg.WrapAll(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()))
			if err != nil {
				t.Fatal(err)
			}
			r := cfgRun(t, wrapped[0], "INV-2001")
			if cfgKind(r) != tt.kind || r.Attempts != tt.attempts || srv.Requests("") != tt.attempts {
				t.Errorf("%s after %d attempts, %d requests; want %s after %d", cfgKind(r), r.Attempts, srv.Requests(""), tt.kind, tt.attempts)
			}
			if got := r.Failure != nil && r.Failure.SideEffect == middleware.SideEffectUnknown; got != tt.unknown {
				t.Errorf("side effect unknown: %v; want %v (%q)", got, tt.unknown, r.Observation())
			}
		})
	}
}

func TestApprovalComesFromTheFileAndTheApproverFromCode(t *testing.T) {
	applied := 0
	refund := middleware.Func("refund", "refunds an invoice", func(context.Context, string) (string, error) {
		applied++
		return "refunded", nil
	})
	cfg := mustParse(t, "tools:\n  refund:\n    approval: every_attempt\n")

	t.Run("without an approver WrapAll names the tool, the field and the line", func(t *testing.T) {
		_, err := cfg.WrapAll(refund)
		var p *policyfile.Problem
		if !errors.As(err, &p) || p.Tool != "refund" || p.Field != "approval" || p.Line != 3 ||
			!strings.Contains(p.Message, "approval every_attempt needs an approver: call WithApprover") {
			t.Errorf("WrapAll error: %v", err)
		}
	})

	t.Run("with one, a call pauses until granted", func(t *testing.T) {
		grants := approval.NewGrants()
		wrapped, err := cfg.WithApprover(grants).WrapAll(refund)
		if err != nil {
			t.Fatal(err)
		}
		_, err = wrapped[0].Call(context.Background(), `{"invoice":"INV-1001"}`)
		var ar *approval.Required
		if !errors.As(err, &ar) || applied != 0 {
			t.Fatalf("Call = %v with %d refunds applied; want an approval pause and none", err, applied)
		}
		grants.Grant("refund", `{"invoice":"INV-1001"}`)
		if out, err := wrapped[0].Call(context.Background(), `{"invoice":"INV-1001"}`); out != "refunded" || err != nil || applied != 1 {
			t.Errorf("after the grant: %q, %v, %d applied", out, err, applied)
		}
	})
}

func TestFallbackFromTheFileRunsTheOtherWrappedTool(t *testing.T) {
	searchCalls, archiveCalls := 0, 0
	search := middleware.Func("search", "searches", func(context.Context, string) (string, error) {
		searchCalls++
		return "", middleware.Transient(errors.New("search index down"))
	})
	archive := middleware.Func("archive_search", "searches the archive", func(_ context.Context, in string) (string, error) {
		archiveCalls++
		return "archived results for " + in, nil
	})
	cfg := mustParse(t, `
tools:
  search: {retries: 2, backoff: {base: 1ms}, fallback: {tool: archive_search, on: [tool-failed]}}
  archive_search:
    args_schema: {type: object, required: [q]}
`)
	wrapped, err := cfg.WrapAll(search, archive)
	if err != nil {
		t.Fatal(err)
	}
	r := cfgRun(t, wrapped[0], `{"q":"late"}`)
	if r.Status() != "ok" || r.Fallback != "archive_search" || r.Attempts != 3 || searchCalls != 3 || archiveCalls != 1 {
		t.Errorf("Run = %+v; search called %d times, archive %d; want ok from archive_search after 3 attempts", r, searchCalls, archiveCalls)
	}
	if !strings.Contains(r.Observation(), "so its fallback tool archive_search did") {
		t.Errorf("the model sees %q", r.Observation())
	}

	// The alternative runs through its own stack: its schema holds.
	archiveCalls = 0
	r = cfgRun(t, wrapped[0], `{"query":"late"}`)
	if archiveCalls != 0 || r.Status() != "error" {
		t.Errorf("an input the alternative's schema refuses reached it (%d calls): %+v", archiveCalls, r)
	}

	t.Run("WithFallbackOptions adapts the input", func(t *testing.T) {
		archiveCalls = 0
		adapted := cfg.WithFallbackOptions("search", fallback.WithInput(func(_ context.Context, in string) (string, error) {
			return strings.Replace(in, `"query"`, `"q"`, 1), nil
		}))
		wrapped, err := adapted.WrapAll(search, archive)
		if err != nil {
			t.Fatal(err)
		}
		if r := cfgRun(t, wrapped[0], `{"query":"late"}`); r.Output != `archived results for {"q":"late"}` || archiveCalls != 1 {
			t.Errorf("Run = %+v", r)
		}
	})

	t.Run("WithFallbackOptions for a tool without a fallback is a problem", func(t *testing.T) {
		_, err := cfg.WithFallbackOptions("archive_search").WrapAll(search, archive)
		if err == nil || !strings.Contains(err.Error(), `WithFallbackOptions names "archive_search", but the file gives it no fallback`) {
			t.Errorf("WrapAll error %v", err)
		}
	})
}

func TestAFallbackIsNotTakenForAKindNotListed(t *testing.T) {
	archiveCalls := 0
	search := middleware.Func("search", "searches", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("no such index")
	})
	archive := middleware.Func("archive_search", "searches the archive", func(context.Context, string) (string, error) {
		archiveCalls++
		return "archived", nil
	})
	cfg := mustParse(t, "tools:\n  search: {fallback: {tool: archive_search, on: [tool-failed, circuit-open]}}\n")
	wrapped, err := cfg.WrapAll(search, archive)
	if err != nil {
		t.Fatal(err)
	}
	if r := cfgRun(t, wrapped[0], "{}"); cfgKind(r) != middleware.KindToolError || archiveCalls != 0 {
		t.Errorf("a tool-error with on: [tool-failed, circuit-open]: %s, archive called %d times; want tool-error, 0", cfgKind(r), archiveCalls)
	}
}
