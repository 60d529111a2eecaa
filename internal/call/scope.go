package call

// ScopeKey is the context key of the Scope the calls made on a context
// belong to.
type ScopeKey struct{}

// Scope is the run a call belongs to, as package run keeps it: Begin asks
// it whether the call continues a paused one; the run's own layers (in
// package run) ask the record for it (Call.Scope) and use what else it
// does.
type Scope interface {
	// Continue reports whether a call of tool with input continues a
	// paused call, and if so gives its idempotency key and call ID; it
	// uses the paused call up.
	Continue(tool, input string) (key, callID string, ok bool)
	// RunID is the ID of the run, or "" when the scope only resumes a
	// call outside a run: the approval gate names the run in its
	// requests by it.
	RunID() string
}

// Scope is the run the call is part of (see ScopeKey), or nil.
func (c *Call) Scope() Scope {
	if c == nil {
		return nil
	}
	return c.scope
}

// Value returns the state a concern (the gate, the run ledger) keeps on
// the call under its own key, or nil.
func (c *Call) Value(key any) any {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readExtra().values[key]
}

// SetValue keeps v on the call under key (see Value).
func (c *Call) SetValue(key, v any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.writeExtra()
	if x.values == nil {
		x.values = make(map[any]any, 2)
	}
	x.values[key] = v
}

// RunID is the ID of the run the call is part of (see Scope.RunID), or ""
// outside a run.
func (c *Call) RunID() string {
	if s := c.Scope(); s != nil {
		return s.RunID()
	}
	return ""
}
