package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

func (c *cli) list(ctx context.Context, args []string) int {
	stdout, stderr := c.stdout, c.stderr
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tool := fs.String("tool", "", "")
	runID := fs.String("run", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		fmt.Fprint(stderr, "toolsafe-approvals: list takes [-tool NAME] [-run ID]\n\n", usage)
		return exitUsage
	}
	reqs, err := c.g.Requests(ctx)
	if err != nil {
		return c.failed(err, false)
	}
	o, err := c.g.Overflow(ctx)
	if err != nil {
		return c.failed(err, false)
	}
	all := len(reqs)
	defer printOverflow(stdout, o, all)
	reqs = slices.DeleteFunc(reqs, func(q approval.Request) bool {
		return *tool != "" && q.Call.Tool != *tool || *runID != "" && q.Call.RunID != *runID
	})
	if len(reqs) == 0 {
		if all > 0 {
			fmt.Fprintf(stdout, "Nothing that matches waits (%d in all).\n", all)
			return exitOK
		}
		fmt.Fprintln(stdout, "Nothing waits.")
		return exitOK
	}
	now := time.Now()
	for _, q := range reqs {
		call := q.Call
		fmt.Fprintf(stdout, "%s\n", q.ID)
		fmt.Fprintf(stdout, "  tool     %s\n", clean(call.Tool))
		runID := clean(call.RunID)
		if runID == "" {
			runID = "(none: not in a run.With)"
		}
		fmt.Fprintf(stdout, "  run      %s   call %s   attempt %d   waiting %s\n", runID, clean(call.CallID), call.Attempt, age(now.Sub(q.Since)))
		fmt.Fprintf(stdout, "  reason   %s\n", call.Reason())
		fmt.Fprintf(stdout, "  input    %s\n", indent(pretty(call.Input), "           "))
		if q.Quorum > 1 {
			fmt.Fprintf(stdout, "  votes    %s\n", votes(q))
		}
		if call.Destructive && call.MayHaveApplied {
			fmt.Fprintln(stdout, "  resend   an earlier attempt may have been applied: approve needs -resend")
		}
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
	input := fs.String("input", "", "")
	message := fs.String("message", "", "")
	resend := fs.Bool("resend", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprint(stderr, "toolsafe-approvals: approve takes [-comment TEXT] [-input JSON] [-resend] and deny [-comment TEXT] [-message TEXT], and one ID, from list\n\n", usage)
		return exitUsage
	}
	if strings.TrimSpace(by) == "" {
		fmt.Fprintln(stderr, "toolsafe-approvals: who decides is unknown: pass -as USER")
		return exitUsage
	}
	id := fs.Arg(0)
	r := approval.Reply{Decision: d, By: by, Comment: *comment}
	switch {
	case d == approval.Approved && *message != "":
		fmt.Fprintln(stderr, "toolsafe-approvals: -message is a denial's message for the model: approve takes -comment")
		return exitUsage
	case d == approval.Denied && (*input != "" || *resend):
		fmt.Fprintln(stderr, "toolsafe-approvals: -input and -resend are for approve: deny takes -comment and -message")
		return exitUsage
	}
	r.Input, r.Message = *input, *message
	if _, err := approval.CheckReply(r); err != nil {
		fmt.Fprintln(stderr, "toolsafe-approvals: not recorded:", clean(strings.TrimPrefix(err.Error(), "approval: ")))
		return exitUsage
	}
	if d == approval.Approved && (!*resend || *input != "") {
		reqs, err := c.g.Requests(ctx)
		if err != nil {
			return c.failed(err, true)
		}
		for _, q := range reqs {
			if q.ID == id && q.Call.MayHaveApplied && *input != "" {
				// Its earlier attempt went with the arguments listed, and
				// the next goes under the same idempotency key.
				fmt.Fprintln(stderr, "toolsafe-approvals: not recorded: an earlier attempt of this call may already have been applied with the arguments listed, and the next is sent under the same idempotency key: changing them now could leave the first applied while the model is told yours ran; approve it as listed, or deny it with -message")
				return exitRefused
			}
			if q.ID == id && q.Call.Destructive && q.Call.MayHaveApplied && !*resend {
				fmt.Fprintln(stderr, "toolsafe-approvals: not recorded: an earlier attempt of this destructive call may already have been applied, and approving sends it again: check, then approve with -resend, or deny")
				return exitRefused
			}
		}
	}
	rec, err := c.g.Reply(ctx, id, r)
	if err != nil {
		return c.failed(err, true)
	}
	if rec.Decision == approval.Approved && rec.Approvals < rec.Quorum {
		fmt.Fprintf(stdout, "%s voted to approve %s (run %s, call %s, attempt %d): %d of %d approvals, it waits for another person's\n",
			clean(rec.By), clean(rec.Call.Tool), clean(rec.Call.RunID), clean(rec.Call.CallID), rec.Call.Attempt, rec.Approvals, rec.Quorum)
		warn(stdout, rec.Call, "", "")
		return exitOK
	}
	fmt.Fprintf(stdout, "%s %s %s (run %s, call %s, attempt %d)\n", clean(rec.By), rec.Decision, clean(rec.Call.Tool), clean(rec.Call.RunID), clean(rec.Call.CallID), rec.Call.Attempt)
	if rec.Input != "" {
		fmt.Fprintf(stdout, "  with the arguments changed to %s\n", clean(rec.Input))
	}
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
	events, err := c.g.Events(ctx, *n)
	if err != nil {
		return c.failed(err, false)
	}
	entries := make([]entry, 0, len(recs)+len(events))
	for _, r := range recs {
		entries = append(entries, entry{at: r.At, rec: &r})
	}
	for _, e := range events {
		entries = append(entries, entry{at: e.At, event: &e})
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return b.at.Compare(a.at) })
	if *n > 0 && len(entries) > *n {
		entries = entries[:*n]
	}
	if len(entries) == 0 {
		fmt.Fprintln(stdout, "No decisions yet.")
	}
	for _, en := range entries {
		if e := en.event; e != nil {
			printEvent(stdout, *e)
			continue
		}
		r := en.rec
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

// entry is one line of audit: an answer or an event.
type entry struct {
	at    time.Time
	rec   *approval.Record
	event *approval.Event
}

// printEvent prints e, a refusal or a dropped request, as audit lists it.
func printEvent(w io.Writer, e approval.Event) {
	at := e.At.UTC().Format(time.RFC3339)
	switch e.Kind {
	case approval.EventRefused:
		fmt.Fprintf(w, "%s  %s was refused: tried to %s %s", at, clean(e.By), clean(e.Action), clean(e.Call.Tool))
	case approval.EventDropped:
		fmt.Fprintf(w, "%s  dropped, undecided, from the full list (at most %d wait): %s", at, e.Max, clean(e.Call.Tool))
	default:
		fmt.Fprintf(w, "%s  %s: %s", at, clean(string(e.Kind)), clean(e.Call.Tool))
	}
	fmt.Fprintf(w, " %s", clean(e.Call.CanonicalInput))
	if e.InputSize > len(e.Call.Input) {
		fmt.Fprintf(w, "… (the first %d of %d bytes)", len(e.Call.Input), e.InputSize)
	}
	fmt.Fprintf(w, "  run %s  call %s  attempt %d  request %s\n", clean(e.Call.RunID), clean(e.Call.CallID), e.Call.Attempt, clean(e.RequestID))
	warn(w, e.Call, e.By, "")
}

// printOverflow says, after list, what the full list dropped and how many
// wait unlisted beyond the listed ones; nothing when neither happened.
func printOverflow(w io.Writer, o approval.Overflow, listed int) {
	if o.Dropped > 0 {
		what := "1 request was"
		if o.Dropped > 1 {
			what = fmt.Sprintf("%d requests were", o.Dropped)
		}
		fmt.Fprintf(w, "dropped   %s dropped from this list because it was full (at most %d wait; the oldest goes first), the first at %s, the latest at %s: a flood of requests may have pushed a real one out; audit names each one dropped, whose call asks again when its run resumes\n",
			what, o.Max, o.Since.UTC().Format(time.RFC3339), o.Last.UTC().Format(time.RFC3339))
	}
	if o.Unlisted > 0 {
		what := "1 more request waits but is"
		if o.Unlisted > 1 {
			what = fmt.Sprintf("%d more requests wait but are", o.Unlisted)
		}
		fmt.Fprintf(w, "unlisted  %s not listed: this list shows the newest %d; older ones wait unseen until they expire or newer ones are decided\n", what, listed)
	}
}

// votes says how far q is towards its quorum, and who approved it.
func votes(q approval.Request) string {
	var who []string
	for _, v := range q.Votes {
		who = append(who, clean(v.By))
	}
	s := fmt.Sprintf("%d of %d approvals", len(q.Votes), q.Quorum)
	if len(who) > 0 {
		s += " (" + strings.Join(who, ", ") + ")"
	}
	return s
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
