package browsertest

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/inbox"
	agentrun "github.com/toolsafe/toolsafe/run"
)

var screenshots = flag.String("screenshots", "", "also write the screenshots of a quorum half-way (quorum.png) and of an approval with changes (changes.png) into this directory (the README's are in ..)")

const refundSchema = `{"type":"object","required":["order","amount_eur"],"additionalProperties":false,
 "properties":{"order":{"type":"string"},"amount_eur":{"type":"number","minimum":0,"maximum":100}}}`

// refunds is the upstream of the tests' refund tool: the inputs it ran
// with.
type refunds struct {
	mu  sync.Mutex
	ran []string
}

func (*refunds) Name() string        { return "refund" }
func (*refunds) Description() string { return "refunds an order" }
func (r *refunds) Call(_ context.Context, input string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran = append(r.ran, input)
	return "refunded", nil
}

var _ tools.Tool = (*refunds)(nil)

// team is an inbox whose users are named by an X-User header: alice and
// bob in finance, which decides refunds, carol in support, which decides
// lookups; refunds need quorum approvals and their changes are checked
// against refundSchema. The agent's refund tool asks its Grants.
type team struct {
	grants *approval.Grants
	up     *refunds
	tool   *toolsafe.Tool
	url    string
	log    syncBuffer
}

func newTeam(t *testing.T, quorum int) *team {
	t.Helper()
	schema, err := argschema.Compile([]byte(refundSchema))
	if err != nil {
		t.Fatal(err)
	}
	tm := &team{grants: &approval.Grants{Quorum: map[string]int{"refund": quorum}}, up: &refunds{}}
	tm.tool = toolsafe.Wrap(tm.up, toolsafe.WithApproval(tm.grants))
	groups := inbox.Groups{"finance": {"alice", "bob"}, "support": {"carol"}}
	h, err := inbox.New(inbox.Memory(tm.grants), func(r *http.Request) (string, bool) {
		u := r.Header.Get("X-User")
		return u, u != ""
	},
		inbox.WithPollInterval(200*time.Millisecond),
		inbox.WithLogger(newLogger(&tm.log)),
		inbox.WithAuthorize(inbox.Approvers(groups, map[string][]string{"refund": {"finance"}, "lookup": {"support"}})),
		inbox.WithInputCheck(func(tool, input string) error {
			if tool != "refund" {
				return errors.New("this tool takes no changes")
			}
			return schema.Check(input)
		}))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	tm.url = ts.URL + "/"
	return tm
}

const asked = `{"order":"A-1001","amount_eur":250}`

// pause makes the agent's refund call in runID, which pauses for approval.
func (tm *team) pause(t *testing.T, runID string) (context.Context, *approval.Required) {
	t.Helper()
	ctx := agentrun.With(context.Background(), runID, agentrun.NewMemoryLedger())
	_, err := tm.tool.Call(ctx, asked)
	var req *approval.Required
	if !errors.As(err, &req) {
		t.Fatalf("the refund did not pause: %v", err)
	}
	return ctx, req
}

func (tm *team) requestURL(t *testing.T) string {
	t.Helper()
	rs := tm.grants.Requests()
	if len(rs) != 1 {
		t.Fatalf("requests %+v", rs)
	}
	return tm.url + "request?id=" + url.QueryEscape(rs[0].ID)
}

func TestAPersonOutsideTheToolsGroupsIsRefusedInChromium(t *testing.T) {
	tm := newTeam(t, 1)
	tm.pause(t, "run-a")
	carol := tab(t, map[string]any{"X-User": "carol"})
	run(t, carol, chromedp.Navigate(tm.url))
	contains(t, "carol's list", text(t, carol, "#pending"), "Nothing waits.")
	resp := value(t, carol, chromedp.NavigateResponse(tm.requestURL(t)))
	if resp.Status != http.StatusForbidden {
		t.Fatalf("carol opened the refund: %d", resp.Status)
	}
	contains(t, "the refusal", text(t, carol, "#problem"), "You may not decide requests of this tool")
	if !strings.Contains(tm.log.String(), "user=carol tool=refund") {
		t.Fatalf("the refusal was not logged:\n%s", tm.log.String())
	}
	alice := tab(t, map[string]any{"X-User": "alice"})
	run(t, alice, chromedp.Navigate(tm.url))
	contains(t, "alice's list", text(t, alice, "tr.request td.tool"), "refund")
}

func TestTwoPeopleApproveARefundWithAQuorumOfTwoInChromium(t *testing.T) {
	tm := newTeam(t, 2)
	ctx, req := tm.pause(t, "run-q")
	page := tm.requestURL(t)
	alice := tab(t, map[string]any{"X-User": "alice"})
	run(t, alice, chromedp.Navigate(page), chromedp.WaitVisible("#approve"))
	contains(t, "the quorum before any vote", text(t, alice, "#quorum"), "0 of 2 approvals")
	run(t, alice, chromedp.SendKeys("#comment", "checked the statement"), chromedp.Click("#approve", chromedp.NodeVisible))
	contains(t, "alice's notice", text(t, alice, "#notice"), "one vote")
	if r := tm.tool.Run(agentrun.Resume(ctx, req), asked); r.Status() != "paused" {
		t.Fatalf("one of two approvals: %s", r.Observation())
	}

	bob := tab(t, map[string]any{"X-User": "bob"})
	run(t, bob, chromedp.Navigate(page), chromedp.WaitVisible("#quorum"))
	contains(t, "the quorum half-way", text(t, bob, "#quorum"), "1 of 2 approvals", "alice approved at")
	save(t, "quorum.png", value(t, bob, chromedp.FullScreenshot(100)))

	// alice again: one person is one vote.
	run(t, alice, chromedp.Navigate(page), chromedp.WaitVisible("#approve"))
	contains(t, "alice's page", text(t, alice, "#quorum"), "You approved it already")
	run(t, alice, chromedp.Click("#approve", chromedp.NodeVisible))
	contains(t, "alice's second vote", text(t, alice, "h1"), "Already approved by you")

	run(t, bob, chromedp.Click("#approve", chromedp.NodeVisible))
	contains(t, "bob's notice", text(t, bob, "#notice"), "Approved.")
	r := tm.tool.Run(agentrun.Resume(ctx, req), asked)
	if r.Status() != "ok" || len(tm.up.ran) != 1 {
		t.Fatalf("two approvals: %s, ran %q", r.Observation(), tm.up.ran)
	}
	run(t, bob, chromedp.Navigate(tm.url+"audit"))
	audit := text(t, bob, "main")
	contains(t, "the audit", audit, "alice", "bob", "1 of 2", "2 of 2")
}

func TestApproveWithChangesInChromiumRunsThePersonsArgumentsAndTellsTheModel(t *testing.T) {
	tm := newTeam(t, 1)
	ctx, req := tm.pause(t, "run-e")
	alice := tab(t, map[string]any{"X-User": "alice"})
	run(t, alice, chromedp.Navigate(tm.requestURL(t)), chromedp.WaitVisible("#approve"),
		chromedp.Click("#changes summary", chromedp.NodeVisible), chromedp.WaitVisible("#changed"))

	// Over the schema's maximum: a clear error, nothing recorded.
	run(t, alice, chromedp.SetValue("#changed", `{"order":"A-1001","amount_eur":500}`), chromedp.Click("#approve-changed", chromedp.NodeVisible))
	contains(t, "the invalid change", text(t, alice, "#problem"), "do not fit the tool's schema", "amount_eur", "Nothing was recorded")
	if len(tm.grants.Audit(0)) != 0 {
		t.Fatal("an invalid change was recorded")
	}

	run(t, alice, chromedp.Navigate(tm.requestURL(t)), chromedp.WaitVisible("#approve"),
		chromedp.Click("#changes summary", chromedp.NodeVisible),
		chromedp.SetValue("#changed", "{\n  \"order\": \"A-1001\",\n  \"amount_eur\": 25\n}"),
		chromedp.SendKeys("#comment", "the customer was charged 25 EUR, not 250"))
	save(t, "changes.png", value(t, alice, chromedp.FullScreenshot(100)))
	run(t, alice, chromedp.Click("#approve-changed", chromedp.NodeVisible))
	contains(t, "the notice", text(t, alice, "#notice"), "Approved.")

	r := tm.tool.Run(agentrun.Resume(ctx, req), asked)
	if r.Status() != "ok" {
		t.Fatalf("resumed: %s", r.Observation())
	}
	if len(tm.up.ran) != 1 || tm.up.ran[0] != `{"amount_eur":25,"order":"A-1001"}` {
		t.Fatalf("the upstream ran %q; want alice's arguments only", tm.up.ran)
	}
	const model = `A person changed this call before approving it, and it ran with their arguments; "amount_eur" is now 25. Do not call it again with the original arguments.` + "\nrefunded"
	if got := r.Observation(); got != model {
		t.Fatalf("the model reads %q; want %q", got, model)
	}
}

// save checks png and writes it as name into -screenshots, or a temporary
// directory.
func save(t *testing.T, name string, png []byte) {
	t.Helper()
	if !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		t.Fatalf("the screenshot is not a PNG (%d bytes)", len(png))
	}
	dir := t.TempDir()
	if *screenshots != "" {
		dir = *screenshots
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newLogger(w *syncBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
