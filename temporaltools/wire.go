package temporaltools

import (
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// callInput is the input of a tool's activity, as Run.Call schedules it.
type callInput struct {
	// Input is the model's input for the tool.
	Input string `json:"input"`
	// CallID is the call's ID; RunID the toolsafe run it is part of.
	CallID string `json:"call_id"`
	RunID  string `json:"run_id"`
	// Counts are the run's calls before this one, for the loop guard.
	Counts run.Counts `json:"counts"`
	// Key is the idempotency key of the call this activity continues
	// (one that paused for approval); "" for a new call.
	Key string `json:"key,omitempty"`
	// Decision is the person's decision the workflow waited for.
	Decision *decision `json:"decision,omitempty"`
	// PriorAttempts are the attempts earlier activities of the call made.
	PriorAttempts int `json:"prior_attempts,omitempty"`
}

// decision is a person's answer, bound to the call it was given for.
type decision struct {
	RequestID      string            `json:"request_id"`
	Decision       approval.Decision `json:"decision"`
	Tool           string            `json:"tool"`
	CanonicalInput string            `json:"canonical_input"`
	RunID          string            `json:"run_id"`
	CallID         string            `json:"call_id"`
}

// The statuses of an outcome returned as an activity's result.
const (
	statusOK     = "ok"
	statusError  = "error"
	statusPaused = "paused"
)

// outcome is what a tool's activity returns as its result, or puts in the
// details of its error: toolsafe's words for the attempt, never a foreign
// error's text.
type outcome struct {
	// Status is statusOK, statusError (a failure for the model) or
	// statusPaused; "" in an error's details.
	Status string `json:"status,omitempty"`
	// Output is the model's observation of an answer.
	Output   string `json:"output,omitempty"`
	Fallback string `json:"fallback,omitempty"`
	// Kind, Message, Reason: the failure's kind, its message for the model
	// and its model-safe reason (middleware.Reason).
	Kind    middleware.Kind `json:"kind,omitempty"`
	Message string          `json:"message,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	// Attempt is the activity attempt (from 1); ToolAttempts the attempts
	// toolsafe made in it.
	Attempt      int `json:"attempt"`
	ToolAttempts int `json:"tool_attempts"`
	// Retryable is the failure's Retryable.
	Retryable         bool `json:"retryable,omitempty"`
	SideEffectUnknown bool `json:"side_effect_unknown,omitempty"`
	// ReadOnly reports that the tool only reads.
	ReadOnly   bool          `json:"read_only,omitempty"`
	Timeout    time.Duration `json:"timeout,omitempty"`
	Wait       time.Duration `json:"wait,omitempty"`
	Dependency string        `json:"dependency,omitempty"`
	WaitingFor string        `json:"waiting_for,omitempty"`
	// Key and CallID are the call's.
	Key    string `json:"key"`
	CallID string `json:"call_id"`
	// Pause is the call waiting for approval, for statusPaused.
	Pause *pause `json:"pause,omitempty"`
}

// pause is a call waiting for a person's decision.
type pause struct {
	// Call is what the person is shown.
	Call approval.CallInfo `json:"call"`
	// Reason says why approval is needed now.
	Reason string `json:"reason"`
	// Attempt is the activity attempt that paused.
	Attempt int `json:"attempt"`
}
