package toolsafe

import (
	"github.com/toolsafe/toolsafe/otelhook"
)

// WithTracing traces and measures every call with h (see package otelhook):
// a span "execute_tool {tool}" around the whole call, outermost (layer 1 of
// DESIGN.md §2), and a child span "attempt {n}" per attempt, inside the
// attempt timeout (layer 10), with span events for retries, fallbacks and
// circuit breaker changes, and the calls, attempts, duration and
// abandoned-attempts metrics. One Hook can serve every tool. Nil, like no
// WithTracing at all, means no tracing.
func WithTracing(h *otelhook.Hook) Option {
	return optionFunc(func(c *config) {
		if h == nil {
			c.callSpan, c.attemptSpan = nil, nil
			return
		}
		c.callSpan, c.attemptSpan = h.CallSpan(), h.AttemptSpan()
	})
}
