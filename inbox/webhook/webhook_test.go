package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/inbox/webhook"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

// delivery is one POST the receiver took.
type delivery struct {
	event    webhook.Event
	verified bool
	key      string // the Idempotency-Key header
}

// receiver is a chat's endpoint on 127.0.0.1: it checks each POST's
// signature and answers with the statuses given, then 200.
func receiver(t *testing.T, statuses ...int) (*httptest.Server, <-chan delivery, *atomic.Int32) {
	t.Helper()
	got := make(chan delivery, 16)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(statuses) {
			if statuses[i] == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "0")
			}
			w.WriteHeader(statuses[i])
			return
		}
		body, _ := io.ReadAll(r.Body)
		var e webhook.Event
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("the body is not JSON: %v", err)
		}
		ok := webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), r.Header.Get(webhook.TimestampHeader), body, time.Now(), time.Minute)
		got <- delivery{e, ok, r.Header.Get("Idempotency-Key")}
	}))
	t.Cleanup(srv.Close)
	return srv, got, &n
}

func TestARequestWaitingAndItsDecisionReachTheWebhookSigned(t *testing.T) {
	srv, got, _ := receiver(t)
	n, err := webhook.New(srv.URL, secret, webhook.WithInboxURL("https://ops.example.com/approvals/"))
	if err != nil {
		t.Fatal(err)
	}
	g := &approval.Grants{Quorum: map[string]int{"refund": 2}}
	g.Decide(context.Background(), approval.CallInfo{Tool: "refund", CallID: "c1", RunID: "run-<!channel>", Input: `{"order":"A-1001"}`, Attempt: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- webhook.Watch(ctx, inbox.Memory(g), n, 100*time.Millisecond, nil) }()
	defer func() { cancel(); <-done }()

	d := <-got
	id := g.Requests()[0].ID
	if !d.verified || d.event.Event != "waiting" || d.event.RequestID != id || d.event.Input != `{"order":"A-1001"}` {
		t.Fatalf("waiting: %+v", d)
	}
	if want := "refund waits for approval (run run-&lt;!channel&gt;); 2 people must approve: <https://ops.example.com/approvals/request?id=" + id + "|open the request>"; d.event.Text != want {
		t.Fatalf("text %q\nwant %q", d.event.Text, want)
	}
	if _, err := g.Answer(id, approval.Approved, "alice", "ok"); err != nil {
		t.Fatal(err)
	}
	d = <-got
	if !d.verified || d.event.Event != "decided" || d.event.By != "alice" || d.event.Approvals != 1 || d.event.Quorum != 2 ||
		d.event.Text != "alice approved refund (run run-&lt;!channel&gt;): 1 of 2 approvals, it waits for more" {
		t.Fatalf("the first vote: %+v", d)
	}
	if _, err := g.Reply(id, approval.Reply{Decision: approval.Denied, By: "bob", Message: "needs a ticket"}); err != nil {
		t.Fatal(err)
	}
	if d = <-got; d.event.Decision != "denied" || d.event.Message != "needs a ticket" {
		t.Fatalf("the denial: %+v", d)
	}
}

// A Watch started again (a restart) sends "waiting" again for a request
// still waiting: with the same event ID and Idempotency-Key, so the
// receiver can tell it has handled it; a decision has an ID of its own.
func TestARestartedWatchResendsWaitingUnderTheSameID(t *testing.T) {
	srv, got, _ := receiver(t)
	n, err := webhook.New(srv.URL, secret)
	if err != nil {
		t.Fatal(err)
	}
	g := &approval.Grants{}
	g.Decide(context.Background(), approval.CallInfo{Tool: "refund", CallID: "c1", RunID: "run-1", Input: `{"order":"A-1001"}`, Attempt: 1})
	watch := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- webhook.Watch(ctx, inbox.Memory(g), n, 100*time.Millisecond, nil) }()
		return func() { cancel(); <-done }
	}
	stop := watch()
	first := <-got
	stop()
	stop = watch() // the process restarted
	defer stop()
	again := <-got
	if first.event.Event != "waiting" || again.event.Event != "waiting" {
		t.Fatalf("events %q then %q; want waiting twice", first.event.Event, again.event.Event)
	}
	if first.event.ID == "" || again.event.ID != first.event.ID || first.key != first.event.ID || again.key != first.key {
		t.Fatalf("IDs %q then %q, Idempotency-Keys %q then %q; want one ID, sent as the key both times",
			first.event.ID, again.event.ID, first.key, again.key)
	}
	id := g.Requests()[0].ID
	if _, err := g.Answer(id, approval.Approved, "alice", "ok"); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.event.Event != "decided" || d.event.ID == "" || d.event.ID == first.event.ID || d.key != d.event.ID {
		t.Fatalf("the decision: ID %q, key %q; want an ID of its own, sent as the key", d.event.ID, d.key)
	}
}

func TestAFailedPostIsRetriedAndARefusalIsNot(t *testing.T) {
	ev := webhook.Event{Event: "waiting", RequestID: "1.x", Tool: "refund", Text: "refund waits"}
	t.Run("503 with Retry-After, then 500, then delivered", func(t *testing.T) {
		srv, got, n := receiver(t, http.StatusServiceUnavailable, http.StatusInternalServerError)
		nt, _ := webhook.New(srv.URL, secret, webhook.WithRetries(2, time.Millisecond, time.Millisecond))
		if err := nt.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if d := <-got; !d.verified || n.Load() != 3 {
			t.Fatalf("%d attempts, %+v", n.Load(), d)
		}
	})
	t.Run("retries exhausted", func(t *testing.T) {
		srv, _, n := receiver(t, 500, 500, 500, 500)
		nt, _ := webhook.New(srv.URL, secret, webhook.WithRetries(2, time.Millisecond, time.Millisecond))
		err := nt.Send(context.Background(), ev)
		if err == nil || n.Load() != 3 || !strings.Contains(err.Error(), "500") {
			t.Fatalf("%d attempts, %v", n.Load(), err)
		}
	})
	t.Run("a 400 is not retried", func(t *testing.T) {
		srv, _, n := receiver(t, 400, 400)
		nt, _ := webhook.New(srv.URL, secret, webhook.WithRetries(2, time.Millisecond, time.Millisecond))
		if err := nt.Send(context.Background(), ev); err == nil || n.Load() != 1 {
			t.Fatalf("%d attempts, %v", n.Load(), err)
		}
	})
}

func TestASignatureCoversTheBodyAndTheTime(t *testing.T) {
	now := time.Unix(1796195123, 0)
	body := []byte(`{"text":"x"}`)
	sig := "sha256=" + webhook.Sign(secret, "1796195123", body)
	if !webhook.Verify(secret, sig, "1796195123", body, now, time.Minute) {
		t.Fatal("a valid signature was refused")
	}
	for name, ok := range map[string]bool{
		"another body":   webhook.Verify(secret, sig, "1796195123", []byte(`{"text":"y"}`), now, time.Minute),
		"another time":   webhook.Verify(secret, sig, "1796195124", body, now, time.Minute),
		"too old":        webhook.Verify(secret, sig, "1796195123", body, now.Add(time.Hour), time.Minute),
		"another secret": webhook.Verify([]byte("another secret of at least 32 bytes!"), sig, "1796195123", body, now, time.Minute),
	} {
		if ok {
			t.Errorf("%s verified", name)
		}
	}
	if _, err := webhook.New("ftp://x", secret); err == nil {
		t.Error("an ftp URL was taken")
	}
	if _, err := webhook.New("http://127.0.0.1/", []byte("short")); err == nil {
		t.Error("a short secret was taken")
	}
}
