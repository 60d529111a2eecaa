package layer

import (
	"fmt"
	"slices"

	"github.com/toolsafe/toolsafe/middleware"
)

// names is the one table of toolsafe's layers, outermost first: toolsafe.New
// builds a tool's stack in its order (toolsafe.Layers lists it), and so does
// the fallback layer for a plain alternative. Some of the layers live in
// this package, the others with their concern (the run ledger and the loop
// guard in run, the gate in approval, the breaker and the bulkhead in
// policy, the fallback in fallback); the order lives here alone.
var names = [...]string{
	"call span", "surface", "args schema", "run ledger", "loop guard", "with", "fallback", "deadline",
	"retry", "side effects", "approval", "policies", "breaker", "bulkhead", "timeout", "recover",
}

// Names returns the names of the table's layers, outermost first. It
// returns a fresh slice.
func Names() []string { return slices.Clone(names[:]) }

// A Builder builds one layer of a stack: its middlewares, outermost first,
// none when the layer is off, or why it cannot.
type Builder func() ([]middleware.Middleware, error)

// Stack returns the middlewares that build gives the table's layers, in the
// table's order, outermost first, calling each builder once, in that
// order, and stopping at the first error. A layer build does not name is
// off; a name build holds that is no layer's is an error.
func Stack(build map[string]Builder) ([]middleware.Middleware, error) {
	known := 0
	var mws []middleware.Middleware
	for _, name := range names {
		b, ok := build[name]
		if !ok {
			continue
		}
		known++
		m, err := b()
		if err != nil {
			return nil, err
		}
		mws = append(mws, m...)
	}
	if known != len(build) {
		for name := range build {
			if !slices.Contains(names[:], name) {
				return nil, fmt.Errorf("toolsafe: no layer is named %q", name)
			}
		}
	}
	return mws, nil
}
