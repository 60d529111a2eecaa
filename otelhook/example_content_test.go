package otelhook_test

import (
	"context"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/run"
)

// recorder returns a span recorder and a Hook that records to it, with opts.
func recorder(opts ...otelhook.Option) (*tracetest.SpanRecorder, *otelhook.Hook, func()) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	hook := otelhook.New(append([]otelhook.Option{otelhook.WithTracerProvider(tp)}, opts...)...)
	return spans, hook, func() { _ = tp.Shutdown(context.Background()) }
}

// Content capture on: the JSON arguments and result are recorded as
// structured values (maps, slices, numbers), not as JSON text; content
// longer than the limit is cut and named in toolsafe.truncated.
func ExampleWithRecordArguments() {
	spans, hook, done := recorder(
		otelhook.WithRecordArguments(true),
		otelhook.WithRecordResults(true),
		otelhook.WithContentLimit(64))
	defer done()

	fetch := middleware.Func("fetch_invoice", "Fetches one invoice.", func(_ context.Context, input string) (string, error) {
		if input == `{"number":"INV-1"}` {
			return `{"status":"paid","lines":[12.5,3],"paid":true,"note":null}`, nil
		}
		return `{"status":"open","text":"a long note that does not fit in sixty-four bytes"}`, nil
	})
	invoice := toolsafe.Wrap(fetch, toolsafe.WithTracing(hook))
	invoice.Run(context.Background(), `{"number":"INV-1"}`)
	invoice.Run(context.Background(), `{"number":"INV-2"}`)

	for _, s := range spans.Ended() {
		if s.Name() != "execute_tool fetch_invoice" {
			continue
		}
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", otelhook.TruncatedKey:
				fmt.Printf("%s (%s): %s\n", kv.Key, kv.Value.Type(), kv.Value.String())
			}
		}
	}
	// Output:
	// gen_ai.tool.call.arguments (MAP): {"number":"INV-1"}
	// gen_ai.tool.call.result (MAP): {"lines":[12.5,3],"note":null,"paid":true,"status":"paid"}
	// gen_ai.tool.call.arguments (MAP): {"number":"INV-2"}
	// gen_ai.tool.call.result (STRING): {"status":"open","text":"a long note that does not fit in sixty-
	// toolsafe.truncated (STRINGSLICE): ["gen_ai.tool.call.result"]
}

// A call of a resumed run that the run ledger answers ran no tool: its span
// is "replay_tool {name}", not an execution, and its summary says so.
func Example_replay() {
	spans, hook, done := recorder()
	defer done()

	refund := toolsafe.Wrap(middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) {
		return "refunded", nil
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithTracing(hook))
	ledger := run.NewMemoryLedger()
	refund.Run(run.With(context.Background(), "run-1", ledger), `{"order":"A-7"}`)
	r := refund.Run(run.With(context.Background(), "run-1", ledger), `{"order":"A-7"}`) // the run again, resumed
	fmt.Println("replayed:", r.Replayed)

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), show(s.Attributes(), "gen_ai.operation.name", otelhook.SummaryKey))
	}
	// Output:
	// replayed: true
	// attempt 1 []
	// execute_tool refund [gen_ai.operation.name=execute_tool toolsafe.summary=ok after 1 attempt]
	// replay_tool refund [gen_ai.operation.name=toolsafe.replay toolsafe.summary=replayed from the run ledger: the tool was not called again]
}

// A pause for approval is not an error: status Unset, no error.type, an
// approval_required event.
func Example_pause() {
	spans, hook, done := recorder()
	defer done()

	undecided := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		return approval.Pending, nil
	})
	refund := toolsafe.Wrap(middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) {
		return "refunded", nil
	}), toolsafe.WithApproval(undecided), toolsafe.WithTracing(hook))
	refund.Run(context.Background(), `{"order":"A-7"}`)

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.Status().Code, show(s.Attributes(), "error.type", otelhook.SummaryKey))
		for _, e := range s.Events() {
			fmt.Println("  event", e.Name)
		}
	}
	// Output:
	// execute_tool refund Unset [toolsafe.summary=refund is waiting for a human's approval.]
	//   event approval_required
}

// An attempt cut by the attempt timeout says so in toolsafe.reason, even
// when the tool answers its context's end with an error that calls itself a
// network timeout.
func ExampleNew_attemptTimeout() {
	spans, hook, done := recorder()
	defer done()

	slow := middleware.Func("fetch_invoice", "Fetches one invoice.", func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", netTimeout{}
	})
	invoice := toolsafe.Wrap(slow, toolsafe.WithTimeout(20*time.Millisecond), toolsafe.WithTracing(hook))
	invoice.Run(context.Background(), `{"number":"INV-1"}`)

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), show(s.Attributes(), "error.type", otelhook.ReasonKey))
	}
	// Output:
	// attempt 1 [error.type=tool-timeout toolsafe.reason=the attempt timeout (20ms) passed]
	// execute_tool fetch_invoice [error.type=tool-timeout]
}

// netTimeout is a net.Error that says it is a timeout, as an HTTP client's
// error does when its request's context ends.
type netTimeout struct{}

func (netTimeout) Error() string   { return "dial tcp: i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }
