package test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// hinted is a tool that declares hints, as an MCP server's tools do.
type hinted struct {
	call func(context.Context, string) (string, error)
	h    middleware.Hints
}

func (h *hinted) Name() string                                        { return "delete_file" }
func (h *hinted) Description() string                                 { return "Deletes a file." }
func (h *hinted) Call(ctx context.Context, in string) (string, error) { return h.call(ctx, in) }
func (h *hinted) Hints() middleware.Hints                             { return h.h }

// Issue 27: a tool that declares hints gets the side effects they give
// (an unannotated MCP tool: without a key, so not sent again after an
// attempt that may have landed), and an explicit option wins.
func TestAnUnannotatedToolIsNotRetriedAfterItMayHaveActed(t *testing.T) {
	retry := toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(0)})
	yes := true
	for _, tt := range []struct {
		name     string
		h        middleware.Hints
		opts     []toolsafe.Option
		attempts int
	}{
		{"no annotations: without a key", middleware.Hints{}, nil, 1},
		{"read-only from an untrusted server: without a key", middleware.Hints{ReadOnly: &yes}, nil, 1},
		{"read-only from a trusted server: retried", middleware.Hints{ReadOnly: &yes, Trusted: true}, nil, 4},
		{"an explicit option wins over the hints", middleware.Hints{}, []toolsafe.Option{toolsafe.WithSideEffects(middleware.NoSideEffects)}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			attempts := 0
			tool := &hinted{h: tt.h, call: func(context.Context, string) (string, error) {
				attempts++
				return "", io.ErrUnexpectedEOF // the answer was lost after the request went out
			}}
			r := toolsafe.Wrap(tool, append([]toolsafe.Option{retry}, tt.opts...)...).Run(context.Background(), `{"path":"/tmp/x"}`)
			if r.Attempts != tt.attempts || attempts != tt.attempts {
				t.Fatalf("%d attempts (%d calls); want %d: %s", r.Attempts, attempts, tt.attempts, r.Observation())
			}
			unknown := r.Failure != nil && r.Failure.SideEffect == middleware.SideEffectUnknown
			if wantUnknown := tt.attempts == 1; unknown != wantUnknown || wantUnknown && !strings.Contains(r.Observation(), "may have been applied") {
				t.Errorf("side effect unknown %v; want %v: %s", unknown, wantUnknown, r.Observation())
			}
		})
	}
}
