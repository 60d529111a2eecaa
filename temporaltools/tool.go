package temporaltools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/tools"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
)

// Tool is a toolsafe tool run as a Temporal activity: register it on a
// worker with Register, and call it from a workflow with Run.Call. It has
// the Name and Description of the tool it wraps. It is safe for concurrent
// use when the wrapped tool is; its configuration never changes after New.
type Tool struct {
	safe *toolsafe.Tool
}

// New wraps t with toolsafe's layers, configured by opts as toolsafe.New
// is, for running as an activity. Three things differ from toolsafe.New:
//
//   - toolsafe makes one attempt per activity attempt: Temporal's retry
//     policy retries, so the retries are never both Temporal's and
//     toolsafe's, unless RetryInActivity asks for both (a plain
//     toolsafe.WithRetry among opts is refused, matching
//     toolsafe.ErrConfig: an option is never silently overridden);
//   - the call ID is the workflow's (Run.Call's callID), and the
//     idempotency key is Key of the workflow and the activity, the same
//     for every attempt of the activity (an option that sets the call ID
//     is overridden);
//   - the call is scoped to the workflow's run: the loop guard
//     (toolsafe.WithCallLimits) counts the calls the workflow made.
//
// The attempt timeout, the breaker, the bulkhead, argument validation, the
// approval gate (give it Decisions) and the spans stay as opts say. New
// returns an error naming every problem when t is nil or an option is
// invalid.
func New(t tools.Tool, opts ...toolsafe.Option) (*Tool, error) {
	both := false
	for _, o := range opts {
		if _, ok := o.(retryInActivity); ok {
			both = true
		}
	}
	all := append([]toolsafe.Option(nil), opts...)
	if !both {
		all = append(all, toolsafe.WithRetry(policy.Retry{}))
	}
	all = append(all, toolsafe.WithCallIDs(toolsafe.CallIDFunc(callIDOf)))
	safe, err := toolsafe.New(t, all...)
	if err != nil && !both && errors.Is(err, toolsafe.ErrConfig) {
		if _, alone := toolsafe.New(t, append(slices.Clip(opts), toolsafe.WithCallIDs(toolsafe.CallIDFunc(callIDOf)))...); alone == nil {
			// opts are fine but for the one retry New adds: they set
			// toolsafe's retry already.
			// Said in its own words: toolsafe's "WithRetry is given
			// twice" would name a second option the caller never gave.
			return nil, fmt.Errorf("temporaltools: tool %q: toolsafe.WithRetry is refused for a tool run as an activity, which makes one attempt per activity attempt as Temporal's retry policy (RunOptions.Activity.RetryPolicy) retries it: drop toolsafe.WithRetry, or give RetryInActivity for toolsafe's retries inside each attempt as well (%w)", t.Name(), toolsafe.ErrConfig)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("temporaltools: %w", err)
	}
	return &Tool{safe: safe}, nil
}

// RetryInActivity is toolsafe.WithRetry for a tool run as an activity: r's
// retries run inside each activity attempt, as well as Temporal's attempts
// of the activity, so a call may make up to (r.MaxRetries+1) × the retry
// policy's MaximumAttempts attempts. Give it to New only when that is what
// you want (a fast retry of a blip, under a slow retry policy); without it
// toolsafe makes one attempt per activity attempt.
func RetryInActivity(r policy.Retry) toolsafe.Option {
	return retryInActivity{toolsafe.WithRetry(r)}
}

type retryInActivity struct{ toolsafe.Option }

// Name returns the wrapped tool's name.
func (t *Tool) Name() string { return t.safe.Name() }

// Description returns the wrapped tool's description.
func (t *Tool) Description() string { return t.safe.Description() }

// ActivityName is the activity type a tool named tool is registered as and
// called by: "toolsafe:" and the name. The prefix keeps a model's choice of
// tool from naming any other activity of the worker.
func ActivityName(tool string) string { return activityPrefix + tool }

const activityPrefix = "toolsafe:"

// Register registers each tool's activity on r, a worker or a test
// environment, under ActivityName of its name. It returns an error, and
// registers nothing, for a nil tool or two tools whose names collide
// (toolsafe.NamesCollide). Registering a name twice on one worker panics,
// as the SDK does.
func Register(r worker.ActivityRegistry, ts ...*Tool) error {
	if r == nil {
		return errors.New("temporaltools: the registry is nil: pass a worker.Worker or a test environment")
	}
	var problems []string
	names := make([]string, 0, len(ts))
	for i, t := range ts {
		if t == nil || t.safe == nil {
			problems = append(problems, fmt.Sprintf("tool %d of %d is nil", i+1, len(ts)))
			continue
		}
		names = append(names, t.Name())
	}
	if err := toolsafe.CheckNames(names...); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("temporaltools: %s", strings.Join(problems, "; "))
	}
	for _, t := range ts {
		r.RegisterActivityWithOptions(t.execute, activity.RegisterOptions{Name: ActivityName(t.Name())})
	}
	return nil
}

// Key is the idempotency key of the calls made by the activity activityID
// of the workflow execution workflowID and runID: 32 hex digits of a
// SHA-256 of the three, the same for every attempt of the activity. A call
// continued after an approval keeps the key of the call that paused. A
// workflow reset or continued as new is another run: its calls get other
// keys.
func Key(workflowID, runID, activityID string) string {
	sum := sha256.Sum256([]byte("toolsafe/temporal\x00" + workflowID + "\x00" + runID + "\x00" + activityID))
	return hex.EncodeToString(sum[:16])
}

// execute is the activity: one attempt of the call in, through toolsafe's
// layers, settled as Temporal must see it (see settle).
func (t *Tool) execute(ctx context.Context, in callInput) (outcome, error) {
	info := activity.GetInfo(ctx)
	key := in.Key
	if key == "" {
		key = Key(info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID)
	}
	runID := in.RunID
	if runID == "" {
		runID = info.WorkflowExecution.ID
	}
	st := &attempt{callID: in.CallID, temporal: int(info.Attempt), prior: in.PriorAttempts, decision: in.Decision}
	l := &callLedger{tool: t.Name(), key: key, counts: in.Counts}
	r := t.safe.Run(run.With(withAttempt(ctx, st), runID, l), in.Input)
	return settle(ctx, st, l, r)
}
