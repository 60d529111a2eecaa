package call

import (
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

// Event is a fact about a call, recorded by the layer that saw it happen
// (Record) and told to the call's observers (Observe), in the order it
// happened. The events are the types of this file; Surface builds the
// call's Failure from them, and otelhook turns them into span events.
type Event interface{ isEvent() }

// RetryScheduled: attempt Attempt (1-based) failed with Err, which is
// retried after Delay. Recorded by the retry layer (package policy) before
// it waits; Result.Delays lists the delays.
type RetryScheduled struct {
	Attempt int
	Delay   time.Duration
	Err     error
}

// RetriesStopped: the retry layer will not retry the transient failure of
// attempt Attempt: retries ran out, the next attempt could not start in
// time, or its wait was too long. Wait is how long the upstream asked to
// wait (Retry-After) when that was why, else 0. The call's Failure is then
// not Retryable: the model should not repeat it by hand.
type RetriesStopped struct {
	Attempt int
	Wait    time.Duration
}

// DeadlinePassed: the call's own deadline, Deadline long, passed before the
// call ended. Recorded by the Deadline layer.
type DeadlinePassed struct {
	Deadline time.Duration
}

// Waiting: the call now waits, outside an attempt, for For (the approval
// gate for its approver, the bulkhead for a free slot of Dependency), or,
// with For NotWaiting, no longer does. A wait that ends because the call's
// context ended is not cleared, so a deadline that passed then tells the
// model the tool was never called.
type Waiting struct {
	For        string
	Dependency string
}

// What a call waits for outside an attempt (Waiting.For).
const (
	// NotWaiting: the call is in an attempt, between attempts, or done.
	NotWaiting = ""
	// WaitingForApproval: the approval gate is waiting for its approver.
	WaitingForApproval = "approval"
	// WaitingForSlot: the bulkhead is waiting for a free slot.
	WaitingForSlot = "a free slot"
)

// AttemptAbandoned: attempt Attempt was still running when its time was up
// and the attempt timeout gave control back; it goes on in the background.
type AttemptAbandoned struct {
	Attempt int
}

// AbandonedReturned: the tool of abandoned attempt Attempt has finally
// returned, maybe long after the call ended. It is told on the attempt's
// own goroutine, after the permits the attempt held are back.
type AbandonedReturned struct {
	Attempt int
}

// BreakerStateChanged: the circuit breaker Breaker (the dependency it
// guards, or "") went from From to To during the call; states are
// failsafe-go's names: "closed", "open", "half-open".
type BreakerStateChanged struct {
	Breaker, From, To string
}

// BreakerProbe: the circuit breaker Breaker let this attempt through as a
// half-open probe; the probe ends when the attempt's tool really returns.
type BreakerProbe struct {
	Breaker string
}

// FallbackRouted: the call was routed to its alternative tool To, because
// the primary failed with Primary.
type FallbackRouted struct {
	To      string
	Primary *middleware.Failure
}

// FallbackFailed: the alternative tool the call was routed to failed too,
// with Failure (its own call's).
type FallbackFailed struct {
	Failure *middleware.Failure
}

// FallbackSkipped: the alternative tool To was not called, because it is
// already on this call's fallback path (a fallback cycle).
type FallbackSkipped struct {
	To string
}

// Replayed: the call was not made itself. It was answered from the run
// ledger's record of an earlier call of the run, or, when Joined is set,
// it shares the outcome (answer, failure or pause) of the identical call
// Joined (its call ID) that was in flight when it was made. Fallback is
// the alternative that answered then, if one did.
type Replayed struct {
	Fallback string
	Joined   string
}

// ChangedByPerson: a person changed the call's arguments before approving
// it, and its attempt runs with theirs; Note is the sentence that tells
// the model so (which fields, their new values). Recorded by the approval
// gate before the attempt, so that a failure of the changed call tells the
// model too (Failure.Changed).
type ChangedByPerson struct {
	Note string
}

func (Replayed) isEvent()            {}
func (ChangedByPerson) isEvent()     {}
func (RetryScheduled) isEvent()      {}
func (RetriesStopped) isEvent()      {}
func (DeadlinePassed) isEvent()      {}
func (Waiting) isEvent()             {}
func (AttemptAbandoned) isEvent()    {}
func (AbandonedReturned) isEvent()   {}
func (BreakerStateChanged) isEvent() {}
func (BreakerProbe) isEvent()        {}
func (FallbackRouted) isEvent()      {}
func (FallbackFailed) isEvent()      {}
func (FallbackSkipped) isEvent()     {}

// Observer is told the events of a call (see Observe). OnEvent is
// called on the goroutine of the layer that recorded the event, outside
// every lock of toolsafe's; it must not block. An observer with state of
// its own (otelhook keeps a span) implements it on a pointer to that state.
type Observer interface {
	OnEvent(e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(e Event)

// OnEvent calls f.
func (f ObserverFunc) OnEvent(e Event) { f(e) }
