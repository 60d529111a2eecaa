package test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/testkit"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// lateRefunds is a refunds upstream that applies each refund at once and
// answers 2s later (or when the client goes away): the answer of an
// applied action is lost to a client with a shorter limit.
func lateRefunds(t *testing.T) (url string, applied *atomic.Int32) {
	t.Helper()
	applied = new(atomic.Int32)
	ledger := refunds.NewLedger()
	h := ledger.Handler()
	srv := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &discardWriter{h: http.Header{}}
		h.ServeHTTP(rec, r)
		applied.Add(1)
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL(), applied
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

const mayHaveApplied = "The action may have been applied; check before calling again."

// Regression: a refund without an idempotency key timed out while the
// upstream applied it; the plain fallback ran too, Status was ok and
// nothing said the refund may have been applied.
func TestAnOutcomeThatMayHaveLandedIsNeverRoutedToAFallback(t *testing.T) {
	url, applied := lateRefunds(t)
	var altRan atomic.Int32
	refund := toolsafe.Wrap(refunds.Tool(url, toolsafetest.NoKeepAliveClient(), false),
		toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey),
		toolsafe.WithTimeout(100*time.Millisecond),
		toolsafe.WithFallback(fallback.To(testkit.Done("manual_refund", &altRan))))
	r := refund.Run(context.Background(), testkit.RefundInput)
	if r.Status() != "error" || r.Kind() != middleware.KindTimeout || r.Fallback != "" || altRan.Load() != 0 {
		t.Fatalf("%q (%v) via %q, fallback ran %d; want a tool-timeout, no fallback", r.Status(), r.Kind(), r.Fallback, altRan.Load())
	}
	if r.Failure.SideEffect != middleware.SideEffectUnknown || !strings.Contains(r.Observation(), mayHaveApplied) {
		t.Errorf("side effect %v, observation %q; want unknown and %q", r.Failure.SideEffect, r.Observation(), mayHaveApplied)
	}
	if applied.Load() != 1 || r.Attempts != 1 {
		t.Errorf("applied %d after %d attempts; want once, not retried", applied.Load(), r.Attempts)
	}
}

// Regression: an attempt cut by WithDeadline (no WithTimeout) while the
// upstream applied the refund said SideEffect none and "did not answer ...
// do not call again", without "may have been applied". So did the caller's
// own deadline.
func TestAnAttemptCutByADeadlineMayHaveBeenApplied(t *testing.T) {
	for _, se := range []middleware.SideEffects{middleware.SideEffectsWithoutKey, middleware.SideEffectsWithKey} {
		t.Run("the call's deadline, "+se.String(), func(t *testing.T) {
			url, applied := lateRefunds(t)
			refund := toolsafe.Wrap(refunds.Tool(url, toolsafetest.NoKeepAliveClient(), se == middleware.SideEffectsWithKey),
				toolsafe.WithSideEffects(se), toolsafe.WithDeadline(200*time.Millisecond))
			r := refund.Run(context.Background(), testkit.RefundInput)
			if r.Kind() != middleware.KindTimeout || r.Failure.SideEffect != middleware.SideEffectUnknown ||
				!strings.Contains(r.Observation(), mayHaveApplied) || applied.Load() != 1 {
				t.Fatalf("%v, side effect %v, applied %d, observation %q; want a tool-timeout that may have been applied",
					r.Kind(), r.Failure.SideEffect, applied.Load(), r.Observation())
			}
		})
	}
	t.Run("the caller's deadline", func(t *testing.T) {
		url, applied := lateRefunds(t)
		refund := toolsafe.Wrap(refunds.Tool(url, toolsafetest.NoKeepAliveClient(), false), toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		r := refund.Run(ctx, testkit.RefundInput)
		if r.Kind() != middleware.KindCanceled || r.Failure.SideEffect != middleware.SideEffectUnknown ||
			!strings.Contains(r.Failure.Error(), mayHaveApplied) || applied.Load() != 1 {
			t.Fatalf("%v, side effect %v, applied %d, message %q; want canceled, and the refund may have been applied",
				r.Kind(), r.Failure.SideEffect, applied.Load(), r.Failure.Error())
		}
	})
}

// Regression: WithDestructive without WithSideEffects reported a timed-out
// attempt without "may have been applied".
func TestADestructiveToolHasSideEffects(t *testing.T) {
	url, applied := lateRefunds(t)
	grants := approval.NewGrants()
	grants.Grant("refund", testkit.RefundInput)
	refund := toolsafe.Wrap(refunds.Tool(url, toolsafetest.NoKeepAliveClient(), false),
		toolsafe.WithApproval(grants, approval.ApproveEachAttempt), toolsafe.WithTimeout(100*time.Millisecond))
	r := refund.Run(context.Background(), testkit.RefundInput)
	if r.Kind() != middleware.KindTimeout || r.Failure.SideEffect != middleware.SideEffectUnknown ||
		!strings.Contains(r.Observation(), mayHaveApplied) || r.Attempts != 1 || applied.Load() != 1 {
		t.Fatalf("%v after %d attempts, side effect %v, applied %d, observation %q; want one tool-timeout that may have been applied",
			r.Kind(), r.Attempts, r.Failure.SideEffect, applied.Load(), r.Observation())
	}
	if _, err := toolsafe.New(refunds.Tool(url, nil, false), toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.WithSideEffects(middleware.NoSideEffects)); err == nil || !strings.Contains(err.Error(), "destructive, so it has side effects") {
		t.Errorf("New(destructive, NoSideEffects) = %v; want the contradiction named", err)
	}
}
