package middleware

import (
	"context"
	"sync"
)

// Grants is an in-memory Approver for a program that asks a person: each
// Grant or Deny is bound to one tool and its exact input, and is used up by
// one decision. A grant therefore never covers another input, another tool,
// or a second call; for a destructive tool (ApproveEachAttempt) it covers one
// attempt, so two attempts need two grants.
//
// Decisions for the same tool and input are used in the order they were
// given. A call with no decision waiting is Pending and is listed by Pending
// until a Grant or Deny for it arrives.
//
// The zero Grants is ready to use; NewGrants returns one. A Grants is safe for
// concurrent use.
type Grants struct {
	mu        sync.Mutex
	decisions map[grantKey][]Decision
	pending   []CallInfo
}

type grantKey struct{ tool, input string }

var _ Approver = (*Grants)(nil)

// NewGrants returns an empty Grants: every call is Pending until granted.
func NewGrants() *Grants { return &Grants{} }

// Grant approves one call (one attempt, for a destructive tool) of tool with
// exactly input. Granting twice approves two.
func (g *Grants) Grant(tool, input string) { g.add(tool, input, Approved) }

// Deny refuses the next call of tool with exactly input: it ends with
// approval-denied, and the model is told not to call it again.
func (g *Grants) Deny(tool, input string) { g.add(tool, input, Denied) }

func (g *Grants) add(tool, input string, d Decision) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.decisions == nil {
		g.decisions = make(map[grantKey][]Decision)
	}
	k := grantKey{tool, input}
	g.decisions[k] = append(g.decisions[k], d)
	g.dropPendingLocked(k)
}

// Decide uses up the oldest decision given for call.Tool and call.Input, or
// answers Pending and lists the call in Pending. It never returns an error.
func (g *Grants) Decide(_ context.Context, call CallInfo) (Decision, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := grantKey{call.Tool, call.Input}
	if ds := g.decisions[k]; len(ds) > 0 {
		if len(ds) == 1 {
			delete(g.decisions, k)
		} else {
			g.decisions[k] = ds[1:]
		}
		g.dropPendingLocked(k)
		return ds[0], nil
	}
	for i, p := range g.pending {
		if p.Tool == call.Tool && p.Input == call.Input {
			g.pending[i] = call // the latest request for it
			return Pending, nil
		}
	}
	g.pending = append(g.pending, call)
	return Pending, nil
}

// Pending returns the calls waiting for a decision, oldest first, one per
// tool and input (the latest request for it): what a program shows the
// person who approves. The slice is a copy.
func (g *Grants) Pending() []CallInfo {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 {
		return nil
	}
	return append([]CallInfo(nil), g.pending...)
}

func (g *Grants) dropPendingLocked(k grantKey) {
	for i, p := range g.pending {
		if p.Tool == k.tool && p.Input == k.input {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return
		}
	}
}
