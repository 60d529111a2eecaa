package test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Regression (fresh-eyes review): typed nils and zero values that New
// accepted panicked when the tool was called. Each is now a configuration
// error from New, naming what to use instead.
func TestTypedNilsAreConfigurationErrors(t *testing.T) {
	down := middleware.Func("primary", "always down", func(context.Context, string) (string, error) {
		return "", errors.New("connection refused")
	})
	var grants *approval.Grants
	var approve approval.ApproverFunc
	var nilTool *toolsafe.Tool
	tests := []struct {
		name string
		tool interface {
			Name() string
			Description() string
			Call(context.Context, string) (string, error)
		}
		opt  toolsafe.Option
		want string
	}{
		{"a nil *Grants as approver", down, toolsafe.WithApproval(grants), "the approver is a nil *approval.Grants"},
		{"a nil ApproverFunc as approver", down, toolsafe.WithApproval(approve), "the approver is a nil approval.ApproverFunc"},
		{"the zero Bulkhead", down, toolsafe.WithBulkhead(&policy.Bulkhead{}), "use policy.NewBulkhead"},
		{"the zero CircuitBreaker", down, toolsafe.WithCircuitBreaker(&policy.CircuitBreaker{}), "use policy.NewCircuitBreaker"},
		{"a nil *toolsafe.Tool to wrap", nilTool, nil, "the tool to wrap is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolsafe.New(tt.tool, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v; want an error containing %q", err, tt.want)
			}
			w := toolsafe.Wrap(tt.tool, tt.opt)
			if _, err := w.Call(context.Background(), "x"); err == nil {
				t.Error("Call on the misconfigured tool returned no error")
			}
		})
	}
}

func TestTheZeroToolAnswersAnError(t *testing.T) {
	var zero toolsafe.Tool
	if _, err := zero.Call(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "toolsafe.Wrap") {
		t.Errorf("Call on the zero Tool = %v; want an error that says to use Wrap", err)
	}
	var nilTool *toolsafe.Tool
	if r := nilTool.Run(context.Background(), "x"); r.Failure == nil {
		t.Error("Run on a nil *Tool reported success")
	}
}
