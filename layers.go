package toolsafe

import (
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/layer"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
)

// builders is how a configuration builds each layer of internal/layer's
// table of layers (layer.Names), the one table whose order New builds a
// tool's stack in, Layers lists (for policyfile's Describe and the docs),
// and a test holds New's doc and the README to. (A function, not a
// variable: the fallback layer builds New's alternatives.)
func builders() map[string]func(c *config) ([]middleware.Middleware, error) {
	return map[string]func(c *config) ([]middleware.Middleware, error){
		"call span":   func(c *config) ([]middleware.Middleware, error) { return one(c.callSpan()), nil },
		"surface":     func(*config) ([]middleware.Middleware, error) { return one(layer.Surface()), nil },
		"args schema": func(c *config) ([]middleware.Middleware, error) { return one(c.argsLayer()), nil },
		"run ledger": func(c *config) ([]middleware.Middleware, error) {
			return one(run.LedgerLayer(c.replays(), c.sideEffectsOf() != middleware.SideEffectsWithoutKey)), nil
		},
		"loop guard": func(c *config) ([]middleware.Middleware, error) { return one(run.LoopGuard(c.limits)), nil },
		"with":       func(c *config) ([]middleware.Middleware, error) { return c.mws, nil },
		"fallback":   func(c *config) ([]middleware.Middleware, error) { return one(c.fallbackLayer()), nil },
		"deadline":   func(c *config) ([]middleware.Middleware, error) { return one(layer.Deadline(c.deadline)), nil },
		"retry":      func(c *config) ([]middleware.Middleware, error) { mw, err := c.retryLayer(); return one(mw), err },
		"side effects": func(c *config) ([]middleware.Middleware, error) {
			return one(layer.GuardSideEffects(c.sideEffectsOf())), nil
		},
		"approval": func(c *config) ([]middleware.Middleware, error) { return one(c.gateLayer()), nil },
		"policies": func(c *config) ([]middleware.Middleware, error) { mw, err := c.policiesLayer(); return one(mw), err },
		"breaker":  func(c *config) ([]middleware.Middleware, error) { return one(c.breakerLayer()), nil },
		"bulkhead": func(c *config) ([]middleware.Middleware, error) { return one(c.bulkheadLayer()), nil },
		"timeout":  func(c *config) ([]middleware.Middleware, error) { return one(c.attemptLayer()), nil },
		"recover":  func(*config) ([]middleware.Middleware, error) { return one(layer.Recover()), nil },
	}
}

// Layers returns the names of toolsafe's layers, outermost first, in the
// order New stacks them whatever the order of the options: "call span",
// "surface", "args schema", "run ledger", "loop guard", "with",
// "fallback", "deadline", "retry", "side effects", "approval", "policies",
// "breaker", "bulkhead", "timeout" (the hard attempt timeout, which also
// starts the attempt span) and "recover" (panic recovery), then the tool.
func Layers() []string { return layer.Names() }

func one(mw middleware.Middleware) []middleware.Middleware {
	if mw == nil {
		return nil
	}
	return []middleware.Middleware{mw}
}

// build returns the layers of c, outermost first, in the order of the
// table of layers.
func (c *config) build() ([]middleware.Middleware, error) {
	b := builders()
	on := make(map[string]layer.Builder, len(b))
	for name, f := range b {
		on[name] = func() ([]middleware.Middleware, error) { return f(c) }
	}
	return layer.Stack(on)
}

func (c *config) callSpan() middleware.Middleware {
	if c.hook == nil {
		return nil
	}
	return c.hook.CallSpan()
}

// argsLayer refuses input that is not UTF-8 text on every tool, then
// checks the schema of WithArgs, if any.
func (c *config) argsLayer() middleware.Middleware {
	if c.args == nil {
		return layer.CheckText()
	}
	return middleware.Chain(layer.CheckText(), c.args.Middleware())
}

func (c *config) fallbackLayer() middleware.Middleware {
	if c.fallback == nil {
		return nil
	}
	return c.fallback.Middleware(c.alternative(*c.fallback))
}

func (c *config) gateLayer() middleware.Middleware {
	if !c.approval {
		return nil
	}
	mw, announce := approval.NewGate(c.approver, c.gateMode())
	c.announceGate = announce
	if c.args != nil {
		// A person may change the arguments before approving (Reply with an
		// Input, from any inbox or program): what runs then is checked
		// against the schema too. The model's own input, checked already,
		// is not checked twice (argschema marks it on the call).
		return middleware.Chain(mw, c.args.Middleware())
	}
	return mw
}

func (c *config) policiesLayer() (middleware.Middleware, error) {
	if len(c.policies) == 0 {
		return nil, nil
	}
	mw, err := policy.Middleware(nil, c.policies...)
	if err != nil {
		return nil, err
	}
	if c.approval || c.sideEffectsOf() != middleware.NoSideEffects {
		mw = oncePerAttempt(mw)
	}
	return mw, nil
}

func (c *config) breakerLayer() middleware.Middleware {
	if c.breaker == nil {
		return nil
	}
	return c.breaker.Middleware()
}

func (c *config) bulkheadLayer() middleware.Middleware {
	if c.bulkhead == nil {
		return nil
	}
	return c.bulkhead.Middleware()
}

// attemptLayer is the hard attempt timeout. The attempt span starts where
// it numbers the attempt, on the caller's goroutine, not on the attempt's
// own.
func (c *config) attemptLayer() middleware.Middleware {
	var hook layer.AttemptHook
	if c.hook != nil {
		hook = c.hook.AttemptHook()
	}
	return layer.AttemptTimeout(c.timeout, layer.MaxAbandoned(c.maxAbandoned), layer.WithAttemptHook(hook))
}
