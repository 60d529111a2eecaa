// Command temporal is toolsafe's demo for Temporal: an agent loop that runs
// as a Temporal workflow, its model and its tools as activities
// (temporaltools), against a billing upstream on 127.0.0.1 that fails the
// way real ones do, with a worker that dies in the middle:
//
//   - The model asks for two invoices. INV-1001's connection is reset:
//     toolsafe says it is transient, Temporal retries the activity, and
//     the model gets the invoice after 2 attempts. "7" is not an invoice
//     number: the tool's error is the activity's result, and the model gets
//     the tool's message, not retried.
//
//   - The model asks for a refund. It needs a person's approval: the
//     workflow waits, durably, and the approvals inbox (package inbox over
//     temporaltools.Store) lists the request. The person approves through
//     the inbox's HTTP interface.
//
//   - The approved refund is applied upstream, and before its answer
//     comes back the worker process is killed. A new worker process starts;
//     Temporal gives the attempt to it once the dead one's time is up, and
//     the retry sends the same idempotency key: the upstream applies the
//     refund once.
//
// The demo starts a Temporal dev server with the CLI named in TEMPORAL_CLI
// (or uses the server at TEMPORAL_ADDRESS), the upstream, the inbox and the
// worker processes (this program again, os/exec):
//
//	TEMPORAL_CLI=$HOME/.cache/toolsafe/temporal-v1.5.1 go run -C examples/temporal .
//
// With -decide=person it waits for someone to decide in the inbox (the
// header X-Approver names them; scripts/e2e-temporal.sh does it with curl)
// instead of deciding itself. The model is scripted, so the demo runs
// offline; with OPENAI_API_KEY set the worker asks OpenAI (OPENAI_MODEL
// picks the model).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/temporaltools"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

const question = "What is the status of invoices INV-1001 and 7? Then refund 25 EUR for order A-1001."

// config is how the demo runs.
type config struct {
	// address is the Temporal server; "" starts a dev server with the CLI
	// in TEMPORAL_CLI.
	address string
	// decide is "self" (the demo approves through the inbox's HTTP
	// interface, as alice) or "person" (someone else does).
	decide string
	// inboxAddr is where the inbox listens.
	inboxAddr string
	// worker is the command that runs a worker process.
	worker []string
}

func main() {
	if os.Getenv(roleEnv) == "worker" {
		if err := workerMain(); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		return
	}
	cfg := config{address: os.Getenv(addressEnv), worker: []string{os.Args[0]}}
	flag.StringVar(&cfg.decide, "decide", "self", `who approves the refund: "self" (the demo, through the inbox's HTTP interface) or "person" (someone in the inbox)`)
	flag.StringVar(&cfg.inboxAddr, "inbox", "127.0.0.1:0", "the address the approvals inbox listens on")
	flag.Parse()
	if err := demo(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "temporal:", err)
		os.Exit(1)
	}
}

func demo(ctx context.Context, w io.Writer, cfg config) error {
	if cfg.decide != "self" && cfg.decide != "person" {
		return fmt.Errorf(`-decide is %q: use "self" or "person"`, cfg.decide)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var c client.Client
	address, stop := cfg.address, func() {}
	var err error
	if address == "" {
		c, address, stop, err = temporalClient(ctx)
	} else {
		c, err = client.Dial(client.Options{HostPort: address, Logger: logger()})
	}
	if err != nil {
		return err
	}
	defer stop()
	defer c.Close()

	// The billing upstream, counting every request: INV-1001's first
	// request is reset; the first refund is applied and its answer held
	// until its connection closes (the worker that sent it dies).
	billingUp := &upstream{ledger: refunds.NewLedger(), arrived: make(chan struct{}), release: make(chan struct{})}
	up := toolsafetest.NewUpstream(billingUp)
	defer up.Close()
	defer billingUp.releaseOnce()
	up.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset())

	// The approvals inbox over the workflows' waits.
	queue := "billing-" + randomHex(4)
	store, err := temporaltools.NewStore(c, temporaltools.StoreOptions{Query: "TaskQueue = '" + queue + "'"})
	if err != nil {
		return err
	}
	ibx, err := inbox.New(store, approver, inbox.WithPollInterval(500*time.Millisecond))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.inboxAddr)
	if err != nil {
		return fmt.Errorf("the inbox cannot listen on %s: %w", cfg.inboxAddr, err)
	}
	srv := &http.Server{Handler: ibx, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	inboxURL := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(w, "Temporal: %s   task queue: %s\nthe approvals inbox: %s\n", address, queue, inboxURL)

	workers := &fleet{cmd: cfg.worker, env: []string{roleEnv + "=worker", addressEnv + "=" + address, upstreamEnv + "=" + up.URL(), queueEnv + "=" + queue}}
	defer workers.stopAll()
	first, err := workers.start()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "worker 1 started (pid %d)\n", first.Process.Pid)

	wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "billing-question-" + randomHex(4), TaskQueue: queue}, agentWorkflow, question)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "workflow %s started: %q\n", wr.GetID(), question)
	done := make(chan error, 1)
	var msgs []Message
	go func() { done <- wr.Get(ctx, &msgs) }()

	decided := map[string]bool{}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	arrived := billingUp.arrived
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("the workflow failed: %w\n%s", err, workers.logs())
			}
			running = false
		case <-arrived:
			arrived = nil
			fmt.Fprintf(w, "the refund reached the upstream and was applied; killing worker 1 (pid %d) before its answer comes back\n", first.Process.Pid)
			if err := workers.kill(first); err != nil {
				return err
			}
			second, err := workers.start()
			if err != nil {
				return err
			}
			billingUp.releaseOnce()
			fmt.Fprintf(w, "worker 2 started (pid %d); Temporal gives it the refund once worker 1's attempt times out\n", second.Process.Pid)
		case <-tick.C:
			if err := watchInbox(ctx, w, inboxURL, cfg.decide, decided); err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("the demo did not end in time: %w\n%s", ctx.Err(), workers.logs())
		}
	}

	fmt.Fprintln(w)
	report(w, msgs)
	keys := billingUp.refundKeys()
	fmt.Fprintf(w, "\nupstream: GET %s %d requests; POST %s %d requests with %d idempotency key(s); refunds applied: %d\n",
		billing.InvoicePath("INV-1001"), up.Requests(billing.InvoicePath("INV-1001")), refunds.Path, up.Requests(refunds.Path),
		distinct(keys), billingUp.ledger.Applied())
	recs, err := store.Audit(ctx, 0)
	if err != nil {
		return err
	}
	for _, r := range recs {
		fmt.Fprintf(w, "audit: %s %s %s %s (run %s, call %s)\n", r.By, r.Decision, r.Call.Tool, r.Call.Input, r.Call.RunID, r.Call.CallID)
	}
	return nil
}

// temporalClient starts a dev server with the CLI in TEMPORAL_CLI, on a
// free port of 127.0.0.1, and returns its client and address.
func temporalClient(ctx context.Context) (client.Client, string, func(), error) {
	cli := os.Getenv("TEMPORAL_CLI")
	if cli == "" {
		return nil, "", nil, errors.New("set TEMPORAL_ADDRESS to a Temporal server, or TEMPORAL_CLI to the Temporal CLI (bash scripts/e2e-temporal.sh -cli builds it and prints its path)")
	}
	var log bytes.Buffer
	s, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: cli, ClientOptions: &client.Options{Logger: logger()},
		LogLevel: "error", Stdout: &log, Stderr: &log})
	if err != nil {
		return nil, "", nil, fmt.Errorf("the Temporal dev server (%s): %w\n%s", cli, err, log.String())
	}
	return s.Client(), s.FrontendHostPort(), func() { _ = s.Stop() }, nil
}

// approver is the inbox's identity function: the header X-Approver names
// who decides. It stands in for a real sign-in (a session, a proxy that
// authenticates): never trust such a header from an open network.
func approver(r *http.Request) (string, bool) {
	u := r.Header.Get("X-Approver")
	return u, u != ""
}

// watchInbox reads the inbox's requests over its HTTP interface; with
// decide "self" it approves each one, as alice, as a person would in its
// page: the request's page gives the form's token, the form is posted.
func watchInbox(ctx context.Context, w io.Writer, base, decide string, seen map[string]bool) error {
	var list struct {
		Requests []struct {
			ID     string `json:"id"`
			Tool   string `json:"tool"`
			Input  string `json:"input"`
			Reason string `json:"reason"`
		} `json:"requests"`
	}
	if err := getJSON(ctx, base+"requests.json", &list); err != nil {
		return err
	}
	for _, q := range list.Requests {
		if seen[q.ID] {
			continue
		}
		seen[q.ID] = true
		fmt.Fprintf(w, "the inbox lists: %s %s (%s)\n", q.Tool, q.Input, q.Reason)
		if decide == "person" {
			fmt.Fprintf(w, "waiting for a person to decide at %srequest?id=%s\n", base, url.QueryEscape(q.ID))
			continue
		}
		if err := approve(ctx, base, q.ID); err != nil {
			return err
		}
		fmt.Fprintf(w, "alice approved it through the inbox\n")
	}
	return nil
}

var tokenField = regexp.MustCompile(`name="token" value="([^"]+)"`)

// approve approves the request id in the inbox at base, as alice.
func approve(ctx context.Context, base, id string) error {
	page, err := get(ctx, base+"request?id="+url.QueryEscape(id))
	if err != nil {
		return err
	}
	m := tokenField.FindSubmatch(page)
	if m == nil {
		return fmt.Errorf("the inbox's page of %s has no decision form", id)
	}
	form := url.Values{"id": {id}, "token": {string(m[1])}, "decision": {"approve"}, "comment": {"25 EUR for A-1001, as the customer asked"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"decide", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Approver", "alice")
	resp, err := noRedirect.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("the inbox did not record the decision: %s\n%s", resp.Status, b)
	}
	return nil
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Approver", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return b, err
}

func getJSON(ctx context.Context, u string, v any) error {
	b, err := get(ctx, u)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// report prints the conversation.
func report(w io.Writer, msgs []Message) {
	for _, m := range msgs {
		switch m.Role {
		case "tool":
			status := m.Status
			if m.Kind != "" {
				status += " (" + m.Kind + ")"
			}
			fmt.Fprintf(w, "%s (call %s)\n    status: %s   attempts: %d", m.Tool, m.CallID, status, m.Attempts)
			if m.ApprovedBy != "" {
				fmt.Fprintf(w, "   approved by %s", m.ApprovedBy)
			}
			fmt.Fprintf(w, "\n    the model sees: %s\n", m.Content)
		case "assistant":
			if m.Content != "" {
				fmt.Fprintf(w, "final answer: %s\n", m.Content)
			}
		}
	}
}

// upstream is the billing upstream: invoices, and refunds applied once per
// Idempotency-Key. The first refund request is applied and its answer
// held until its connection closes or release is closed; the keys of the
// refund requests are kept.
type upstream struct {
	ledger  *refunds.Ledger
	arrived chan struct{}
	release chan struct{}

	mu       sync.Mutex
	keys     []string
	held     bool
	released sync.Once
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != refunds.Path {
		billing.Handler().ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body) // whole, so the server notices the connection close
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	u.mu.Lock()
	u.keys = append(u.keys, r.Header.Get("Idempotency-Key"))
	first := !u.held
	u.held = true
	u.mu.Unlock()
	if !first {
		u.ledger.Handler().ServeHTTP(w, r)
		return
	}
	u.ledger.Handler().ServeHTTP(httptest.NewRecorder(), r) // applied; the answer is never sent
	close(u.arrived)
	select {
	case <-r.Context().Done():
	case <-u.release:
	}
}

func (u *upstream) releaseOnce() { u.released.Do(func() { close(u.release) }) }

func (u *upstream) refundKeys() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.keys...)
}

func distinct(ss []string) int {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return len(m)
}

// fleet starts and stops the worker processes.
type fleet struct {
	cmd []string
	env []string

	mu   sync.Mutex
	all  []*exec.Cmd
	logb bytes.Buffer
}

// start starts a worker process.
func (f *fleet) start() (*exec.Cmd, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cmd := exec.Command(f.cmd[0], f.cmd[1:]...)
	cmd.Env = append(os.Environ(), f.env...)
	cmd.Stdout, cmd.Stderr = &syncWriter{mu: &f.mu, w: &f.logb}, &syncWriter{mu: &f.mu, w: &f.logb}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a worker (%s): %w", f.cmd[0], err)
	}
	f.all = append(f.all, cmd)
	return cmd, nil
}

// kill kills the worker cmd (SIGKILL: no chance to finish anything) and
// waits for it to exit.
func (f *fleet) kill(cmd *exec.Cmd) error {
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	_ = cmd.Wait() // "signal: killed"
	return nil
}

// stopAll interrupts the workers still running and waits for them.
func (f *fleet) stopAll() {
	f.mu.Lock()
	all := f.all
	f.mu.Unlock()
	for _, cmd := range all {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
}

func (f *fleet) logs() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "the workers' logs:\n" + f.logb.String()
}

type syncWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
