package toolsafe

import (
	"github.com/toolsafe/toolsafe/otelhook"
)

// WithTracing traces and measures every call with h (see package otelhook):
// a span "execute_tool {tool}" around the whole call, outermost, and a
// child span "attempt {n}" per attempt, inside the attempt timeout, with
// span events for retries, fallbacks and circuit breaker changes, and the
// calls, attempts, duration and abandoned-attempts metrics. One Hook can
// serve every tool. Nil, like no WithTracing at all, means no tracing.
// A later WithTracing replaces an earlier one.
func WithTracing(h *otelhook.Hook) Option {
	return optionFunc(func(c *config) { c.hook = h })
}
