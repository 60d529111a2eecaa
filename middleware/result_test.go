package middleware_test

import (
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestResultSaysStatusAndWhatTheModelSees(t *testing.T) {
	for _, tt := range []struct {
		name                string
		r                   middleware.Result
		status, kind, model string
	}{
		{"an answer", middleware.Result{Tool: "t", Output: "42"}, "ok", "", "42"},
		{"a fallback's answer says so", middleware.Result{Tool: "t", Output: "41", Fallback: "alt"}, "ok", "",
			"(t could not answer, so its fallback tool alt did; this answer may be less fresh or less complete) 41"},
		{"a pause shows the model nothing", middleware.Result{Tool: "t", Failure: &middleware.Failure{Kind: middleware.KindApprovalRequired, Tool: "t"}},
			"paused", "approval-required", ""},
		{"a cancellation shows the model nothing", middleware.Result{Tool: "t", Failure: &middleware.Failure{Kind: middleware.KindCanceled, Tool: "t"}},
			"error", "canceled", ""},
		{"a failure shows its message", middleware.Result{Tool: "t", Failure: &middleware.Failure{Kind: middleware.KindApprovalDenied, Tool: "t"}},
			"error", "approval-denied", "The user denied approval for t. Do not call it again for this request."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.Status() != tt.status || string(tt.r.Kind()) != tt.kind || tt.r.Observation() != tt.model {
				t.Errorf("Status %q, Kind %q, Observation %q; want %q, %q, %q", tt.r.Status(), tt.r.Kind(), tt.r.Observation(), tt.status, tt.kind, tt.model)
			}
		})
	}
}
