package approval

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Backlog is what waits for a person's decision for one tool: how many
// requests, and since when the oldest of them waits. It is what an
// operator's gauges show (package otelhook, Hook.Observe); stores of grants
// report it with a method Backlog(ctx) ([]Backlog, error).
type Backlog struct {
	// Tool is the name of the tool whose calls wait.
	Tool string
	// Requests is how many requests wait (see Request): at least 1.
	Requests int
	// Oldest is when the request that waits longest was first listed.
	Oldest time.Time
	// Age is how long that request has waited, on the store's own clock
	// (Grants.Now, which a test or a program may set): what
	// toolsafe.approval.oldest_age shows. Zero means the store does not
	// say, and the age is taken from Oldest and the wall clock.
	Age time.Duration
}

// Backlog returns, per tool, how many requests wait for a decision and
// since when the oldest, ordered by tool name; nil when none waits.
// Expired requests are not counted. It is one pass over the pending
// requests under the lock, and never returns an error.
func (g *Grants) Backlog(context.Context) ([]Backlog, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expireLocked(now)
	var out []Backlog
	for _, p := range g.pending {
		i := slices.IndexFunc(out, func(b Backlog) bool { return b.Tool == p.key.tool })
		if i < 0 {
			out = append(out, Backlog{Tool: p.key.tool, Requests: 1, Oldest: p.since})
			continue
		}
		out[i].Requests++
		if p.since.Before(out[i].Oldest) {
			out[i].Oldest = p.since
		}
	}
	for i := range out {
		out[i].Age = max(now.Sub(out[i].Oldest), time.Nanosecond) // never zero: zero says the store does not know
	}
	slices.SortFunc(out, func(a, b Backlog) int { return strings.Compare(a.Tool, b.Tool) })
	return out, nil
}
