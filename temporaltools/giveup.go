package temporaltools

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe/middleware"
)

// gaveUp is the model's message for a call Temporal stopped retrying: its
// retry policy's attempts ran out, its ScheduleToCloseTimeout passed, or
// the worker never answered (a StartToCloseTimeout or heartbeat timeout of
// the last attempt). It says what was tried, in toolsafe's words, as a
// toolsafe tool says it when its own retries run out: the tool, the
// attempts over every activity attempt, the time they took, the last
// attempt's reason, whether the action may have been applied, and not to
// call the tool again with the same input. last is the last failure's
// details, when have.
func gaveUp(tool string, in callInput, opts workflow.ActivityOptions, elapsed time.Duration,
	ae *temporal.ActivityError, te *temporal.TimeoutError, last outcome, have bool) outcome {
	n := 0
	if have {
		n = last.Attempt
	}
	if ae.RetryState() == enumspb.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED && opts.RetryPolicy != nil {
		n = max(n, int(opts.RetryPolicy.MaximumAttempts))
	}
	n = max(n, 1)
	f := &middleware.Failure{Tool: tool, Attempts: in.PriorAttempts + n, Elapsed: elapsed}
	switch {
	case te != nil && (te.TimeoutType() != enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE || !have):
		// The last attempt did not answer in time: the worker died or hung.
		f.Kind = middleware.KindTimeout
		switch te.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_HEARTBEAT:
			f.Timeout = opts.HeartbeatTimeout
		case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE:
			f.Timeout = opts.ScheduleToCloseTimeout
		default:
			f.Timeout = opts.StartToCloseTimeout
		}
		if !have || !last.ReadOnly {
			f.SideEffect = middleware.SideEffectUnknown
		}
	case have:
		f.Kind, f.Timeout, f.Dependency = last.Kind, last.Timeout, last.Dependency
		if last.Reason != "" {
			f.Cause = middleware.NewToolError("%s", last.Reason)
		}
		exhausted := opts.RetryPolicy != nil && opts.RetryPolicy.MaximumAttempts > 0 && n >= int(opts.RetryPolicy.MaximumAttempts)
		switch {
		case last.Kind == middleware.KindCircuitOpen:
			f.Wait = last.Wait
		case last.Kind == middleware.KindFailed && !exhausted:
			f.Wait = last.Wait // attempts were left: the Retry-After did not fit the ScheduleToCloseTimeout
		}
		if last.SideEffectUnknown {
			f.SideEffect = middleware.SideEffectUnknown
		}
	default:
		// Not a failure of a Tool's activity (the activity type is not
		// registered, the worker could not decode the input): no words of
		// toolsafe's to pass on, and none of its text either.
		f.Kind = middleware.KindFailed
	}
	return outcome{Status: statusError, Kind: f.Kind, Message: f.Error(), ToolAttempts: f.Attempts - in.PriorAttempts,
		SideEffectUnknown: f.SideEffect == middleware.SideEffectUnknown, ReadOnly: have && last.ReadOnly}
}
