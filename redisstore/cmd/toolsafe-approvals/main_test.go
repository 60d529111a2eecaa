package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

var redisAddr string

func TestMain(m *testing.M) {
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
	client := redis.NewClient(redisstore.ClientOptions(redisAddr))
	t.Cleanup(func() { redistest.CheckTTLs(t, client, prefix); client.Close() })
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
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

var idRE = regexp.MustCompile(`(?m)^(\d+\.[0-9a-f]{32}\.[0-9a-f]{40})$`)

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
	if code := run(context.Background(), []string{"-redis", addr, "list"}, &strings.Builder{}, &errOut); code != exitStore || !strings.Contains(errOut.String(), "Redis is unavailable") {
		t.Errorf("list with no Redis: %d %s", code, errOut.String())
	}
}
