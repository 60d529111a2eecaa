package adktools_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// joinedLog is a log handler that tells, on its channel, each call that
// waits for an identical call in flight (toolsafe's DEBUG line for it).
type joinedLog chan struct{}

func (j joinedLog) Enabled(context.Context, slog.Level) bool { return true }
func (j joinedLog) WithAttrs([]slog.Attr) slog.Handler       { return j }
func (j joinedLog) WithGroup(string) slog.Handler            { return j }
func (j joinedLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "waits for it") {
		j <- struct{}{}
	}
	return nil
}

// heldRefunds is the refunds upstream whose first request waits until an
// identical call has joined it (joined), or a second request arrives (the
// test then fails on the count): so the two calls overlap.
func heldRefunds(t *testing.T, ledger *refunds.Ledger, joined joinedLog) *toolsafetest.Upstream {
	t.Helper()
	arrived, release := make(chan struct{}, 2), make(chan struct{})
	go func() {
		<-arrived
		select {
		case <-joined:
		case <-arrived:
		}
		close(release)
	}()
	h := ledger.Handler()
	up := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	return up
}

// Regression (issue 32, item 6, through ADK's agent loop, which runs the
// calls of one turn at once; adk-java#285): a model that asks for the same
// refund twice in one turn had it sent twice. The second call waits for
// the first and replays its answer: the upstream gets one request.
func TestAnIdenticalCallInFlightIsMadeOnce(t *testing.T) {
	ledger := refunds.NewLedger()
	joined := make(joinedLog, 1)
	up := heldRefunds(t, ledger, joined)
	var rs results
	w := adktools.Wrap(refund(t, up.URL()), rs.option(), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithLogger(slog.New(joined)))
	big := map[string]any{"order": "A-1001", "amount_eur": 900}
	m := script(calls(call("call-1", "refund", big), call("call-2", "refund", big)), say("Refunded."))
	evs := newLoop(t, m, w).run(t, run.With(context.Background(), "s1", run.NewMemoryLedger()), "s1", ask("Refund A-1001 900 EUR."))
	if finalText(evs) != "Refunded." {
		t.Fatalf("the run ended with %q", finalText(evs))
	}
	if up.Requests(refunds.Path) != 1 || ledger.Applied() != 1 {
		t.Fatalf("%d requests, %d refunds applied; want one of each", up.Requests(refunds.Path), ledger.Applied())
	}
	a, b := m.response(t, "call-1"), m.response(t, "call-2")
	if a["status"] != "applied" || a["refund"] != b["refund"] {
		t.Errorf("the model got %v and %v; want the one refund for both", a, b)
	}
	got := rs.get(t, 2)
	if got[0].Replayed == got[1].Replayed {
		t.Errorf("results %+v; want one call made and the other replaying it", got)
	}
}

// The first of two identical calls pauses: the second pauses too, under its
// own call ID, so ADK asks the user about both; confirmed, ADK resumes both
// at once, and the refund is made once.
func TestAnIdenticalCallSharesThePauseOfTheFirst(t *testing.T) {
	ledger := refunds.NewLedger()
	joined := make(joinedLog, 2)
	up := heldRefunds(t, ledger, joined)
	w := adktools.Wrap(refund(t, up.URL()), toolsafe.WithApproval(adktools.Confirmations(nil)),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithLogger(slog.New(joined)))
	big := map[string]any{"order": "A-1001", "amount_eur": 900}
	m := script(calls(call("call-1", "refund", big), call("call-2", "refund", big)), say("Refunded."))
	l := newLoop(t, m, w)
	runs := run.NewMemoryLedger()
	evs := l.run(t, run.With(context.Background(), "s1", runs), "s1", ask("Refund A-1001 900 EUR."))
	reqs := adktools.Requests(evs[len(evs)-1])
	if len(reqs) != 2 || reqs[0].Pause.CallID == reqs[1].Pause.CallID || reqs[0].Pause.IdempotencyKey != reqs[1].Pause.IdempotencyKey {
		t.Fatalf("the run ended asking %+v; want both calls confirmed, one pause each, under one key", reqs)
	}
	for len(joined) > 0 { // the second joined the first's pause
		<-joined
	}
	answer := &genai.Content{Role: genai.RoleUser}
	for _, r := range reqs {
		answer.Parts = append(answer.Parts, adktools.Answer(r.ID, true).Parts...)
	}
	evs = l.run(t, run.With(context.Background(), "s1", runs), "s1", answer)
	if finalText(evs) != "Refunded." {
		t.Fatalf("the resumed run ended with %q", finalText(evs))
	}
	if up.Requests(refunds.Path) != 1 || ledger.Applied() != 1 {
		t.Fatalf("%d requests, %d refunds applied; want one of each", up.Requests(refunds.Path), ledger.Applied())
	}
	if a, b := m.response(t, "call-1"), m.response(t, "call-2"); a["status"] != "applied" || a["refund"] != b["refund"] {
		t.Errorf("the model got %v and %v; want the one refund for both", a, b)
	}
}
