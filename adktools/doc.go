// Package adktools puts toolsafe's layers around the function tools of ADK
// for Go (google.golang.org/adk/v2): Wrap an ADK tool and give the result
// to llmagent.Config.Tools, and its calls get retries, the attempt timeout,
// the deadline, the circuit breaker and bulkhead, the run ledger and the
// loop guard, as toolsafe.Wrap gives a langchaingo tool:
//
//	refund := adktools.Wrap(refundTool,
//		toolsafe.WithRetry(policy.Retry{MaxRetries: 2}),
//		toolsafe.WithTimeout(2*time.Second),
//		toolsafe.WithApproval(adktools.Confirmations(nil)),
//		toolsafe.WithTracing(otelhook.New(otelhook.WithHostCallSpan())),
//	)
//
// # How a call crosses
//
// ADK's decoded arguments are marshalled to JSON, toolsafe's input, and
// checked against the declaration's ParametersJsonSchema before any
// attempt. A result map is the answer; toolsafe's failures reach the model
// as its message ({"error": ...} from ADK), never the upstream's text. The
// call ID is ADK's (CallID). ADK starts the span "execute_tool {tool}":
// trace with otelhook.WithHostCallSpan, so that toolsafe adds to it and
// starts only the attempt spans.
//
// # Confirmations
//
// An approval pause asks the user through ADK's tool confirmation:
// Requests lists what waits, and the session run again with Answer(ID, ...)
// resumes the call, which Confirmations decides and which keeps the paused
// call's idempotency key. Each pause has a random token of its own, kept in
// the session's state and carried by Request.ID; the model never sees it.
// An answer decides a pause only with its token, once: an answer sent again
// (a double click), an answer to a confirmation request the model made up,
// or one whose call is not the call that paused decides nothing: the call
// is not run (no attempt, no Result), no approver is asked, the pause still
// waiting is left as it was, and the model is told the confirmation decides
// nothing. ADK's own
// clients (adk web, the console launcher) answer without the token, so
// their answers decide nothing either: answer with Answer.
//
// A resumed call that needs approval again (a destructive tool's retry)
// pauses again; ADK v2.2.0 turns no confirmation asked on its resume path
// into a request of its own (google/adk-go#1538), so the pause is asked
// through the request the user answered: Requests lists it on the event of
// the call's answer (look at every event of a run, not only the last), and
// the model is told the user was asked again. A fallback's alternative that
// needs approval behind the tool's gate cannot be asked through ADK (it
// confirms only the call the model made): the model is told so, and the
// alternative is not run.
//
// # What cannot be seen, and what is not supported
//
// toolsafe sees the arguments only after ADK decoded them into a map: a key
// the model repeated is gone (ADK kept one of them), so it cannot be
// refused; keys that differ only in case are still seen, and refused as
// args-invalid. ADK records the arguments and the answer on its own span
// whatever otelhook's options say. Long-running tools are refused by New,
// and a streaming tool's RunStream is not used: its calls go through Run.
// An attempt given up by the attempt timeout must not touch ctx.State or
// ctx.Actions after it returns: ADK reads them when the call ends.
package adktools
