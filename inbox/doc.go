// Package inbox is the approvals inbox for people: an http.Handler that
// lists the calls waiting for approval (tool, input, reason, run, call,
// attempt, age), shows one in detail, and lets the person approve or deny
// it with a comment; every answer goes to an audit trail, with a page and a
// JSON endpoint. It works over any Store: Memory for an approval.Grants,
// or redisstore's Grants for a fleet. It uses the standard library only.
//
// # Security
//
// Tool inputs come from a model, so from whoever talks to it: the handler
// renders inputs, reasons and comments as text only (html/template, no
// inline script, and a Content-Security-Policy that allows none). It will
// not start without an identity function, and refuses every request it
// does not identify. Each decision form carries a token bound to the user
// and to the exact request shown (its ID, which changes when the call asks
// again with other details); a POST without it, or from another origin,
// is refused. The Store records an answer and its audit line in one step,
// so two approvers clicking at once, or a double click, make one decision.
//
// # What a person sees
//
// A decision covers the request shown, character for character: every
// field an agent controls (tool, input, run, call, idempotency key; the
// audit's names and comments) is shown through Reveal, so characters a
// person could not see, or that reorder text (U+202E, U+200B), appear as
// their codes, as does a combining mark that makes a Latin, Greek,
// Cyrillic or Armenian letter look like another ("Jose\u0301"); right-to-left
// values are isolated (<bdi dir="auto">), and the page warns of each
// hidden character, of values that mix Latin with Cyrillic, Greek or
// Armenian letters, marking the odd letters, and of values of Cyrillic or
// Greek letters that all look Latin (Warnings). A
// request is one tool, input and run: two runs waiting on the same call
// are two rows, and an answer is used only by its own run's call.
//
// # Who decides
//
// WithAuthorize (Approvers, for per-tool groups) says who may decide
// what: a person is shown only what they may decide, and is refused (403,
// logged at WARN, and over an EventStore recorded in the audit trail for
// those who may decide it) anything else. Over a Replier store (Memory,
// redisstore's Grants), a tool's quorum (approval.Grants.Quorum) makes
// each approval a vote, shown on the request's page ("1 of 2
// approvals"); WithInputCheck offers "Approve with
// changes", whose grant covers the edited input only; a denial may carry
// a message for the model. Package webhook tells a chat when a request
// waits and when it is decided.
//
// # Updates
//
// The list page polls (every 2 s by default, WithPollInterval) for the
// pending requests and the recent answers: no reload, no open connection
// per viewer. It works without script too, by reloading. When the store's
// list was full and dropped requests (Overflower), the list says how many
// and since when, and the audit trail names each one dropped.
package inbox
