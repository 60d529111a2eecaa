// Package webhook tells a chat (Slack, Mattermost, Teams through a
// workflow, or any HTTP endpoint) when a call starts waiting for a
// person's approval and when it is decided: a JSON POST with a "text" a
// chat shows and the structured fields a program reads, signed with an
// HMAC, retried with backoff (honouring Retry-After) through failsafe-go.
//
// # Signature
//
// Every POST carries
//
//	X-Toolsafe-Timestamp: 1796195123            (Unix seconds when it was signed)
//	X-Toolsafe-Signature: sha256=HEX            (HMAC-SHA256 with the secret)
//
// where HEX is the lowercase hex HMAC of the timestamp, a dot, and the
// body's bytes: "1796195123." + body. A receiver recomputes it with the
// shared secret, compares in constant time (Verify does both), and refuses
// a timestamp far from its clock, so a recorded POST cannot be replayed
// later. A retry is signed again, with its own timestamp.
//
// # What is sent
//
// The text names the tool and the run (through inbox.Reveal, with &, <
// and > escaped as Slack requires), never the input, which comes from a
// model: the input is in the structured field "input", for a program.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// Header names of the signature scheme.
const (
	SignatureHeader = "X-Toolsafe-Signature"
	TimestampHeader = "X-Toolsafe-Timestamp"
)

// DefaultRetries is how many times a POST is retried when it fails with a
// network error, 408, 429 or a 5xx: 4 retries, 5 attempts.
const DefaultRetries = 4

// MaxRetryAfter caps the wait a receiver's Retry-After may ask for: 1 minute.
const MaxRetryAfter = time.Minute

// Event is what a POST says: "waiting" or "decided".
type Event struct {
	// ID names the event, the same each time the same event is sent: the
	// retries of one POST, and a "waiting" that Watch sends again after a
	// restart for a request still waiting. A receiver that has handled an
	// ID drops the event. It is also the POST's Idempotency-Key header.
	// Waiting and Decided set it; Send sends one without it as it is.
	ID string `json:"id,omitempty"`
	// Text is what a chat shows.
	Text string `json:"text"`
	// Event is "waiting" when a request starts waiting, "decided" when a
	// person answered it (each vote of a quorum, too).
	Event     string    `json:"event"`
	RequestID string    `json:"request_id"`
	Tool      string    `json:"tool"`
	RunID     string    `json:"run_id,omitempty"`
	CallID    string    `json:"call_id,omitempty"`
	Input     string    `json:"input"`
	Reason    string    `json:"reason,omitempty"`
	Since     time.Time `json:"since"`
	// URL is the request's page in the inbox, when WithInboxURL is given.
	URL string `json:"url,omitempty"`
	// For "decided": the decision and who gave it, their comment, the
	// changed input of an approval with changes, a denial's message, and
	// the votes so far of a quorum.
	Decision     string    `json:"decision,omitempty"`
	By           string    `json:"by,omitempty"`
	Comment      string    `json:"comment,omitempty"`
	ChangedInput string    `json:"changed_input,omitempty"`
	Message      string    `json:"message,omitempty"`
	Approvals    int       `json:"approvals,omitempty"`
	Quorum       int       `json:"quorum,omitempty"`
	At           time.Time `json:"at,omitzero"`
}

// Notifier POSTs events to one URL. It is safe for concurrent use.
type Notifier struct {
	url    string
	secret []byte
	client *http.Client
	inbox  string
	retry  retrypolicy.RetryPolicy[*http.Response]
	now    func() time.Time
}

// Option configures a Notifier.
type Option func(*Notifier)

// WithClient sets the HTTP client (default: one with a 10s timeout).
func WithClient(c *http.Client) Option { return func(n *Notifier) { n.client = c } }

// WithInboxURL sets where the inbox is mounted, e.g.
// "https://ops.example.com/approvals/": events link to the request's page.
func WithInboxURL(u string) Option { return func(n *Notifier) { n.inbox = u } }

// WithRetries sets how many times a failed POST is retried (default
// DefaultRetries; 0: never) and the backoff between attempts, from first
// doubling up to most (default 500ms up to 30s); a Retry-After of 429 or
// 503, in seconds or as an HTTP date, replaces the backoff, up to
// MaxRetryAfter.
func WithRetries(retries int, first, most time.Duration) Option {
	return func(n *Notifier) { n.retry = policy(retries, first, most) }
}

// New returns a Notifier that POSTs to webhookURL, signed with secret (at
// least 32 bytes). It returns an error for a URL that is not http or https
// or a secret too short.
func New(webhookURL string, secret []byte, opts ...Option) (*Notifier, error) {
	u, err := url.Parse(webhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook: %q is not an http or https URL", webhookURL)
	}
	if len(secret) < 32 {
		return nil, fmt.Errorf("webhook: the secret has %d bytes: give at least 32, and the same to the receiver", len(secret))
	}
	n := &Notifier{url: webhookURL, secret: append([]byte(nil), secret...), client: &http.Client{Timeout: 10 * time.Second},
		retry: policy(DefaultRetries, 500*time.Millisecond, 30*time.Second), now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(n)
		}
	}
	return n, nil
}

// errRetry is an attempt whose answer asks for a retry.
type errRetry struct {
	status int
	wait   time.Duration // from Retry-After; 0: the backoff
}

func (e *errRetry) Error() string { return "webhook: the receiver answered " + strconv.Itoa(e.status) }

func policy(retries int, first, most time.Duration) retrypolicy.RetryPolicy[*http.Response] {
	if first <= 0 {
		first = 500 * time.Millisecond
	}
	most = max(most, first)
	return retrypolicy.NewBuilder[*http.Response]().
		WithMaxRetries(max(retries, 0)).
		WithBackoff(first, most).
		HandleIf(func(_ *http.Response, err error) bool {
			var re *errRetry
			return errors.As(err, &re) || (err != nil && !errors.Is(err, errRefused))
		}).
		WithDelayFunc(func(e failsafe.ExecutionAttempt[*http.Response]) time.Duration {
			var re *errRetry
			if errors.As(e.LastError(), &re) && re.wait > 0 {
				return re.wait
			}
			return -1 // the backoff
		}).
		ReturnLastFailure().
		Build()
}

// errRefused is an answer not worth a retry: 4xx other than 408 and 429.
var errRefused = errors.New("webhook: the receiver refused the event")

// Send POSTs e, retried as WithRetries says; it returns nil on a 2xx, or
// an error saying what the last attempt got, which never holds the
// webhook's URL (a chat's is a credential). It honours ctx.
func (n *Notifier) Send(ctx context.Context, e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	_, err = failsafe.With(n.retry).WithContext(ctx).GetWithExecution(func(exec failsafe.Execution[*http.Response]) (*http.Response, error) {
		return nil, n.post(exec.Context(), e.ID, body)
	})
	if err != nil {
		return fmt.Errorf("webhook: the event %s of %s was not delivered: %w", e.Event, e.RequestID, err)
	}
	return nil
}

func (n *Notifier) post(ctx context.Context, id string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(n.now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(TimestampHeader, ts)
	req.Header.Set(SignatureHeader, "sha256="+Sign(n.secret, ts, body))
	if id != "" {
		req.Header.Set("Idempotency-Key", id)
	}
	resp, err := n.client.Do(req)
	if ue, ok := errors.AsType[*url.Error](err); ok {
		// Its text holds the URL, a credential for most chats (Slack's
		// hooks.slack.com/services/.../SECRET): keep what failed only.
		return fmt.Errorf("webhook: the POST to the receiver failed: %w", ue.Err)
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		return &errRetry{status: resp.StatusCode, wait: retryAfter(resp.Header.Get("Retry-After"), n.now())}
	}
	return fmt.Errorf("%w: %d", errRefused, resp.StatusCode)
}

// retryAfter reads a Retry-After in seconds or as an HTTP date, capped at
// MaxRetryAfter; 0 when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// Sign returns the lowercase hex HMAC-SHA256, with secret, of timestamp,
// a dot and body: the value after "sha256=" in SignatureHeader.
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp + "."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether the POST's signature header and timestamp header
// sign body with secret, and the timestamp is within skew of now: what a
// receiver checks before it trusts an event.
func Verify(secret []byte, signature, timestamp string, body []byte, now time.Time, skew time.Duration) bool {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(sec, 0)); d > skew || d < -skew {
		return false
	}
	got, ok := strings.CutPrefix(signature, "sha256=")
	return ok && hmac.Equal([]byte(got), []byte(Sign(secret, timestamp, body)))
}

// chat escapes s for a chat's text: invisible characters as their codes
// (inbox.Reveal), &, < and > as entities, at most 100 characters.
func chat(s string) string {
	s = inbox.Reveal(s)
	if r := []rune(s); len(r) > 100 {
		s = string(r[:100]) + "…"
	}
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (n *Notifier) link(id string) string {
	if n.inbox == "" {
		return ""
	}
	return strings.TrimSuffix(n.inbox, "/") + "/request?id=" + url.QueryEscape(id)
}

// Waiting returns the event of r starting to wait.
func (n *Notifier) Waiting(r approval.Request) Event {
	e := Event{ID: "waiting:" + r.ID, Event: "waiting", RequestID: r.ID, Tool: r.Call.Tool, RunID: r.Call.RunID, CallID: r.Call.CallID,
		Input: r.Call.Input, Reason: r.Call.Reason(), Since: r.Since.UTC(), URL: n.link(r.ID), Quorum: r.Quorum}
	e.Text = fmt.Sprintf("%s waits for approval (run %s)", chat(e.Tool), chat(e.RunID))
	if e.Quorum > 1 {
		e.Text += fmt.Sprintf("; %d people must approve", e.Quorum)
	}
	if e.URL != "" {
		e.Text += ": <" + e.URL + "|open the request>"
	}
	return e
}

// Decided returns the event of rec, a person's answer.
func (n *Notifier) Decided(rec approval.Record) Event {
	e := Event{ID: decidedID(rec), Event: "decided", RequestID: rec.RequestID, Tool: rec.Call.Tool, RunID: rec.Call.RunID, CallID: rec.Call.CallID,
		Input: rec.Call.Input, Since: rec.Since.UTC(), URL: n.link(rec.RequestID), Decision: rec.Decision.String(), By: rec.By,
		Comment: rec.Comment, ChangedInput: rec.Input, Message: rec.Message, Approvals: rec.Approvals, Quorum: rec.Quorum, At: rec.At.UTC()}
	e.Text = fmt.Sprintf("%s %s %s (run %s)", chat(rec.By), e.Decision, chat(e.Tool), chat(e.RunID))
	switch {
	case rec.Decision == approval.Approved && rec.Approvals < rec.Quorum:
		e.Text += fmt.Sprintf(": %d of %d approvals, it waits for more", rec.Approvals, rec.Quorum)
	case rec.Input != "":
		e.Text += ", with changes"
	}
	return e
}

// decidedID names the event of rec: one person answers a request once at a
// time, so its request, its person and its time name it.
func decidedID(rec approval.Record) string {
	return "decided:" + rec.RequestID + ":" + strconv.FormatInt(rec.At.UnixNano(), 10) + ":" + rec.By
}
