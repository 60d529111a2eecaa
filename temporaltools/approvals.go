package temporaltools

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/inbox"
)

// DecideUpdate is the name of the workflow update that carries a person's
// decision (an Answer) to the Run waiting for it; it returns the audit
// trail's approval.Record. Store sends it; any client may. An answer to a
// request that no longer waits as shown is rejected (an ApplicationError of
// type "toolsafe.not-pending") and changes nothing.
const DecideUpdate = "toolsafe.decide"

// ApprovalsQuery is the name of the workflow query that returns a Run's
// Approvals: what it waits for and what was decided, as the workflow's
// state has it now. The memo "toolsafe.approvals" holds the same, for
// listing without a worker (Store reads it).
const ApprovalsQuery = "toolsafe.approvals"

// memoKey is the workflow memo field of a Run's Approvals.
const memoKey = "toolsafe.approvals"

// The types of the ApplicationErrors that refuse an Answer.
const (
	errNotPending = "toolsafe.not-pending"
	errBadAnswer  = "toolsafe.bad-answer"
)

// memoBudget caps the memo's size in bytes, under Temporal's default
// memo limit (32 KiB): past it the oldest audit records are left out of
// the memo (the query still has them).
const memoBudget = 24 << 10

// Answer is a person's decision on one request a Run waits for: the
// argument of DecideUpdate.
type Answer struct {
	// RequestID is the approval.Request.ID answered, as listed.
	RequestID string `json:"request_id"`
	// Decision is approval.Approved or approval.Denied.
	Decision approval.Decision `json:"decision"`
	// By is who decided, as the program identified them; Comment is
	// theirs, at most inbox.MaxComment characters.
	By      string `json:"by"`
	Comment string `json:"comment,omitempty"`
}

// Approvals is what a Run waits for and what was decided.
type Approvals struct {
	// Pending are the requests waiting, oldest first.
	Pending []approval.Request `json:"pending"`
	// Audit are the decisions, newest first, at most RunOptions.MaxAudit.
	Audit []approval.Record `json:"audit"`
}

// waiting is one call waiting for a decision.
type waiting struct {
	req    approval.Request
	answer *approval.Record
}

// handle registers the Run's query and update handlers.
func (r *Run) handle(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, ApprovalsQuery, func() (Approvals, error) { return r.approvals(), nil }); err != nil {
		return fmt.Errorf("temporaltools: the approvals query: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, DecideUpdate, r.decide, workflow.UpdateHandlerOptions{Validator: r.validate}); err != nil {
		return fmt.Errorf("temporaltools: the decision update: %w", err)
	}
	return nil
}

// wait lists the paused call p as a request, and waits until a person
// decides it (the decision and its record) or the approval timeout passes
// (nil, nil). It returns an error when ctx ends.
func (r *Run) wait(ctx workflow.Context, p *pause) (*decision, *approval.Record, error) {
	call := p.Call
	if call.CanonicalInput == "" {
		if canon, err := canonical.JSON(call.Input); err == nil {
			call.CanonicalInput = canon
		}
	}
	r.asked++
	w := &waiting{req: approval.Request{ID: requestID(r.exec, r.asked, call), Since: workflow.Now(ctx), Call: call}}
	r.pending = append(r.pending, w)
	r.publish(ctx)
	decided := func() bool { return w.answer != nil }
	var err error
	if r.opts.ApprovalTimeout > 0 {
		_, err = workflow.AwaitWithTimeout(ctx, r.opts.ApprovalTimeout, decided)
	} else {
		err = workflow.Await(ctx, decided)
	}
	if w.answer == nil {
		r.drop(w)
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		r.publish(dctx)
		return nil, nil, err
	}
	rec := *w.answer
	return &decision{RequestID: rec.RequestID, Decision: rec.Decision, Tool: call.Tool,
		CanonicalInput: call.CanonicalInput, RunID: call.RunID, CallID: call.CallID}, &rec, nil
}

// validate refuses an Answer that cannot be recorded, or whose request
// does not wait as shown; it changes nothing.
func (r *Run) validate(_ workflow.Context, a Answer) error {
	if err := approval.CheckAnswer(a.Decision, a.By); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), errBadAnswer, nil)
	}
	if !utf8.ValidString(a.Comment) || utf8.RuneCountInString(a.Comment) > inbox.MaxComment {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("approval: a comment is text of at most %d characters", inbox.MaxComment), errBadAnswer, nil)
	}
	if r.find(a.RequestID) == nil {
		return temporal.NewNonRetryableApplicationError(approval.ErrNotPending.Error(), errNotPending, nil)
	}
	return nil
}

// decide records the Answer a: the waiting call continues as decided, and
// the audit trail gets its record, in one step of the workflow.
func (r *Run) decide(ctx workflow.Context, a Answer) (approval.Record, error) {
	if err := r.validate(ctx, a); err != nil {
		return approval.Record{}, err // answered between validation and now
	}
	w := r.find(a.RequestID)
	rec := approval.Record{RequestID: a.RequestID, Decision: a.Decision, By: strings.TrimSpace(a.By), Comment: a.Comment,
		At: workflow.Now(ctx), Since: w.req.Since, Call: w.req.Call}
	w.answer = &rec
	r.drop(w)
	r.audit = append(r.audit, rec)
	if n := len(r.audit) - r.maxAudit(); n > 0 {
		r.audit = append(r.audit[:0], r.audit[n:]...)
	}
	r.publish(ctx)
	return rec, nil
}

func (r *Run) maxAudit() int {
	if r.opts.MaxAudit > 0 {
		return r.opts.MaxAudit
	}
	return DefaultMaxAudit
}

func (r *Run) find(id string) *waiting {
	for _, w := range r.pending {
		if w.req.ID == id && w.answer == nil {
			return w
		}
	}
	return nil
}

func (r *Run) drop(w *waiting) {
	for i, p := range r.pending {
		if p == w {
			r.pending = append(r.pending[:i], r.pending[i+1:]...)
			return
		}
	}
}

// approvals is the Run's Approvals now: copies.
func (r *Run) approvals() Approvals {
	a := Approvals{Pending: make([]approval.Request, len(r.pending)), Audit: make([]approval.Record, len(r.audit))}
	for i, w := range r.pending {
		a.Pending[i] = w.req
	}
	for i := range r.audit {
		a.Audit[i] = r.audit[len(r.audit)-1-i]
	}
	return a
}

// publish writes the Run's Approvals to the workflow's memo, for Store:
// the oldest audit records are left out when the memo would grow past
// memoBudget.
func (r *Run) publish(ctx workflow.Context) {
	a := r.approvals()
	for len(a.Audit) > 0 {
		b, err := json.Marshal(a)
		if err != nil || len(b) <= memoBudget {
			break
		}
		a.Audit = a.Audit[:len(a.Audit)-1]
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{memoKey: a}); err != nil {
		workflow.GetLogger(ctx).Warn("temporaltools: the approvals could not be written to the workflow's memo; the inbox does not list them", "error", err)
	}
}

// requestID names the request seq of the workflow execution exec for call:
// "tw", the number, a digest of every field of call (so that an answer
// given for what was shown never covers anything else), the workflow ID
// (base64url) and the run ID, joined with dots.
func requestID(exec workflow.Execution, seq uint64, call approval.CallInfo) string {
	b, _ := json.Marshal(call) // a struct of strings, ints and bools
	sum := sha256.Sum256(b)
	return strings.Join([]string{"tw", strconv.FormatUint(seq, 10), hex.EncodeToString(sum[:16]),
		base64.RawURLEncoding.EncodeToString([]byte(exec.ID)), exec.RunID}, ".")
}

// parseRequestID returns the workflow execution a request ID names.
func parseRequestID(id string) (workflowID, runID string, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 5 || parts[0] != "tw" || parts[4] == "" {
		return "", "", false
	}
	wid, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || len(wid) == 0 {
		return "", "", false
	}
	return string(wid), parts[4], true
}
