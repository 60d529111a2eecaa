// Package einotools puts Eino's tools (github.com/cloudwego/eino) behind
// toolsafe's layers: New wraps one tool with toolsafe options, Middleware
// applies a policies file to a ToolsNode by tool name. It is a module of its
// own, so that programs without Eino do not get it.
//
//	refund, err := einotools.New(ctx, refundTool,
//		toolsafe.WithRetry(policy.Retry{MaxRetries: 2}), toolsafe.WithApproval(grants))
//	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Model: llm,
//		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{refund}}}})
//
// # What Eino sees
//
// A failure is the model's message with a nil error, since Eino ends the
// run on a tool's error. A call that waits for approval is an Eino
// interrupt whose Info is a *Pause (Pauses finds them). Resumed from its
// checkpoint, the call asks its approver again and continues under its
// idempotency key; in a run scoped with run.With, calls that completed are
// answered from the run ledger. The call ID is Eino's, on Result, spans and
// the ledger. A tool's own interrupt reaches Eino as it is, not retried.
// Calls a ToolsNode runs together count together against the
// loop guard and the bulkhead. A streaming tool is read to its end inside
// each attempt; an enhanced tool is refused (ErrUnsupported).
package einotools
