package call

// Checked reports whether by (an argument schema) found input valid
// earlier in this call (see MarkChecked): a schema checked both by
// toolsafe's argument layer and by the tool itself (an MCP tool) checks
// once.
func (c *Call) Checked(by any, input string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checkedBy == by && c.checkedIn == input
}

// MarkChecked records that by found input valid: by's verdict on an input
// must depend on nothing else.
func (c *Call) MarkChecked(by any, input string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.checkedBy, c.checkedIn = by, input
	c.mu.Unlock()
}
