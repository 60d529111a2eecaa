package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
)

// Option configures Dispatch.
type Option interface {
	apply(*config)
}

type config struct {
	ids *toolsafe.CallIDs
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithCallIDs hands each call's ID (llms.ToolCall.ID) to the tool that runs
// it, through ids, so that a tool wrapped with toolsafe.WithCallIDs(ids)
// records it as its Result.CallID and the span attribute gen_ai.tool.call.id.
// Nil, like no WithCallIDs, means the tools make up their own call IDs.
func WithCallIDs(ids *toolsafe.CallIDs) Option {
	return optionFunc(func(c *config) { c.ids = ids })
}

// maxNamesListed bounds the tool names an unknown tool's response lists.
const maxNamesListed = 32

// Dispatch runs the tool calls of one model turn through ts, concurrently,
// and returns one response per call in the order of calls (the call's ID,
// function name and the tool's answer). Tools are looked up by name ignoring
// case; a call naming no tool is answered saying so and runs nothing. A tool
// with a JSON Schema (see Definitions) gets the arguments verbatim, one
// without gets the "__arg1" string, as langchaingo's agents do.
//
// It returns an error for an approval pause (*approval.Required) or the end
// of ctx, joined in the order of calls, along with the responses of the calls
// that answered: keep them, and once the pause is decided dispatch only the
// calls without a response (run.Resume continues the paused one). The other
// calls are not stopped. A tool's panic is raised again once all have
// returned. It runs nothing and returns an error when ctx has ended, ts holds
// a nil tool, or two names are equal but for case. See ExampleDispatch.
func Dispatch(ctx context.Context, ts []tools.Tool, calls []llms.ToolCall, opts ...Option) ([]llms.ToolCallResponse, error) {
	if ctx == nil {
		return nil, errors.New("toolcall: Dispatch needs a context, not nil")
	}
	var cfg config
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	byName, names, err := index(ts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	outs := make([]outcome, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { outs[i] = run(ctx, byName, names, c, cfg.ids) })
	}
	wg.Wait()

	resps := make([]llms.ToolCallResponse, 0, len(calls))
	var errs []error
	ctxCounted := false
	for i, o := range outs {
		if o.panicked {
			panic(o.panicValue)
		}
		if o.err == nil {
			resps = append(resps, llms.ToolCallResponse{ToolCallID: calls[i].ID, Name: functionName(calls[i]), Content: o.content})
			continue
		}
		if cerr := ctx.Err(); cerr != nil && errors.Is(o.err, cerr) {
			if ctxCounted {
				continue
			}
			ctxCounted = true
		}
		errs = append(errs, o.err)
	}
	switch len(errs) {
	case 0:
		return resps, nil
	case 1:
		return resps, errs[0]
	}
	return resps, errors.Join(errs...)
}

// Messages returns the messages that record one turn in the conversation:
// the model's message that made calls (role AI, one llms.ToolCall part per
// call), then one tool message per response (role Tool, its one
// llms.ToolCallResponse part), the form langchaingo's OpenAI client asks for.
// Append them to the history before asking the model again.
func Messages(calls []llms.ToolCall, resps []llms.ToolCallResponse) []llms.MessageContent {
	msgs := make([]llms.MessageContent, 0, 1+len(resps))
	ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	for _, c := range calls {
		ai.Parts = append(ai.Parts, c)
	}
	msgs = append(msgs, ai)
	for _, r := range resps {
		msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{r}})
	}
	return msgs
}

type outcome struct {
	content    string
	err        error
	panicked   bool
	panicValue any
}

// index maps the upper-cased names of ts to the tools, and lists the names.
func index(ts []tools.Tool) (map[string]tools.Tool, []string, error) {
	if err := toolsafe.Tools(ts).Check(); err != nil {
		return nil, nil, fmt.Errorf("toolcall: %w", err) // nil tools, names that collide
	}
	byName := make(map[string]tools.Tool, len(ts))
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		byName[strings.ToUpper(t.Name())] = t
		names = append(names, t.Name())
	}
	return byName, names, nil
}

// run runs one call, recovering a panic to raise it again on the caller's
// goroutine.
func run(ctx context.Context, byName map[string]tools.Tool, names []string, c llms.ToolCall, ids *toolsafe.CallIDs) (o outcome) {
	defer func() {
		if v := recover(); v != nil {
			o = outcome{panicked: true, panicValue: v}
		}
	}()
	if c.FunctionCall == nil || (c.Type != "" && c.Type != "function") {
		return outcome{content: fmt.Sprintf("The call %s names no function. %s", quoteID(c.ID), toolList(names))}
	}
	name := c.FunctionCall.Name
	t, ok := byName[strings.ToUpper(name)]
	if !ok {
		return outcome{content: fmt.Sprintf("%s is not a valid tool. %s", name, toolList(names))}
	}
	input := inputFor(t, c.FunctionCall.Arguments)
	if ids != nil {
		// A context of its own, so that concurrent calls of the same tool
		// with the same input each take their own ID.
		ctx = context.WithValue(ctx, callKey{}, &c)
		ids.HandleAgentAction(ctx, schema.AgentAction{Tool: t.Name(), ToolInput: input, ToolID: c.ID})
		defer ids.HandleAgentFinish(ctx, schema.AgentFinish{}) // drops an ID no tool took
	}
	out, err := t.Call(ctx, input)
	return outcome{content: out, err: err}
}

type callKey struct{}

// inputFor is the input t is given for arguments: them verbatim for a tool
// with a schema, the __arg1 string for one without when there is one.
func inputFor(t tools.Tool, arguments string) string {
	if schemaOf(t) != nil {
		if strings.TrimSpace(arguments) == "" {
			return "{}"
		}
		return arguments
	}
	var args map[string]any
	if json.Unmarshal([]byte(arguments), &args) == nil {
		if s, ok := args[arg1].(string); ok {
			return s
		}
	}
	return arguments
}

func functionName(c llms.ToolCall) string {
	if c.FunctionCall == nil {
		return ""
	}
	return c.FunctionCall.Name
}

func quoteID(id string) string {
	if id == "" {
		return "without an ID"
	}
	return fmt.Sprintf("%q", id)
}

// toolList tells the model which tools it can call.
func toolList(names []string) string {
	if len(names) == 0 {
		return "There are no tools to call."
	}
	listed := slices.Clone(names)
	more := ""
	if len(listed) > maxNamesListed {
		more = fmt.Sprintf(" and %d more", len(listed)-maxNamesListed)
		listed = listed[:maxNamesListed]
	}
	return "Call one of these tools instead: " + strings.Join(listed, ", ") + more + "."
}
