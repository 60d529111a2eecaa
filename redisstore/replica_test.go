package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// The replica processes of TestResumeOnAnotherReplica are this test
// binary, started again with these in the environment.
const (
	replicaRoleEnv     = "REDISSTORE_TEST_REPLICA" // pause, grant or resume
	replicaPrefixEnv   = "REDISSTORE_TEST_PREFIX"
	replicaUpstreamEnv = "REDISSTORE_TEST_UPSTREAM"
	replicaRunEnv      = "REDISSTORE_TEST_RUN"
	replicaPausedEnv   = "REDISSTORE_TEST_PAUSED" // the paused call, as JSON, for resume
)

const (
	question    = "Charge order A-1001 25 EUR, then refund 5 EUR of it."
	chargeInput = `{"order":"A-1001","amount_eur":25}`
	refundOf5   = `{"order":"A-1001","amount_eur":5}`
)

// The scripted model of each replica: the run pauses at the refund on
// replica A; once granted, replica C runs the question again and the model
// asks for both calls again, as a real model does after a pause.
var (
	pauseScript = []string{
		toolsafetest.MRKLAction("First the charge.", "charge", chargeInput),
		toolsafetest.MRKLAction("Charged. Now the refund.", "refund", refundOf5),
	}
	resumeScript = []string{
		toolsafetest.MRKLAction("First the charge.", "charge", chargeInput),
		toolsafetest.MRKLAction("Charged. Now the refund.", "refund", refundOf5),
		toolsafetest.MRKLAnswer("Both done.", "Order A-1001 was charged 25 EUR and refunded 5 EUR."),
	}
)

// book is the upstream's account of what it applied: one action per
// idempotency key, as a payment API does.
type book struct {
	mu      sync.Mutex
	byKey   map[string]bool
	applied map[string]int // by path
}

func (b *book) handler(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	b.mu.Lock()
	if key == "" || !b.byKey[key] {
		b.byKey[key] = true
		b.applied[r.URL.Path]++
	}
	b.mu.Unlock()
	fmt.Fprintf(w, "%s applied", strings.TrimPrefix(r.URL.Path, "/"))
}

func (b *book) count(path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.applied[path]
}

// TestResumeOnAnotherReplica runs one agent run on three processes that
// share nothing but Redis: it pauses for approval on replica A after a
// charge; the refund is granted through replica B; replica C resumes the
// run. The charge is answered from the run ledger, not sent again; the
// refund runs on C's grant; the upstream applies each once.
func TestResumeOnAnotherReplica(t *testing.T) {
	b := &book{byKey: map[string]bool{}, applied: map[string]int{}}
	up := toolsafetest.NewUpstream(http.HandlerFunc(b.handler))
	t.Cleanup(up.Close)
	prefix := redistest.Prefix(t.Name())
	check := newClient(t, redisAddr)
	t.Cleanup(func() { redistest.CheckTTLs(t, check, prefix) })
	env := []string{
		"REDIS_ADDR=" + redisAddr,
		replicaPrefixEnv + "=" + prefix,
		replicaUpstreamEnv + "=" + up.URL(),
		replicaRunEnv + "=refunds-" + prefix,
	}

	paused := runReplica(t, "pause", env)
	var ar approval.Required
	if err := json.Unmarshal([]byte(paused), &ar); err != nil {
		t.Fatalf("replica A's paused call %q: %v", paused, err)
	}
	if ar.Tool != "refund" || ar.RunID != "refunds-"+prefix || ar.IdempotencyKey == "" {
		t.Fatalf("replica A paused %+v", ar)
	}
	if b.count("/charge") != 1 || b.count("/refund") != 0 {
		t.Fatalf("after the pause: %d charges, %d refunds applied; want 1, 0", b.count("/charge"), b.count("/refund"))
	}

	if granted := runReplica(t, "grant", env); granted != "refund "+refundOf5 {
		t.Fatalf("replica B granted %q", granted)
	}

	resumed := runReplica(t, "resume", append(env, replicaPausedEnv+"="+paused))
	want := strings.Join([]string{
		"charge ok replayed",
		"refund ok",
		"final: Order A-1001 was charged 25 EUR and refunded 5 EUR.",
	}, "\n")
	if resumed != want {
		t.Errorf("replica C's run:\n%s\nwant\n%s", resumed, want)
	}
	if c, r := b.count("/charge"), b.count("/refund"); c != 1 || r != 1 {
		t.Errorf("the upstream applied %d charges and %d refunds; want each once", c, r)
	}
	if n := up.Requests("/charge"); n != 1 {
		t.Errorf("%d charge requests reached the upstream; the resumed run must answer it from the ledger", n)
	}
}

// runReplica runs this test binary as the replica role and returns what
// it printed, trimmed; it fails t when the process fails.
func runReplica(t *testing.T, role string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(background, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), replicaRoleEnv+"="+role)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("replica %s: %v\n%s", role, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// replicaMain is a replica process: it prints what the role produced and
// returns the exit status.
func replicaMain(role string) int {
	out, err := replicaRun(role)
	if err != nil {
		fmt.Fprintf(os.Stderr, "replica %s: %v\n", role, err)
		return 1
	}
	fmt.Println(out)
	return 0
}

func replicaRun(role string) (string, error) {
	ctx := context.Background()
	client := redistest.NewClient(os.Getenv("REDIS_ADDR"))
	defer client.Close()
	store, err := redisstore.New(client, redisstore.WithPrefix(os.Getenv(replicaPrefixEnv)))
	if err != nil {
		return "", err
	}
	defer store.Close()
	grants, ledger := store.Grants(), store.Ledger()

	switch role {
	case "grant":
		pending, err := grants.Pending(ctx)
		if err != nil {
			return "", err
		}
		if len(pending) != 1 {
			return "", fmt.Errorf("%d calls pending, want the refund: %+v", len(pending), pending)
		}
		p := pending[0]
		return p.Tool + " " + p.Input, grants.Grant(ctx, p.Tool, p.Input)
	case "pause", "resume":
	default:
		return "", fmt.Errorf("unknown role %q", role)
	}

	var (
		mu  sync.Mutex
		log []string
	)
	onResult := toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
		line := r.Tool + " " + r.Status()
		if r.Replayed {
			line += " replayed"
		}
		mu.Lock()
		log = append(log, line)
		mu.Unlock()
	})
	base := os.Getenv(replicaUpstreamEnv)
	client2 := toolsafetest.NoKeepAliveClient()
	charge, err := toolsafe.New(postTool("charge", base, client2),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), onResult)
	if err != nil {
		return "", err
	}
	refund, err := toolsafe.New(postTool("refund", base, client2),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithApproval(grants), onResult)
	if err != nil {
		return "", err
	}

	script := pauseScript
	runCtx := run.With(ctx, os.Getenv(replicaRunEnv), ledger)
	if role == "resume" {
		script = resumeScript
		var ar approval.Required
		if err := json.Unmarshal([]byte(os.Getenv(replicaPausedEnv)), &ar); err != nil {
			return "", err
		}
		runCtx = run.Resume(run.With(ctx, "", ledger), &ar)
	}
	agent := agents.NewOneShotAgent(fake.NewFakeLLM(script), []tools.Tool{charge, refund})
	out, err := agents.NewExecutor(agent, agents.WithMaxIterations(5)).Call(runCtx, map[string]any{"input": question})
	var ar *approval.Required
	switch {
	case role == "pause" && errors.As(err, &ar):
		data, err := json.Marshal(ar)
		return string(data), err
	case err != nil:
		return "", err
	case role == "pause":
		return "", errors.New("the run did not pause")
	}
	mu.Lock()
	defer mu.Unlock()
	return strings.Join(append(log, fmt.Sprintf("final: %v", out["output"])), "\n"), nil
}

// postTool is a tool that POSTs its input to base/name with the call's
// idempotency key.
func postTool(name, base string, client *http.Client) tools.Tool {
	return middleware.Func(name, name+"s an order: input {\"order\":..., \"amount_eur\":...}", func(ctx context.Context, input string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+name, strings.NewReader(input))
		if err != nil {
			return "", err
		}
		req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
		return middleware.DoHTTP(client, req)
	})
}
