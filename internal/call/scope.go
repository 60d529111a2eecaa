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
	// paused call, and if so gives what the call carries over from it; it
	// uses the paused call up.
	Continue(tool, input string) (Continuation, bool)
	// RunID is the ID of the run, or "" when the scope only resumes a
	// call outside a run: the approval gate names the run in its
	// requests by it.
	RunID() string
}

// Continuation is what a call that continues a paused one carries over
// from it: its idempotency key, its call ID, and the arguments a person
// approved in place of its input at an earlier attempt, which its later
// attempts send ("" for none; see Call.Sends).
type Continuation struct {
	Key, CallID, Sends string
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

// sendsKey keeps on a call the arguments a person approved in place of its
// input (see Sends).
type sendsKey struct{}

// Sends returns the arguments a person approved in place of the call's
// input at an earlier attempt, which its later attempts send again under
// its idempotency key, or "" when nobody changed them: set by the approval
// gate (SetSends), or carried over from the paused call the call
// continues.
func (c *Call) Sends() string {
	s, _ := c.Value(sendsKey{}).(string)
	return s
}

// SetSends records that the call's later attempts send s in place of its
// input (see Sends).
func (c *Call) SetSends(s string) { c.SetValue(sendsKey{}, s) }
