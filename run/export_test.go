package run

import "context"

// Tracked is how many positions the run scope of ctx keeps: one cursor per
// tool and input its calls used, and the positions given back.
func Tracked(ctx context.Context) int {
	s := scopeFrom(ctx)
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	n := 0
	for _, c := range s.run.cursors {
		c.mu.Lock()
		n += 1 + len(c.free)
		c.mu.Unlock()
	}
	return n
}
