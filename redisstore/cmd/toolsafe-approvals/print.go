package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

func (c *cli) list(ctx context.Context) int {
	stdout := c.stdout
	reqs, err := c.g.Requests(ctx)
	if err != nil {
		return c.failed(err, false)
	}
	if len(reqs) == 0 {
		fmt.Fprintln(stdout, "Nothing waits.")
		return exitOK
	}
	now := time.Now()
	for _, q := range reqs {
		call := q.Call
		fmt.Fprintf(stdout, "%s\n", q.ID)
		fmt.Fprintf(stdout, "  tool     %s\n", clean(call.Tool))
		fmt.Fprintf(stdout, "  run      %s   call %s   attempt %d   waiting %s\n", clean(call.RunID), clean(call.CallID), call.Attempt, age(now.Sub(q.Since)))
		fmt.Fprintf(stdout, "  reason   %s\n", call.Reason())
		fmt.Fprintf(stdout, "  input    %s\n", indent(pretty(call.Input), "           "))
		warn(stdout, call, "", "")
		fmt.Fprintln(stdout)
	}
	return exitOK
}

func (c *cli) answer(ctx context.Context, d approval.Decision, by string, args []string) int {
	stdout, stderr := c.stdout, c.stderr
	fs := flag.NewFlagSet("answer", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	comment := fs.String("comment", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprint(stderr, "toolsafe-approvals: approve and deny take [-comment TEXT] and one ID, from list\n\n", usage)
		return exitUsage
	}
	if strings.TrimSpace(by) == "" {
		fmt.Fprintln(stderr, "toolsafe-approvals: who decides is unknown: pass -as USER")
		return exitUsage
	}
	rec, err := c.g.Answer(ctx, fs.Arg(0), d, by, *comment)
	if err != nil {
		return c.failed(err, true)
	}
	fmt.Fprintf(stdout, "%s %s %s (run %s, call %s, attempt %d)\n", clean(rec.By), rec.Decision, clean(rec.Call.Tool), clean(rec.Call.RunID), clean(rec.Call.CallID), rec.Call.Attempt)
	warn(stdout, rec.Call, "", "")
	return exitOK
}

func (c *cli) audit(ctx context.Context, args []string) int {
	stdout, stderr := c.stdout, c.stderr
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 20, "")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		fmt.Fprint(stderr, "toolsafe-approvals: audit takes [-n N]\n\n", usage)
		return exitUsage
	}
	recs, err := c.g.Audit(ctx, *n)
	if err != nil {
		return c.failed(err, false)
	}
	if len(recs) == 0 {
		fmt.Fprintln(stdout, "No decisions yet.")
	}
	for _, r := range recs {
		fmt.Fprintf(stdout, "%s  %s %s %s %s  run %s  call %s  attempt %d",
			r.At.UTC().Format(time.RFC3339), clean(r.By), r.Decision, clean(r.Call.Tool), clean(r.Call.CanonicalInput),
			clean(r.Call.RunID), clean(r.Call.CallID), r.Call.Attempt)
		if r.Comment != "" {
			fmt.Fprintf(stdout, "  comment %s", strconv.Quote(r.Comment))
		}
		fmt.Fprintln(stdout)
		warn(stdout, r.Call, r.By, r.Comment)
	}
	return exitOK
}

// clean shows s as the inbox's pages do (inbox.Reveal): what a terminal
// would act on instead of printing (control characters, escape sequences
// among them), bidirectional controls that reorder what is shown, and
// every other character a person could not see, as its code.
func clean(s string) string { return inbox.Reveal(s) }

// warn prints, under a request or a record, what the person should be
// warned of in the fields an agent controls (see inbox.Warnings): hidden
// characters, and values that mix lookalike scripts.
func warn(w io.Writer, c approval.CallInfo, by, comment string) {
	var ws []string
	for _, f := range []struct{ what, v string }{
		{"the tool name", c.Tool}, {"the input", c.Input}, {"the run ID", c.RunID},
		{"the call ID", c.CallID}, {"the idempotency key", c.IdempotencyKey},
		{"the approver's name", by}, {"the comment", comment},
	} {
		ws = append(ws, inbox.Warnings(f.what, f.v)...)
	}
	for _, line := range ws {
		fmt.Fprintf(w, "  warning  %s\n", line)
	}
}

// pretty indents input when it is JSON (whose strings hold no control
// characters), each line cleaned.
func pretty(input string) string {
	var b bytes.Buffer
	if json.Valid([]byte(input)) && json.Indent(&b, []byte(input), "", "  ") == nil {
		lines := strings.Split(b.String(), "\n")
		for i, l := range lines {
			lines[i] = clean(l)
		}
		return strings.Join(lines, "\n")
	}
	return clean(input)
}

func indent(s, by string) string { return strings.ReplaceAll(s, "\n", "\n"+by) }

func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Truncate(time.Second).String()
}
