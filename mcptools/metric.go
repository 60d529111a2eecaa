package mcptools

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"

	"github.com/toolsafe/toolsafe/middleware"
)

// ScopeName is the instrumentation scope of mcptools' metric.
const ScopeName = "github.com/toolsafe/toolsafe/mcptools"

// operationMetric records mcp.client.operation.duration for one tool.
type operationMetric struct {
	provider metric.MeterProvider // nil: the global one, at the first call
	tool     attribute.KeyValue

	once sync.Once
	hist mcpconv.ClientOperationDuration
}

func newOperationMetric(mp metric.MeterProvider, tool string) *operationMetric {
	return &operationMetric{provider: mp, tool: semconv.GenAIToolName(tool)}
}

// record records the duration of one tools/call since start, with the
// session's attrs and, on failure, errType (and the JSON-RPC code, when
// there is one).
func (m *operationMetric) record(ctx context.Context, start time.Time, sessionAttrs []attribute.KeyValue, errType, code string) {
	m.once.Do(func() {
		mp := m.provider
		if mp == nil {
			mp = otel.GetMeterProvider()
		}
		m.hist, _ = mcpconv.NewClientOperationDuration(mp.Meter(ScopeName))
	})
	if !m.hist.Enabled(ctx) {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, m.tool)
	for _, kv := range sessionAttrs {
		if kv.Key == semconv.McpProtocolVersionKey {
			attrs = append(attrs, kv)
		}
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	if code != "" {
		attrs = append(attrs, semconv.RPCResponseStatusCodeKey.String(code))
	}
	m.hist.Record(ctx, time.Since(start).Seconds(), mcpconv.MethodNameAttr("tools/call"), attrs...)
}

// errorTypeOf is the error.type of a failed call: what the error names
// itself, or its kind; "" for nil.
func errorTypeOf(err error) string {
	if err == nil {
		return ""
	}
	if te, ok := errors.AsType[*typedError](err); ok {
		return te.errType
	}
	kind, _ := middleware.Classify(err)
	return string(kind)
}

// statusCodeOf is the JSON-RPC code of a failed call ("-32603"), or "".
func statusCodeOf(err error) string {
	te, ok := errors.AsType[*typedError](err)
	if !ok || len(te.errType) < 2 || te.errType[0] != '-' {
		return ""
	}
	return te.errType
}
