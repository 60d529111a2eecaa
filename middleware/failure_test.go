package middleware_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestFailureMessagesSayWhatHappenedAndWhatToDo(t *testing.T) {
	reset := errors.New("read tcp 10.0.0.1:443: connection reset by peer")
	for _, tt := range []struct {
		name     string
		f        middleware.Failure
		want     []string
		withheld []string
	}{
		{"retries ran out", middleware.Failure{Kind: middleware.KindFailed, Tool: "fetch_invoice", Attempts: 4, Elapsed: 1900 * time.Millisecond, Cause: reset},
			[]string{"fetch_invoice failed", "after 4 attempts over 1.9s", "do not call fetch_invoice again"}, []string{"reset by peer", "10.0.0.1"}},
		{"retries that took under a millisecond, rounded up", middleware.Failure{Kind: middleware.KindFailed, Tool: "fetch_invoice", Attempts: 3, Elapsed: 600 * time.Microsecond, Cause: reset},
			[]string{"after 3 attempts over 1ms."}, []string{"over under"}},
		{"a timeout that may have landed", middleware.Failure{Kind: middleware.KindTimeout, Tool: "refund", Attempts: 1, Timeout: 2 * time.Second, SideEffect: middleware.SideEffectUnknown},
			[]string{"refund did not answer within 2s", "may have been applied; check before calling again"}, nil},
		{"an open circuit", middleware.Failure{Kind: middleware.KindCircuitOpen, Tool: "fetch_invoice", Dependency: "billing", Wait: 30 * time.Second},
			[]string{"fetch_invoice was not called", "billing is down for about 30s more"}, nil},
		{"the upstream's wait", middleware.Failure{Kind: middleware.KindFailed, Tool: "search", Attempts: 1, Wait: 2 * time.Minute},
			[]string{"asked to wait 2m0s", "Wait at least 2m0s before calling search again"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.f.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
			for _, w := range tt.withheld {
				if strings.Contains(msg, w) {
					t.Errorf("message %q leaks %q", msg, w)
				}
			}
		})
	}
}

func TestArgumentsStayOutOfTheMessageForSpans(t *testing.T) {
	f := &middleware.Failure{Kind: middleware.KindArgsInvalid, Tool: "refund", Cause: middleware.InvalidArgs(`unknown argument "ssn=123-45-6789"`)}
	if !strings.Contains(f.Error(), "123-45-6789") {
		t.Errorf("the model's message %q does not say what is wrong", f.Error())
	}
	if msg := f.MessageWithoutArguments(); strings.Contains(msg, "123-45-6789") || !strings.Contains(msg, "withheld") {
		t.Errorf("MessageWithoutArguments = %q; want the problems withheld", msg)
	}
	if !errors.Is(f, f.Cause) {
		t.Error("Unwrap does not give the cause")
	}
}
