// Package toolcall lets a program that drives a function-calling model
// itself (llms.WithTools and its own loop) use langchaingo tools with their
// real parameter schemas, and runs each turn's tool calls through them.
//
// langchaingo's OpenAI-functions agent advertises every tool as a function
// of one string argument, {"__arg1": string}, so the model never learns
// which arguments a tool takes. Definitions builds the function definitions
// from each tool's own JSON Schema instead: the schema a *toolsafe.Tool
// checks (toolsafe.WithArgsSchema), or the one a tool describes itself with
// (argschema.Schemer; the tools of an MCP server do, see the module
// github.com/toolsafe/toolsafe/mcptools). Dispatch runs the calls the model
// made in one turn and returns the responses, and Messages records the turn
// in the conversation for the next request:
//
//	defs, err := toolcall.Definitions(tools...)
//	if err != nil { ... }
//	for {
//		resp, err := llm.GenerateContent(ctx, history, llms.WithTools(defs))
//		if err != nil { ... }
//		choice := resp.Choices[0]
//		if len(choice.ToolCalls) == 0 {
//			return choice.Content, nil // the final answer
//		}
//		results, err := toolcall.Dispatch(ctx, tools, choice.ToolCalls)
//		if err != nil {
//			return "", err // a pause for approval, or ctx ended
//		}
//		history = append(history, toolcall.Messages(choice.ToolCalls, results)...)
//	}
//
// # Failures
//
// A tool wrapped with toolsafe answers every failure meant for the model as
// its response (a retry that ran out, a tool-error, invalid arguments), so
// the model sees it and the loop goes on. Two outcomes come back from
// Dispatch as errors, as they do from toolsafe's Tool.Call: an approval
// pause (*approval.Required) and the end of ctx. A call that names
// no tool of the list gets a response saying so, as langchaingo's executor
// does.
package toolcall
