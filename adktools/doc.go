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
// call ID is ADK's (CallID). An approval pause asks the user through ADK's
// tool confirmation; Confirmations decides the resumed call, which keeps
// the paused call's idempotency key (see Requests and Answer). ADK starts
// the span "execute_tool {tool}": trace with otelhook.WithHostCallSpan, so
// that toolsafe adds to it and starts only the attempt spans.
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
