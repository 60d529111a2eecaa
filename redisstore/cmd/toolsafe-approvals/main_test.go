package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

var redisAddr string

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" { // the command itself, as a person runs it
		main()
	}
	addr, err := redistest.Addr()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	redisAddr = addr
	goleak.VerifyTestMain(m)
}

// fleet returns the Grants an agent replica uses under a prefix of the
// test's own, and a function that runs the command on it.
func fleet(t *testing.T) (*redisstore.Grants, func(args ...string) (int, string, string)) {
	t.Helper()
	prefix := redistest.Prefix(t.Name())
	client := redistest.NewClient(redisAddr)
	t.Cleanup(func() { redistest.CheckTTLs(t, client, prefix); client.Close() })
	// A machine busy enough to take longer than the Store's 50ms must not
	// turn a test about what the command prints into an outage.
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Grants(), func(args ...string) (int, string, string) {
		var out, errOut strings.Builder
		code := run(context.Background(), append([]string{"-redis", redisAddr, "-prefix", prefix}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
}

var idRE = regexp.MustCompile(`(?m)^(\d+\.[0-9a-f]{64}\.[0-9a-f]{40})$`)

func TestListApproveAndAudit(t *testing.T) {
	g, cli := fleet(t)
	c := approval.CallInfo{Tool: "refund", CallID: "call_1", Input: `{"order":"A-1001","note":"\u001b[2J"}`, Attempt: 1, RunID: "run-7"}
	if d, err := g.Decide(context.Background(), c); err != nil || d != approval.Pending {
		t.Fatal(d, err)
	}
	code, out, _ := cli("list")
	m := idRE.FindStringSubmatch(out)
	if code != exitOK || m == nil || !strings.Contains(out, "tool     refund") || !strings.Contains(out, "run-7") ||
		!strings.Contains(out, `"order": "A-1001"`) || !strings.Contains(out, "no approval has been granted") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	if code, _, errOut := cli("-as", "", "approve", m[1]); code != exitUsage {
		t.Errorf("approve as nobody: %d %s", code, errOut)
	}
	code, out, errOut := cli("-as", "alice", "approve", "-comment", "ok \x1b[31m", m[1])
	if code != exitOK || !strings.Contains(out, "alice approved refund (run run-7, call call_1, attempt 1)") {
		t.Fatalf("approve: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli("-as", "bob", "deny", m[1]); code != exitNotPending || !strings.Contains(errOut, "no longer waits") {
		t.Errorf("a second answer: %d %s", code, errOut)
	}
	if d, _ := g.Decide(context.Background(), c); d != approval.Approved {
		t.Fatalf("after approve: %v", d)
	}
	code, out, _ = cli("audit")
	if code != exitOK || !strings.Contains(out, " alice approved refund ") || !strings.Contains(out, `comment "ok \x1b[31m"`) || strings.Contains(out, "\x1b") {
		t.Fatalf("audit: %d %q", code, out)
	}
	if code, out, _ := cli("list"); code != exitOK || !strings.Contains(out, "Nothing waits.") {
		t.Errorf("list after: %d %s", code, out)
	}
}

func TestTerminalControlsAreEscaped(t *testing.T) {
	for in, want := range map[string]string{"a\x1b[2Jb": `a\x1b[2Jb`, "x\u202ey": `x\u202ey`, "l1\nl2": `l1\nl2`, "ok": "ok"} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUsageAndUnavailableRedis(t *testing.T) {
	for _, args := range [][]string{nil, {"nonsense"}, {"approve"}, {"audit", "extra"}, {"-bad-flag", "list"}} {
		if code := run(context.Background(), args, &strings.Builder{}, &strings.Builder{}); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	srv, err := redistest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	srv.Close()
	var errOut strings.Builder
	if code := run(context.Background(), []string{"-redis", addr, "list"}, &strings.Builder{}, &errOut); code != exitStore || !strings.Contains(errOut.String(), "Redis at "+addr+" cannot be reached") {
		t.Errorf("list with no Redis: %d %s", code, errOut.String())
	}
}

// Regression (issue 32, item 7, in a terminal): a call ID call_\u202efdp.exe
// printed as call_exe.pdf, "\u202e0052" as 2500, and payees that differ by
// a U+200B looked the same.
func TestInvisibleAndDirectionChangingCharactersReachThePersonEscaped(t *testing.T) {
	g, cli := fleet(t)
	c := approval.CallInfo{Tool: "refund", CallID: "call_\u202efdp.exe", Attempt: 1, RunID: "run-7",
		Input: "{\"amount_eur\":\"\u202e0052\",\"payee\":\"Acme\u200b\",\"bank\":\"p\u0430ypal\"}"}
	if d, err := g.Decide(context.Background(), c); err != nil || d != approval.Pending {
		t.Fatal(d, err)
	}
	code, out, _ := cli("list")
	for _, want := range []string{`call call_\u202efdp.exe`, `"amount_eur": "\u202e0052"`, `"payee": "Acme\u200b"`,
		`warning  The call ID holds characters that are invisible, or change the order or the look of the text, shown as their codes: \u202e (RIGHT-TO-LEFT OVERRIDE).`,
		`warning  The input has a value that mixes Latin and Cyrillic letters, which look alike: “pаypal” (а is not Latin).`} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if code != exitOK || strings.ContainsAny(out, "\u202e\u200b") {
		t.Fatalf("list: %d, raw characters in:\n%+q", code, out)
	}
	id := idRE.FindStringSubmatch(out)
	code, out, errOut := cli("-as", "alice", "approve", "-comment", "ok\u200b", id[1])
	if code != exitOK || !strings.Contains(out, `call call_\u202efdp.exe`) || strings.ContainsAny(out, "\u202e\u200b") {
		t.Fatalf("approve: %d %+q %s", code, out, errOut)
	}
	code, out, _ = cli("audit")
	if code != exitOK || !strings.Contains(out, `call call_\u202efdp.exe`) || !strings.Contains(out, `warning  The comment holds`) || strings.ContainsAny(out, "\u202e\u200b") {
		t.Fatalf("audit: %d %+q", code, out)
	}
}

// Regression (issue 32, item 8, in a terminal): runs A and B waiting on the
// same tool and input were one request; approving what read run B let run
// A's call through.
func TestAnApprovalGivenForOneRunsRequestLetsNoOtherRunsCallThrough(t *testing.T) {
	g, cli := fleet(t)
	inRun := func(runID string) approval.CallInfo {
		return approval.CallInfo{Tool: "refund", CallID: "call_" + runID, Input: `{"order":"A-1001"}`, Attempt: 1, RunID: runID}
	}
	for _, r := range []string{"run-A", "run-B"} {
		if d, err := g.Decide(context.Background(), inRun(r)); err != nil || d != approval.Pending {
			t.Fatal(d, err)
		}
	}
	_, out, _ := cli("list")
	ids := idRE.FindAllString(out, -1)
	if len(ids) != 2 || strings.Index(out, "run      run-A") > strings.Index(out, "run      run-B") || strings.Index(out, ids[1]) < strings.Index(out, "run      run-A") {
		t.Fatalf("list: want run A's request, then run B's:\n%s", out)
	}
	if code, out, errOut := cli("-as", "alice", "approve", ids[1]); code != exitOK || !strings.Contains(out, "(run run-B,") {
		t.Fatalf("approve run B's: %d %s %s", code, out, errOut)
	}
	if d, _ := g.Decide(context.Background(), inRun("run-A")); d != approval.Pending {
		t.Fatalf("run A's call after run B's approval: %v", d)
	}
	if d, _ := g.Decide(context.Background(), inRun("run-B")); d != approval.Approved {
		t.Fatalf("run B's call: %v", d)
	}
	if _, out, _ := cli("audit"); !strings.Contains(out, "run run-B") || strings.Contains(out, "run run-A") {
		t.Fatalf("audit: %s", out)
	}
}

// Regression (issue 32, item 9, in a terminal): a refusal for too many
// decisions waiting exited as if Redis were unavailable.
func TestAStoreErrorSaysWhatHappened(t *testing.T) {
	g, cli := fleet(t)
	ctx := context.Background()
	for i := range redisstore.DefaultMaxDecisions + 1 {
		c := approval.CallInfo{Tool: "refund", CallID: "call_1", Input: `{"order":"A-1001"}`, Attempt: 1, RunID: fmt.Sprint("run-", i)}
		if d, err := g.Decide(ctx, c); err != nil || d != approval.Pending {
			t.Fatal(d, err)
		}
	}
	reqs, err := g.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs[:redisstore.DefaultMaxDecisions] {
		if _, err := g.Answer(ctx, q.ID, approval.Approved, "bob", ""); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := cli("-as", "alice", "approve", reqs[redisstore.DefaultMaxDecisions].ID)
	if code != exitRefused || !strings.Contains(errOut, "not recorded: 100 approvals and denials of this tool with this input already wait") ||
		strings.Contains(errOut, "unavailable") {
		t.Fatalf("approve past the bound: %d %s", code, errOut)
	}
}

// runMainEnv makes the test binary run the command's main, so that a test
// sees all the command prints, go-redis's own log lines included.
const runMainEnv = "TOOLSAFE_APPROVALS_RUN_MAIN"

// command runs the command as a process, with args, and returns its exit
// status, standard output and standard error.
func command(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "REDIS_ADDR=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// Issue 31, item 5: list with Redis down printed go-redis's internal log
// line, the Store's WARN for a fleet and "an answer is recorded whole or
// not at all". It prints one line: Redis at ADDR cannot be reached, why,
// and what to do.
func TestRedisDownIsOneLineThatSaysWhatToDo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close() // nothing listens there now

	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		silent.Close()
		for c := range accepted {
			c.Close()
		}
	}()

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-redis", refused, "list"},
			"toolsafe-approvals: Redis at " + refused + " cannot be reached (connection refused: nothing listens there): start it, or give the fleet's Redis with -redis ADDR or REDIS_ADDR\n"},
		{[]string{"-redis", refused, "-as", "alice", "approve", "3.abc"},
			"toolsafe-approvals: Redis at " + refused + " cannot be reached (connection refused: nothing listens there): start it, or give the fleet's Redis with -redis ADDR or REDIS_ADDR\n"},
		{[]string{"-redis", silent.Addr().String(), "-timeout", "200ms", "audit"},
			"toolsafe-approvals: Redis at " + silent.Addr().String() + " cannot be reached (no answer within 200ms, the -timeout): start it, or give the fleet's Redis with -redis ADDR or REDIS_ADDR\n"},
	} {
		code, out, errOut := command(t, tt.args...)
		if code != exitStore || out != "" || errOut != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit %d and only:\n%s", tt.args, code, out, errOut, exitStore, tt.want)
		}
	}
}

// Issue 31, item 5: Redis that stops answering after the command reached
// it is told in the terminal's words: of an answer, that it may or may not
// be recorded and how to tell; of a list, to run it again.
func TestRedisThatStopsAnsweringIsToldInTheTerminalsWords(t *testing.T) {
	var errOut strings.Builder
	c := &cli{addr: "10.0.0.7:6379", stderr: &errOut}
	down := fmt.Errorf("redisstore: grants: %w", redisstore.ErrUnavailable)
	if code := c.failed(down, true); code != exitStore || errOut.String() !=
		"toolsafe-approvals: Redis at 10.0.0.7:6379 stopped answering while the answer was sent, so it may or may not be recorded: when Redis is back, run list; if the request is still there, answer it again\n" {
		t.Errorf("an answer: exit %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := c.failed(down, false); code != exitStore || errOut.String() != "toolsafe-approvals: Redis at 10.0.0.7:6379 stopped answering: run the command again when it is back\n" {
		t.Errorf("a list: exit %d, %q", code, errOut.String())
	}
}

// Found trying the command on a Redis Cluster: "-redis" with one node's
// address made a client of that node alone, which the Store refuses at the
// first key on another node, and the command said "Redis at ADDR stopped
// answering: run the command again when it is back", which no retry fixes.
// One address of a cluster's node reaches the whole cluster.
func TestOneAddressOfAClusterNodeReachesTheCluster(t *testing.T) {
	addrs := redistest.Addrs(redisAddr)
	if len(addrs) == 1 {
		c, err := redistest.StartCluster(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		addrs = redistest.Addrs(c.Addrs())
	}
	client := redistest.NewClient(strings.Join(addrs, ","))
	defer client.Close()
	prefix := redistest.Prefix(t.Name())
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Requests of several tools, so that some hash to a master that is not
	// the node given.
	tools := []string{"refund", "cancel", "delete", "transfer", "close", "wire", "void", "charge"}
	for _, tool := range tools {
		c := approval.CallInfo{Tool: tool, CallID: "call_1", Input: `{}`, Attempt: 1, RunID: "run-1"}
		if d, err := s.Grants().Decide(context.Background(), c); err != nil || d != approval.Pending {
			t.Fatal(d, err)
		}
	}
	// A call outside a run.With has no run: the list says so rather than
	// print an empty column.
	if d, err := s.Grants().Decide(context.Background(), approval.CallInfo{Tool: "solo", CallID: "call_2", Input: `{}`, Attempt: 1}); err != nil || d != approval.Pending {
		t.Fatal(d, err)
	}
	for _, node := range addrs {
		var out, errOut strings.Builder
		code := run(context.Background(), []string{"-redis", node, "-prefix", prefix, "-timeout", "5s", "list"}, &out, &errOut)
		if code != exitOK {
			t.Fatalf("-redis %s list: exit %d: %s", node, code, errOut.String())
		}
		if !strings.Contains(out.String(), "  run      (none: not in a run.With)   call call_2") {
			t.Fatalf("-redis %s list: the call without a run is not shown as such:\n%s", node, out.String())
		}
		for _, tool := range tools {
			if !strings.Contains(out.String(), "tool     "+tool+"\n") {
				t.Fatalf("-redis %s list does not list %s:\n%s", node, tool, out.String())
			}
		}
	}
}
