// Package inboxdemo is the approvals inbox demo of examples/inbox, and of
// its browser test: a billing agent whose refund waits for a person, who
// approves or denies it in the inbox page; the run then resumes and the
// refund is applied once.
package inboxdemo

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// The demo's run.
const (
	// Question is what the agent is asked.
	Question = "Refund 25 EUR for order A-1001: the customer was charged twice."
	// Input is the refund's input, which waits for approval.
	Input = `{"order":"A-1001","amount_eur":25}`
	// RunID is the agent run's ID (run.With).
	RunID = "billing-run-A-1001"
	// User is who the login link signs in.
	User = "on-call"
)

const action = "Thought: The customer was charged twice; refund order A-1001.\nAction: refund\nAction Input: " + Input

// Outcome is how the run ended.
type Outcome struct {
	Decision approval.Decision // what the person answered
	Answer   string            // the agent's final answer
	Applied  int               // refunds the upstream applied
	Requests int               // refund requests it received
}

// Demo is the running demo: the agent's run and the inbox's server.
type Demo struct {
	// URL is the inbox, LoginURL the link that signs its user in.
	URL, LoginURL string

	srv      *http.Server
	upstream *toolsafetest.Upstream
	done     chan struct{}
	paused   chan struct{} // closed at the run's first pause
	pauseOne sync.Once
	cancel   context.CancelFunc
	mu       sync.Mutex
	state    string
	outcome  Outcome
	err      error
}

// Start serves the inbox on addr ("127.0.0.1:0": a free port) and starts
// the agent's run, which writes what happens to w.
func Start(addr string, w io.Writer) (*Demo, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	grants := approval.NewGrants()
	answered := make(chan approval.Record, 1)
	d := &Demo{done: make(chan struct{}), paused: make(chan struct{}), state: "starting"}
	session, key := random(), random()
	identity := func(r *http.Request) (string, bool) {
		c, err := r.Cookie("toolsafe_demo_session")
		return User, err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(session)) == 1
	}
	full, ok := inbox.Memory(grants).(store)
	if !ok {
		l.Close()
		return nil, errors.New("inboxdemo: inbox.Memory's store lacks a method the demo forwards (Reply, Overflow, RecordRefusal, Events)")
	}
	h, err := inbox.New(notify{full, answered}, identity, inbox.WithPollInterval(500*time.Millisecond))
	if err != nil {
		l.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("key")), []byte(key)) != 1 {
			http.Error(w, "this login link is not valid", http.StatusForbidden)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "toolsafe_demo_session", Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /run", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := identity(r); !ok {
			http.Error(w, "sign in first", http.StatusForbidden)
			return
		}
		d.status(w)
	})
	d.URL = "http://" + l.Addr().String() + "/"
	d.LoginURL = d.URL + "login?key=" + key
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.srv.Serve(l) }()

	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	ledger := refunds.NewLedger()
	d.upstream = toolsafetest.NewUpstream(ledger.Handler())
	refund := toolsafe.Wrap(refunds.Tool(d.upstream.URL(), toolsafetest.NoKeepAliveClient(), true),
		toolsafe.WithApproval(grants, approval.ApproveEachAttempt), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	go func() {
		defer close(d.done)
		o, err := d.run(ctx, w, refund, answered)
		o.Applied, o.Requests = ledger.Applied(), d.upstream.Requests(refunds.Path)
		d.finish(w, o, err)
	}()
	return d, nil
}

// run runs the agent until it ends, waiting for the person at each pause.
func (d *Demo) run(ctx context.Context, w io.Writer, refund tools.Tool, answered <-chan approval.Record) (Outcome, error) {
	var o Outcome
	script := []string{action}
	// A ledger of the demo's own: the run's completed calls are kept in it
	// across the pause, and a program that runs the demo twice starts afresh
	// (the process's default ledger would answer the second from the first).
	runCtx := run.With(ctx, RunID, run.NewMemoryLedger())
	for {
		agent := agents.NewOneShotAgent(fake.NewFakeLLM(script), []tools.Tool{refund})
		out, err := agents.NewExecutor(agent, agents.WithMaxIterations(3)).Call(runCtx, map[string]any{"input": Question})
		var ar *approval.Required
		if !errors.As(err, &ar) {
			if err != nil {
				return o, fmt.Errorf("the agent run failed: %w", err)
			}
			o.Answer, _ = out["output"].(string)
			return o, nil
		}
		d.setState("waiting for approval: " + ar.Tool + " " + ar.Input)
		fmt.Fprintf(w, "run %s paused: %s %s needs approval: %s\n    decide at %s\n", ar.RunID, ar.Tool, ar.Input, ar.Reason, d.LoginURL)
		d.pauseOne.Do(func() { close(d.paused) })
		select {
		case rec := <-answered:
			o.Decision = rec.Decision
			fmt.Fprintf(w, "%s %s it (%q); the run resumes\n", rec.By, rec.Decision, rec.Comment)
		case <-ctx.Done():
			return o, ctx.Err()
		}
		d.setState("running")
		// The scripted model sees the tool's answer: the refund, or that the
		// person denied it.
		final := "Final Answer: Order A-1001 was refunded 25 EUR."
		if o.Decision == approval.Denied {
			final = "Final Answer: The refund for order A-1001 was not approved, so it was not made."
		}
		script = []string{action, final}
		runCtx = run.Resume(runCtx, ar)
	}
}

func (d *Demo) finish(w io.Writer, o Outcome, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.outcome, d.err = o, err
	if err != nil {
		d.state = "failed"
		fmt.Fprintf(w, "the run failed: %v\n", err)
		return
	}
	d.state = "finished"
	fmt.Fprintf(w, "final answer: %s\nrefund requests received upstream: %d\nrefunds applied by the upstream: %d\n", o.Answer, o.Requests, o.Applied)
}

func (d *Demo) setState(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.state = s
}

// Paused is closed when the run first pauses for approval: the inbox lists
// the request from then on.
func (d *Demo) Paused() <-chan struct{} { return d.paused }

// Done is closed when the run has ended.
func (d *Demo) Done() <-chan struct{} { return d.done }

// Outcome returns how the run ended, once Done is closed.
func (d *Demo) Outcome() (Outcome, error) {
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.outcome, d.err
}

// Close stops the run, if it still waits, and the servers.
func (d *Demo) Close() error {
	d.cancel()
	<-d.done
	err := d.srv.Close()
	d.upstream.Close()
	return err
}

// store is what notify wraps: the inbox's Store with every optional
// method the inbox uses (approval with changes, overflow, refusals in the
// audit trail), as inbox.Memory has them.
type store interface {
	inbox.Store
	inbox.Replier
	inbox.Overflower
	inbox.EventStore
}

// notify tells answered of each answer recorded. It wraps the whole store,
// not just inbox.Store: a struct that embedded inbox.Store alone would hide
// the rest from the inbox.
type notify struct {
	store
	answered chan approval.Record
}

func (n notify) Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	r, err := n.store.Answer(ctx, id, d, by, comment)
	n.tell(r, err)
	return r, err
}

func (n notify) Reply(ctx context.Context, id string, rep approval.Reply) (approval.Record, error) {
	r, err := n.store.Reply(ctx, id, rep)
	n.tell(r, err)
	return r, err
}

func (n notify) tell(r approval.Record, err error) {
	if err == nil {
		select {
		case n.answered <- r:
		default:
		}
	}
}

func random() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
