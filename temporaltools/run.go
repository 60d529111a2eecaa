package temporaltools

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// RunOptions configures a Run. The zero RunOptions is ready to use.
type RunOptions struct {
	// ID is the toolsafe run ID of the workflow's calls (run.ID, the
	// RunID a decision is bound to); "" means the workflow ID.
	ID string
	// Activity are the options of the tools' activities: their timeouts
	// and Temporal's retry policy, which retries the transient failures.
	// The zero value means DefaultActivityOptions. Options that would
	// retry without end (no MaximumAttempts and no ScheduleToCloseTimeout)
	// are refused by NewRun. Give toolsafe.WithTimeout a shorter attempt
	// timeout than StartToCloseTimeout, so that a hung tool is toolsafe's
	// tool-timeout and a StartToCloseTimeout means the worker is gone.
	Activity workflow.ActivityOptions
	// ApprovalTimeout is how long a call waits for a person's decision
	// before it ends with tool-timeout, saying it was still waiting for
	// approval; zero means it waits until someone decides, for days if
	// need be (the wait is durable).
	ApprovalTimeout time.Duration
	// Tools are the names of the tools the model may call (the Names of
	// the Tools the workers register); a call naming another is answered
	// with a message listing them, and no activity is scheduled. Nil means
	// any name: a name no worker registered waits for one, as Temporal
	// does.
	Tools []string
	// MaxAudit caps the decisions the workflow keeps in its audit trail
	// (its memo, which Store reads), the oldest dropped first; zero means
	// DefaultMaxAudit.
	MaxAudit int
}

// DefaultMaxAudit is how many decisions a Run keeps in its audit trail
// when RunOptions.MaxAudit is zero: 20.
const DefaultMaxAudit = 20

// DefaultActivityOptions returns the activity options of a Run whose
// RunOptions.Activity is zero: a StartToCloseTimeout of 1 minute, and a
// retry policy of at most 5 attempts, waiting 1s, 2s, 4s, 8s between them
// (initial interval 1s, coefficient 2, at most 30s), unless the failure
// says how long to wait (Retry-After, an open breaker's time left).
func DefaultActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    5,
		},
	}
}

// Run is one agent run inside a workflow: it calls the tools registered
// with Register as activities, keeps the loop guard's counts in the
// workflow's state (rebuilt from history on replay, so every worker
// decides the same), and turns a pause for approval into a durable wait
// for a person's decision (see Store and DecideUpdate). Make one per
// workflow execution with NewRun, in the workflow function. Its methods
// must be called from the workflow's coroutines only, as all workflow
// code is.
type Run struct {
	id   string
	opts RunOptions
	exec workflow.Execution

	calls   int // calls made, for the call IDs made up
	counts  counter
	pending []*waiting
	audit   []approval.Record
	asked   uint64 // requests made, for their IDs
}

// NewRun returns the Run of the workflow ctx belongs to, and registers
// its update handler (DecideUpdate) and query handler (ApprovalsQuery).
// It returns an error for activity options that would retry without end
// or have no timeout, or a negative ApprovalTimeout or MaxAudit.
func NewRun(ctx workflow.Context, opts RunOptions) (*Run, error) {
	if opts.Activity.StartToCloseTimeout == 0 && opts.Activity.ScheduleToCloseTimeout == 0 && opts.Activity.RetryPolicy == nil {
		def := DefaultActivityOptions()
		def.TaskQueue, def.ActivityID = opts.Activity.TaskQueue, opts.Activity.ActivityID
		opts.Activity = def
	}
	var problems []string
	a := opts.Activity
	if a.StartToCloseTimeout <= 0 && a.ScheduleToCloseTimeout <= 0 {
		problems = append(problems, "the activity options have no StartToCloseTimeout or ScheduleToCloseTimeout: give one (DefaultActivityOptions has 1 minute)")
	}
	if a.ScheduleToCloseTimeout <= 0 && (a.RetryPolicy == nil || a.RetryPolicy.MaximumAttempts <= 0) {
		problems = append(problems, "the activity retry policy has no MaximumAttempts and there is no ScheduleToCloseTimeout, so Temporal would retry a dependency that is down without end: set RetryPolicy.MaximumAttempts (DefaultActivityOptions has 5) or ScheduleToCloseTimeout")
	}
	if a.ActivityID != "" {
		problems = append(problems, "the activity options name an ActivityID: leave it empty, each call is an activity of its own")
	}
	if opts.ApprovalTimeout < 0 {
		problems = append(problems, fmt.Sprintf("the approval timeout %v is negative: use 0 to wait until someone decides", opts.ApprovalTimeout))
	}
	if opts.MaxAudit < 0 {
		problems = append(problems, fmt.Sprintf("MaxAudit %d is negative: use 0 for the default of %d", opts.MaxAudit, DefaultMaxAudit))
	}
	if err := toolsafe.CheckNames(opts.Tools...); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("temporaltools: %s", strings.Join(problems, "; "))
	}
	info := workflow.GetInfo(ctx)
	r := &Run{id: opts.ID, opts: opts, exec: info.WorkflowExecution, counts: newCounter()}
	if r.id == "" {
		r.id = info.WorkflowExecution.ID
	}
	if err := r.handle(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// ID is the run's toolsafe run ID.
func (r *Run) ID() string { return r.id }

// Result is how one call of a tool ended, as Run.Call gives it.
type Result struct {
	// Tool is the tool called; CallID the call's ID.
	Tool, CallID string
	// Observation is what the model is to be given: the tool's answer, or
	// toolsafe's message for a failure (what went wrong, what was tried,
	// what to do next); never a foreign error's text.
	Observation string
	// Kind is the failure's kind; "" when the tool answered.
	Kind middleware.Kind
	// Attempts is how many attempts were made at the tool over every
	// activity attempt (0 when none reached it).
	Attempts int
	// Elapsed is the time from the schedule of the activity that ended
	// the call to its end, in workflow time, Temporal's waits between
	// attempts included (a wait for approval is not).
	Elapsed time.Duration
	// Fallback is the alternative tool that answered, if one did.
	Fallback string
	// SideEffectUnknown reports that the call's action may have been
	// applied without an answer: the model is told to check first.
	SideEffectUnknown bool
	// Approval is the person's decision the call ran under, if it waited
	// for one.
	Approval *approval.Record
}

// Status returns "ok" when the tool answered, else "error".
func (r Result) Status() string {
	if r.Kind == "" {
		return "ok"
	}
	return "error"
}

// Call calls tool with input, the model's tool call callID ("" makes one
// up, the same on every replay), as the activity ActivityName(tool), and
// returns what the model is to be told. Transient failures are retried by
// Temporal as the activity options say, under one idempotency key; a
// failure meant for the model comes back as toolsafe's message; when
// Temporal gives up, the message says what was tried. A call that needs
// approval waits, durably, for a person's decision (see Store and
// DecideUpdate), then continues under the paused call's key.
//
// The error is not nil only when the workflow itself ends the call: ctx
// canceled (the workflow's cancellation) or the workflow failing to
// schedule the activity.
func (r *Run) Call(ctx workflow.Context, tool, input, callID string) (Result, error) {
	r.calls++
	if callID == "" {
		callID = fmt.Sprintf("call-%d", r.calls)
	}
	if r.opts.Tools != nil {
		name, ok := r.lookup(tool)
		if !ok {
			return Result{Tool: tool, CallID: callID, Kind: middleware.KindToolError, Observation: r.unknownTool(tool)}, nil
		}
		tool = name
	}
	canon, err := canonical.JSON(input)
	if err != nil {
		canon = input // the activity refuses it as args-invalid
	}
	g := r.counts.group(tool, canon)
	in := callInput{Input: input, CallID: callID, RunID: r.id, Counts: r.counts.before(tool, g)}
	r.counts.start(tool, g)
	var approved *approval.Record
	for {
		start := workflow.Now(ctx)
		var o outcome
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, r.opts.Activity), ActivityName(tool), in).Get(ctx, &o)
		if err != nil {
			o, err = r.ended(ctx, tool, in, workflow.Now(ctx).Sub(start), err)
			if err != nil {
				r.counts.end(tool, g, run.Entry{Kind: middleware.KindCanceled})
				return Result{}, err
			}
		}
		if o.Status == statusPaused && o.Pause != nil {
			r.counts.end(tool, g, run.Entry{Kind: middleware.KindApprovalRequired}) // not made: not counted while it waits
			d, rec, err := r.wait(ctx, o.Pause)
			if err != nil {
				return Result{}, err
			}
			if d == nil {
				f := &middleware.Failure{Kind: middleware.KindTimeout, Tool: tool, Timeout: r.opts.ApprovalTimeout, WaitingFor: "approval"}
				return Result{Tool: tool, CallID: o.Pause.Call.CallID, Kind: f.Kind, Observation: f.Error(), Attempts: in.PriorAttempts}, nil
			}
			approved = rec
			in.Counts = r.counts.before(tool, g)
			r.counts.start(tool, g)
			in.Key, in.CallID, in.Decision = o.Pause.Call.IdempotencyKey, o.Pause.Call.CallID, d
			in.PriorAttempts += o.Pause.Attempt - 1
			continue
		}
		res := Result{Tool: tool, CallID: in.CallID, Kind: o.Kind, Attempts: in.PriorAttempts + max(o.Attempt-1, 0) + o.ToolAttempts,
			Elapsed: workflow.Now(ctx).Sub(start), Fallback: o.Fallback, SideEffectUnknown: o.SideEffectUnknown, Approval: approved}
		if o.CallID != "" {
			res.CallID = o.CallID
		}
		res.Observation = o.Message
		if o.Status == statusOK {
			res.Kind, res.Observation = "", o.Output
		}
		r.counts.end(tool, g, run.Entry{Kind: res.Kind, Retryable: o.Retryable, SideEffectUnknown: o.SideEffectUnknown})
		return res, nil
	}
}

// ended is the outcome of the activity of in that failed with err, as the
// model is to hear it: a failure Temporal was told not to retry says so
// in toolsafe's words (its details); one Temporal gave up on (its retry
// policy's attempts or ScheduleToCloseTimeout spent, a worker that never
// answered) says what was tried. It returns an error when the workflow
// itself ended the call.
func (r *Run) ended(ctx workflow.Context, tool string, in callInput, elapsed time.Duration, err error) (outcome, error) {
	if ctx.Err() != nil || temporal.IsCanceledError(err) {
		return outcome{}, err
	}
	var ae *temporal.ActivityError
	if !errors.As(err, &ae) {
		return outcome{}, err // not the activity's: the workflow's own failure
	}
	var app *temporal.ApplicationError
	var last outcome
	have := errors.As(err, &app) && isKind(app.Type()) && app.HasDetails() && app.Details(&last) == nil
	var te *temporal.TimeoutError
	timedOut := errors.As(err, &te)
	if have && app.NonRetryable() && !timedOut {
		last.Status = statusError
		return last, nil
	}
	return gaveUp(tool, in, r.opts.Activity, elapsed, ae, te, last, have), nil
}

// isKind reports whether t is one of toolsafe's kinds, the type of the
// ApplicationErrors a Tool's activity returns.
func isKind(t string) bool {
	for _, k := range middleware.Kinds() {
		if string(k) == t {
			return true
		}
	}
	return false
}

// lookup returns the tool of RunOptions.Tools that name calls, as
// toolsafe.NamesCollide matches names.
func (r *Run) lookup(name string) (string, bool) {
	for _, t := range r.opts.Tools {
		if t == name {
			return t, true
		}
	}
	for _, t := range r.opts.Tools {
		if toolsafe.NamesCollide(t, name) {
			return t, true
		}
	}
	return "", false
}

// unknownTool is the model's message for a call of a tool it may not call.
func (r *Run) unknownTool(name string) string {
	if len(r.opts.Tools) == 0 {
		return fmt.Sprintf("%q is not a tool you can call: no tools are available. Answer without a tool.", name)
	}
	return fmt.Sprintf("%q is not a tool you can call. The tools are: %s. Call one of them, or answer without a tool.", name, strings.Join(r.opts.Tools, ", "))
}
