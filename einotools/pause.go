package einotools

import (
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolsafe/toolsafe/approval"
)

// pauseTypeName is the name under which Pause is registered for Eino's
// checkpoints (schema.RegisterName). It must never change: checkpoints
// written by one version are read by the next.
const pauseTypeName = "toolsafe_einotools_pause"

func init() {
	schema.RegisterName[*Pause](pauseTypeName)
}

// Pause is a call that waits for a person's approval, as an Eino interrupt
// carries it: both the interrupt's Info (what compose.InterruptCtx.Info
// holds) and the state saved in the checkpoint. It is approval.Required
// without the approver's error, which a checkpoint cannot keep.
type Pause struct {
	// Tool is the tool waiting; CallID the model's tool-call ID; Input the
	// call's arguments, to which a grant is bound.
	Tool, CallID, Input string
	// Reason says, for the person asked, why approval is needed now.
	Reason string
	// Attempt is the attempt that waits: 1, or more for a retry of a
	// destructive tool.
	Attempt int
	// IdempotencyKey is the paused call's key: the resumed call keeps it.
	IdempotencyKey string
	// RunID is the run the call paused in (package run), or "".
	RunID string
}

func pauseOf(ar *approval.Required) *Pause {
	return &Pause{Tool: ar.Tool, CallID: ar.CallID, Input: ar.Input, Reason: ar.Reason,
		Attempt: ar.Attempt, IdempotencyKey: ar.IdempotencyKey, RunID: ar.RunID}
}

// Required returns the pause as the approval.Required that run.Resume takes.
func (p *Pause) Required() *approval.Required {
	return &approval.Required{Tool: p.Tool, CallID: p.CallID, Input: p.Input, Reason: p.Reason,
		Attempt: p.Attempt, IdempotencyKey: p.IdempotencyKey, RunID: p.RunID}
}

// String says which tool waits for approval and why, for a person.
func (p *Pause) String() string { return p.Required().Error() }

// Pauses returns the pauses among the contexts of an Eino interrupt
// (adk.InterruptInfo.InterruptContexts, or compose.InterruptInfo's), keyed
// by interrupt ID: the keys to put in adk.ResumeParams.Targets. Contexts of
// other interrupts are left out; none gives an empty map.
func Pauses(contexts []*compose.InterruptCtx) map[string]*Pause {
	out := make(map[string]*Pause)
	for _, c := range contexts {
		if p, ok := c.Info.(*Pause); ok && c.IsRootCause {
			out[c.ID] = p
		}
	}
	return out
}
