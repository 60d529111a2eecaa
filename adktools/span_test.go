package adktools_test

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func TestSpansUnderADK(t *testing.T) {
	up := toolsafetest.NewUpstream(billing.Handler())
	defer up.Close()
	up.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
	up.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())
	invoice := adktools.Wrap(fetchInvoice(t, up.URL()),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: noWait}),
		toolsafe.WithTracing(otelhook.New(otelhook.WithHostCallSpan())))
	m := script(
		calls(call("call-1", "fetch_invoice", map[string]any{"number": "INV-1001"}),
			call("call-2", "fetch_invoice", map[string]any{"number": "INV-1002"})),
		say("INV-1001 is paid; INV-1002 could not be read."))
	ctx, trace := traced(t)

	newLoop(t, m, invoice).run(t, ctx, "s1", ask("Are INV-1001 and INV-1002 paid?"))
	got := trace()

	byCall := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range got {
		if s.Name() == "execute_tool fetch_invoice" {
			id := attr(s, "gen_ai.tool.call.id").AsString()
			byCall[id] = append(byCall[id], s)
		}
	}
	for id, attempts := range map[string]int64{"call-1": 2, "call-2": 2} {
		cs := byCall[id]
		if len(cs) != 1 {
			t.Fatalf("%d call spans carry %s; want exactly one per call", len(cs), id)
		}
		c := cs[0]
		if attr(c, otelhook.CallIDKey).AsString() != id || attr(c, otelhook.AttemptsKey).AsInt64() != attempts {
			t.Errorf("%s: toolsafe.call.id %q, %d attempts; want ADK's ID and %d",
				id, attr(c, otelhook.CallIDKey).AsString(), attr(c, otelhook.AttemptsKey).AsInt64(), attempts)
		}
		kids := 0
		for _, s := range got {
			if s.Parent().SpanID() == c.SpanContext().SpanID() && strings.HasPrefix(s.Name(), "attempt ") {
				kids++
			}
		}
		if int64(kids) != attempts {
			t.Errorf("%s: %d attempt spans under its call span; want %d", id, kids, attempts)
		}
	}
	if c := byCall["call-2"][0]; attr(c, "error.type").AsString() != "tool-failed" {
		t.Errorf("the failed call's span has error.type %q; want tool-failed", attr(c, "error.type").AsString())
	}
	var tree bytes.Buffer
	if err := toolsafetest.WriteSpanTree(&tree, got); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tree.String(), "reset by peer") || strings.Contains(spanText(got), "reset by peer") {
		t.Errorf("the upstream's text reached a span:\n%s", tree.String())
	}
}

// spanText is every attribute, event and status of spans, as text.
func spanText(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Status().Description)
		for _, kv := range s.Attributes() {
			b.WriteString(kv.Value.String())
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				b.WriteString(kv.Value.String())
			}
		}
	}
	return b.String()
}
