package toolsafe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Option configures a Tool. Options are applied in order; a later option of
// the same kind replaces an earlier one, except With, which adds.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config holds what the options set. Each layer of DESIGN.md §2 has its
// slot; New puts the slots in that order whatever the order of the options.
type config struct {
	callSpan    middleware.Middleware   // 1: call span (WithTracing)
	args        middleware.Middleware   // 3: argument validation
	argsSchema  *argschema.Schema       // the schema args checks, for Tool.ArgsSchema
	mws         []middleware.Middleware // With: around each logical call
	fallback    middleware.Middleware   // 4: fallback (WithFallback)
	deadline    time.Duration           // 5: total deadline
	retry       *policy.Retry           // 6: retry
	gate        middleware.Middleware   // 8: approval gate (WithApproval)
	timeout     time.Duration           // 9: attempt timeout
	attemptSpan middleware.Middleware   // 10: attempt span (WithTracing)
	logger      *slog.Logger
	callIDs     *CallIDs // the model's tool-call IDs (WithCallIDs)
	onResult    []func(context.Context, middleware.Result)
	errs        []error

	// Filled by resolve (options_resilience.go) from res.
	res         resilience
	sideEffects middleware.Middleware // 6: no retry after an attempt that may have landed
	breaker     middleware.Middleware // 7: circuit breaker (WithCircuitBreaker)
	bulkhead    middleware.Middleware // 7: bulkhead (WithBulkhead)
}

func (c *config) validate() error {
	if b := c.res.breaker; b != nil {
		if err := b.Validate(); err != nil {
			c.errs = append(c.errs, err)
		}
	}
	if b := c.res.bulkhead; b != nil {
		if err := b.Validate(); err != nil {
			c.errs = append(c.errs, err)
		}
	}
	if c.retry != nil {
		if err := c.retry.Validate(); err != nil {
			c.errs = append(c.errs, err)
		}
	}
	if err := policy.ValidateTimeouts(c.timeout, c.deadline); err != nil {
		c.errs = append(c.errs, err)
	}
	return errors.Join(c.errs...)
}

// isNil reports whether v is nil or an interface holding a nil pointer,
// func, map, slice or channel: a typed nil that would panic when used.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// WithRetry retries transient failures as r says (see policy.Retry). Without
// it a call makes one attempt. MaxRetries 3 means up to 4 attempts.
func WithRetry(r policy.Retry) Option {
	return optionFunc(func(c *config) { c.retry = &r })
}

// WithTimeout limits each attempt to d. When d passes the caller gets
// control back, even if the tool ignores its context (the abandoned attempt
// finishes in the background and is counted in Result.Abandoned), and the
// attempt fails with tool-timeout, which is retried. Zero means no limit per
// attempt. A negative d is an error.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("attempt timeout %v is negative: use 0 for no limit, or a duration such as 2s", d))
			return
		}
		c.timeout = d
	})
}

// WithDeadline limits the whole call, attempts and waits between them
// included, to d. No retry is scheduled that could not start before it. When
// it passes the call ends with tool-timeout. Zero means no deadline of its
// own (the caller's context may still have one). A negative d is an error.
func WithDeadline(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("deadline %v is negative: use 0 for none, or a duration such as 30s", d))
			return
		}
		c.deadline = d
	})
}

// With adds middlewares around each logical call, inside the layer that
// turns failures into messages and outside the deadline and retries: they see
// the input once per call and the call's final error. The first is
// outermost. Nil middlewares are skipped.
func With(mws ...middleware.Middleware) Option {
	return optionFunc(func(c *config) { c.mws = append(c.mws, mws...) })
}

// WithOnResult calls f with the Result of every call, after the call and
// before Call or Run returns, on the caller's goroutine: a place to log or
// print each call's status, attempts and waits. f must not block for long.
// Several WithOnResult add up; nil is ignored.
func WithOnResult(f func(ctx context.Context, r middleware.Result)) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.onResult = append(c.onResult, f)
		}
	})
}

// WithLogger sets the logger for failures (DEBUG, with the raw error text)
// and panics (ERROR, with the stack). Nil, the default, means slog.Default()
// at the time of the call.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}
