package toolsafe

import (
	"errors"
	"fmt"
)

// ErrConfig is what the error of New matches (test it with errors.Is), and
// Err and every call of a Tool made by Wrap, when the tool cannot be
// wrapped as asked: an invalid option, a tool that is nil or a *Tool
// already (ErrWrapped matches too), or a guard set twice. A guard is set
// once: an option that would replace one an earlier option set (a second
// WithApproval, WithSideEffects, WithCallLimits, WithTimeout, ...; the list
// is on Option) is refused, naming both, never "the later wins", so no
// option, helper or policies file can silently weaken what another set.
var ErrConfig = errors.New("toolsafe: the tool cannot be wrapped as configured")

// configError is an error of New: it reads as the problems it holds, and
// matches ErrConfig.
type configError struct{ err error }

func (e *configError) Error() string        { return e.err.Error() }
func (e *configError) Unwrap() error        { return e.err }
func (e *configError) Is(target error) bool { return target == ErrConfig }

// guard is one setting that an option sets once (see Option).
type guard int

const (
	guardRetry guard = iota
	guardTimeout
	guardMaxAbandoned
	guardCallLimits
	guardDeadline
	guardArgs
	guardBreaker
	guardBulkhead
	guardBudget
	guardSideEffects
	guardApproval
	guardDestructive
	guardFallback
	guardCount
)

// guards says, for each guard, what it is and what replacing it would
// lose; fix, when set, says how to get what a second option wanted.
var guards = [guardCount]struct{ what, lost, fix string }{
	guardRetry:        {"the retry policy", "its retry count, backoff and caps", ""},
	guardTimeout:      {"the attempt timeout", "the limit that holds a tool that ignores its context", ""},
	guardMaxAbandoned: {"the cap on abandoned attempts", "the cap on stuck calls", "give the cap once, with the timeout: WithTimeout(d, policy.MaxAbandoned(n))"},
	guardCallLimits:   {"the loop guard's limits", "the limits that stop a looping model", "give one WithCallLimits with every limit in one run.Limits"},
	guardDeadline:     {"the call's deadline", "the bound on the whole call", ""},
	guardArgs:         {"the argument schema", "the check of every call's input", "give one schema, with WithArgs"},
	guardBreaker:      {"the circuit breaker", "the breaker the tools of a dependency share", ""},
	guardBulkhead:     {"the bulkhead", "the limit on attempts in flight", ""},
	guardBudget:       {"the retry budget", "the budget the tools of a dependency share", "give the budget once, on the retry: WithRetry(policy.Retry{..., Budget: b})"},
	guardSideEffects:  {"the tool's side effects", "what keeps an action from being applied twice", "give one WithSideEffects, saying what the tool really does"},
	guardApproval:     {"the approval gate's approver", "the approver, which would never be asked", "give one WithApproval; to ask more than one approver, give it one Approver that asks them all (approval.ApproverFunc)"},
	guardDestructive:  {"how often the approver is asked", "", "give the mode once, with the approver: WithApproval(a, approval.ApproveEachAttempt)"},
	guardFallback:     {"the fallback", "the alternative the first named, and its gate", "give one WithFallback"},
}

// set records that the option called name sets g, and reports whether it
// may: a second option setting g is a configuration error naming both.
func (c *config) set(g guard, name string) bool {
	first := c.setBy[g]
	if first == "" {
		c.setBy[g] = name
		return true
	}
	given := name + " is given twice"
	if first != name {
		given = first + " and " + name + " are both given"
	}
	fix := guards[g].fix
	if fix == "" {
		fix = "give one " + name + ", with the value you mean"
	}
	why := fmt.Sprintf("each sets %s, and the second would silently replace the first's, dropping %s", guards[g].what, guards[g].lost)
	if guards[g].lost == "" {
		why = fmt.Sprintf("each sets %s; like every option that sets a guard it is given once, so that no option silently undoes another", guards[g].what)
	}
	c.errs = append(c.errs, fmt.Errorf("%s: %s; %s", given, why, fix))
	return false
}
