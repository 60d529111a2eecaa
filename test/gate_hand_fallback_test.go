package test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
)

// Regression: a fallback placed by hand around a gated, destructive tool
// (toolsafe.With(fallback.To(alt).Middleware(nil))) ran its plain
// alternative with no approval at all: purge_record ran on the grant given
// to delete_record. The gate now records itself on the call as it begins,
// and the hand-placed fallback runs the alternative behind it, asked about
// the alternative's name and input.
func TestAFallbackPlacedByHandAroundAGatedToolPassesTheGate(t *testing.T) {
	var purged atomic.Int32
	remove := middleware.Func("delete_record", "deletes a record", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("the record is locked")
	})
	purge := middleware.Func("purge_record", "purges a record", func(context.Context, string) (string, error) {
		purged.Add(1)
		return "purged", nil
	})
	grants := approval.NewGrants()
	tool, err := toolsafe.New(remove, toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.With(fallback.To(purge).Middleware(nil)))
	if err != nil {
		t.Fatal(err)
	}

	grants.Grant("delete_record", `{"id":7}`)
	r := tool.Run(context.Background(), `{"id":7}`)
	var ar *approval.Required
	if r.Failure == nil || !errors.As(r.Failure, &ar) || ar.Tool != "purge_record" || purged.Load() != 0 {
		t.Fatalf("%s: %q, purged %d; want a pause for purge_record's own approval, and nothing purged", r.Status(), r.Observation(), purged.Load())
	}

	grants.Grant("delete_record", `{"id":7}`)
	grants.Grant("purge_record", `{"id":7}`)
	if r := tool.Run(context.Background(), `{"id":7}`); r.Status() != "ok" || r.Fallback != "purge_record" || purged.Load() != 1 {
		t.Fatalf("%s: %q, purged %d; want purge_record to run on its own grant", r.Status(), r.Observation(), purged.Load())
	}
}

// The alternative's own fallback, placed by hand too, runs behind the
// primary's gate as well: no chain of fallbacks leads out of a gate.
func TestAFallbackOfAFallbackPlacedByHandPassesThePrimarysGate(t *testing.T) {
	var wiped atomic.Int32
	locked := func(name string) *toolsafe.Tool {
		return toolsafe.Wrap(middleware.Func(name, name, func(context.Context, string) (string, error) {
			return "", middleware.NewToolError("the record is locked")
		}), toolsafe.With(fallback.To(middleware.Func("wipe_record", "wipes a record", func(context.Context, string) (string, error) {
			wiped.Add(1)
			return "wiped", nil
		})).Middleware(nil)))
	}
	purge := locked("purge_record") // no gate of its own
	remove := middleware.Func("delete_record", "deletes a record", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("the record is locked")
	})
	grants := approval.NewGrants()
	tool, err := toolsafe.New(remove, toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.With(fallback.To(purge).Middleware(nil)))
	if err != nil {
		t.Fatal(err)
	}
	grants.Grant("delete_record", `{"id":7}`)
	grants.Grant("purge_record", `{"id":7}`)
	r := tool.Run(context.Background(), `{"id":7}`)
	var ar *approval.Required
	if r.Failure == nil || !errors.As(r.Failure, &ar) || ar.Tool != "wipe_record" || wiped.Load() != 0 {
		t.Fatalf("%s: %q, wiped %d; want a pause for wipe_record's own approval, and nothing wiped", r.Status(), r.Observation(), wiped.Load())
	}
}
