// Package toolsafetest is a kit for testing langchaingo agents and tools
// that toolsafe protects, the way net/http/httptest is for HTTP handlers and
// OpenTelemetry's tracetest for spans. It has three parts, each usable
// alone; nothing in it is mocked below the tool under test.
//
// # A flaky upstream
//
// An Upstream is a real HTTP server on 127.0.0.1 whose answer to each
// request is scripted: pass it to a handler, reset the TCP connection
// (before or after applying the handler's side effect), answer 429 or 503
// with Retry-After, hang until the client gives up, answer slowly, or any of
// these at random from a seed (Chaos). It counts the requests that reached
// it, per path, so a test can compare them with the attempts toolsafe made.
// Give the tool under test a NoKeepAliveClient, so that net/http does not
// resend a reset request behind its back.
//
// See ExampleNewUpstream and ExampleApplyThenReset.
//
// # Scripted models
//
// A Model is an llms.Model for langchaingo's OpenAI-functions agent
// (agents.NewOpenAIFunctionsAgent) that answers with scripted turns: tool
// calls, each with its tool-call ID, then a final answer. It speaks the
// agent's encoding of tool arguments for the test, and records what the
// agent sent it, so a test can check the observations the model saw. It
// also drives a program's own loop that offers tools (llms.WithTools, as
// toolcall.Definitions makes them). For
// the MRKL agent (agents.NewOneShotAgent) and langchaingo's llms/fake,
// MRKLAction and MRKLAnswer write the texts such a model answers.
//
// # Span trees
//
// WriteSpanTree prints the spans of toolsafe calls (from tracetest's
// SpanRecorder or InMemoryExporter) as an indented tree: each call, its
// attempts, the retries between them and why each attempt failed, so a test
// or an Example can show a whole call at a glance.
package toolsafetest
