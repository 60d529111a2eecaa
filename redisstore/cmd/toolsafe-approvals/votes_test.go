package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
)

// onlyID returns the one request ID list printed.
func onlyID(t *testing.T, cli func(args ...string) (int, string, string), args ...string) string {
	t.Helper()
	code, out, errOut := cli(append([]string{"list"}, args...)...)
	ids := idRE.FindAllString(out, -1)
	if code != exitOK || len(ids) != 1 {
		t.Fatalf("list %v: %d, %d IDs\n%s%s", args, code, len(ids), out, errOut)
	}
	return ids[0]
}

// Issue 28 in the terminal: list filters by tool and run and shows a
// quorum's votes; approve records one vote of the quorum the agent's
// replica asked for (the command has none of its own), once per person;
// approve -input changes the arguments the call runs with; deny -message
// gives the model a person's words; a destructive call that may have been
// applied needs -resend.
func TestVotesChangesAndMessagesFromTheTerminal(t *testing.T) {
	g, cli := fleet(t)
	g.Quorum = map[string]int{"refund": 2}
	ctx := context.Background()
	refund := approval.CallInfo{Tool: "refund", CallID: "call_1", Input: `{"order":"A-1001","amount_eur":25}`, Attempt: 1, RunID: "run-7"}
	cancel := approval.CallInfo{Tool: "cancel", CallID: "call_2", Input: `{"order":"B-7"}`, Attempt: 1, RunID: "run-8"}
	for _, c := range []approval.CallInfo{refund, cancel} {
		if d, err := g.Decide(ctx, c); err != nil || d != approval.Pending {
			t.Fatal(d, err)
		}
	}
	if code, out, _ := cli("list", "-tool", "none"); code != exitOK || !strings.Contains(out, "Nothing that matches waits (2 in all).") {
		t.Errorf("list -tool none: %d\n%s", code, out)
	}
	id := onlyID(t, cli, "-tool", "refund", "-run", "run-7")
	if _, out, _ := cli("list", "-run", "run-7"); !strings.Contains(out, "votes    0 of 2 approvals") {
		t.Errorf("the refund's votes are not listed:\n%s", out)
	}
	code, out, errOut := cli("-as", "alice", "approve", id)
	if code != exitOK || !strings.Contains(out, "alice voted to approve refund (run run-7, call call_1, attempt 1): 1 of 2 approvals") {
		t.Fatalf("alice's approval: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli("-as", "Alice", "approve", id); code != exitRefused || !strings.Contains(errOut, "you approved this request already") {
		t.Errorf("alice again, as Alice: %d %s", code, errOut)
	}
	if d, _ := g.Decide(ctx, refund); d != approval.Pending {
		t.Fatalf("one person's approval let the refund run: %v", d)
	}
	if _, out, _ := cli("list", "-tool", "refund"); !strings.Contains(out, "votes    1 of 2 approvals (alice)") {
		t.Errorf("the vote is not listed:\n%s", out)
	}
	if code, _, errOut := cli("-as", "bob", "approve", id); code != exitOK {
		t.Fatalf("bob's approval: %d %s", code, errOut)
	}
	if d, _ := g.Decide(ctx, refund); d != approval.Approved {
		t.Fatalf("after alice and bob: %v", d)
	}

	cid := onlyID(t, cli, "-tool", "cancel")
	if code, _, errOut := cli("-as", "carol", "approve", "-input", `["not an object"]`, cid); code != exitUsage || !strings.Contains(errOut, "must be a JSON object") {
		t.Errorf("approve -input with an array: %d %s", code, errOut)
	}
	code, out, errOut = cli("-as", "carol", "approve", "-input", `{"order":"B-8"}`, cid)
	if code != exitOK || !strings.Contains(out, `with the arguments changed to {"order":"B-8"}`) {
		t.Fatalf("approve -input: %d %s %s", code, out, errOut)
	}
	if v, err := g.Verdict(ctx, cancel); err != nil || v.Decision != approval.Approved || v.Input != `{"order":"B-8"}` {
		t.Fatalf("the cancel's verdict: %+v, %v; want approved with the changed input", v, err)
	}

	denied := approval.CallInfo{Tool: "cancel", CallID: "call_3", Input: `{"order":"B-9"}`, Attempt: 1, RunID: "run-9"}
	if d, _ := g.Decide(ctx, denied); d != approval.Pending {
		t.Fatal(d)
	}
	did := onlyID(t, cli, "-run", "run-9")
	if code, _, errOut := cli("-as", "carol", "deny", "-message", "Ask the customer first.", did); code != exitOK {
		t.Fatalf("deny -message: %d %s", code, errOut)
	}
	if v, _ := g.Verdict(ctx, denied); v.Decision != approval.Denied || v.Message != "Ask the customer first." {
		t.Fatalf("the denial's verdict: %+v", v)
	}

	retry := approval.CallInfo{Tool: "delete", CallID: "call_4", Input: `{"id":"X-1"}`, Attempt: 2, RunID: "run-10", Destructive: true, MayHaveApplied: true}
	if d, _ := g.Decide(ctx, retry); d != approval.Pending {
		t.Fatal(d)
	}
	rid := onlyID(t, cli, "-run", "run-10")
	if _, out, _ := cli("list", "-run", "run-10"); !regexp.MustCompile(`resend +an earlier attempt may have been applied`).MatchString(out) {
		t.Errorf("the list does not say the retry needs -resend:\n%s", out)
	}
	if code, _, errOut := cli("-as", "carol", "approve", rid); code != exitRefused || !strings.Contains(errOut, "approve with -resend") {
		t.Errorf("approve without -resend: %d %s", code, errOut)
	}
	if code, _, errOut := cli("-as", "carol", "approve", "-resend", "-input", `{"id":"X-2"}`, rid); code != exitRefused || !strings.Contains(errOut, "same idempotency key") {
		t.Errorf("approve -input of a call that may have been applied: %d %s", code, errOut)
	}
	if code, _, errOut := cli("-as", "carol", "approve", "-resend", rid); code != exitOK {
		t.Fatalf("approve -resend: %d %s", code, errOut)
	}
	if d, _ := g.Decide(ctx, retry); d != approval.Approved {
		t.Fatalf("the retry after approve -resend: %v", d)
	}
}
