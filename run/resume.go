package run

import (
	"context"
	"sync"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/internal/call"
)

// resumption is a paused call that the next matching call continues.
type resumption struct {
	tool, input, callID, key string
	sends                    string // approval.Required.Sends

	mu   sync.Mutex
	used bool
}

// Resume returns a context in which the next call of ar.Tool with ar.Input
// (the same JSON, whatever its key order or spacing; see canonical.JSON)
// continues the paused call: it keeps the paused call's idempotency key
// (and its call ID, unless the model gave the new call one), so an action
// that may already have been applied when the call paused is sent again
// under the same key and applied once; when a person changed the call's
// arguments at an earlier attempt (ar.Sends), its later attempts send
// theirs, and ask about theirs. Pass it to the agent run that
// resumes after the approval was granted. Each Resume continues one call.
//
// When the call paused in a scoped run (ar.RunID, see With), the
// returned context resumes that run, on ctx's ledger (or the default
// ledger): the calls that completed before the pause are answered from the
// ledger instead of running again, however the model re-issues them. A
// ledger that does not hold the run (another one than the ledger that
// recorded it, or the run expired) runs no tool: every call returns an
// error wrapping ErrNotHeld, for the program, not the model. Resume(ctx,
// nil) returns ctx.
//
// Two runs resumed from the same pause at once (a job delivered twice)
// are safe: each call records its intent before its first attempt, so the
// second run finds the first's and does not make the call again (a tool
// with idempotency keys sends it again under the same key), and an answer
// recorded first is never replaced: the run that records its outcome
// second replays that answer.
func Resume(ctx context.Context, ar *approval.Required) context.Context {
	if ar == nil {
		return ctx
	}
	if ar.RunID != "" {
		var l Ledger
		if s := scopeFrom(ctx); s != nil && s.run != nil {
			l = s.run.ledger
		}
		ctx = withRun(ctx, ar.RunID, l, true) // a fresh scope: the run's calls replay
	}
	canon, err := canonical.JSON(ar.Input)
	if err != nil {
		canon = ar.Input
	}
	r := &resumption{tool: ar.Tool, input: canon, callID: ar.CallID, key: ar.IdempotencyKey, sends: ar.Sends}
	return withScope(ctx, func(s *scope) {
		s.resumptions = append(s.resumptions[:len(s.resumptions):len(s.resumptions)], r)
	})
}

// Continue reports whether a call of tool with input continues a paused
// call this scope resumes, and uses that call up: the first resumption of
// a call to tool with the same canonical input not used yet.
func (s *scope) Continue(tool, input string) (call.Continuation, bool) {
	if len(s.resumptions) == 0 {
		return call.Continuation{}, false
	}
	canon, err := canonical.JSON(input)
	if err != nil {
		return call.Continuation{}, false
	}
	for _, r := range s.resumptions {
		if r.tool != tool || r.input != canon {
			continue
		}
		r.mu.Lock()
		used := r.used
		r.used = true
		r.mu.Unlock()
		if !used {
			return call.Continuation{Key: r.key, CallID: r.callID, Sends: r.sends}, true
		}
	}
	return call.Continuation{}, false
}
