package temporaltools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// StoreOptions configures a Store. The zero StoreOptions is ready to use.
type StoreOptions struct {
	// Query is a visibility query that selects the workflows whose Runs
	// the inbox lists, such as "WorkflowType = 'agent'"; "" means every
	// workflow of the client's namespace.
	Query string
	// Others are stores whose requests the inbox lists beside the
	// workflows' (inbox.Memory of an approval.Grants, redisstore's Grants),
	// so that one inbox serves the runs on Temporal and the others. Their
	// request IDs are shown with "o" and their position before them
	// ("o0." for the first).
	Others []inbox.Store
	// MaxWorkflows caps the workflows read per listing; zero means
	// DefaultMaxWorkflows.
	MaxWorkflows int
	// DataConverter decodes the workflows' memos; nil means the SDK's
	// default. Give the one the client and the workers use.
	DataConverter converter.DataConverter
	// Logger gets a WARN line for a workflow whose approvals cannot be
	// read from its memo (it is left out of the listing); nil means
	// slog.Default().
	Logger *slog.Logger
}

// DefaultMaxWorkflows is how many workflows a Store reads per listing
// when StoreOptions.MaxWorkflows is zero: 1,000.
const DefaultMaxWorkflows = 1000

// Store is the approvals inbox's store (inbox.Store) over Temporal: it
// lists the requests the Runs of running workflows wait for, from their
// memos (Temporal's visibility, so no worker needs to be up to list them),
// answers one with the update DecideUpdate, which decides it and records
// it in the workflow's audit trail in one step of the workflow, and reads
// the audit trails of running and closed workflows. Listings see what
// Temporal's visibility has indexed, a moment behind the workflows; an
// answer is checked against the workflow's own state. A Store is safe for
// concurrent use.
type Store struct {
	c    client.Client
	opts StoreOptions
}

var _ inbox.Store = (*Store)(nil)

// NewStore returns the Store over the workflows c reaches. It returns an
// error for a nil c, a nil store among Others, or a negative MaxWorkflows.
func NewStore(c client.Client, opts StoreOptions) (*Store, error) {
	var problems []string
	if c == nil {
		problems = append(problems, "the client is nil: pass a client.Client")
	}
	for i, o := range opts.Others {
		if o == nil {
			problems = append(problems, fmt.Sprintf("store %d of Others is nil", i+1))
		}
	}
	if opts.MaxWorkflows < 0 {
		problems = append(problems, fmt.Sprintf("MaxWorkflows %d is negative: use 0 for the default of %d", opts.MaxWorkflows, DefaultMaxWorkflows))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("temporaltools: %s", strings.Join(problems, "; "))
	}
	if opts.DataConverter == nil {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxWorkflows == 0 {
		opts.MaxWorkflows = DefaultMaxWorkflows
	}
	return &Store{c: c, opts: opts}, nil
}

// Requests returns the requests waiting, oldest first: the Runs' of the
// running workflows the Query selects, and the Others'.
func (s *Store) Requests(ctx context.Context) ([]approval.Request, error) {
	var out []approval.Request
	err := s.each(ctx, "ExecutionStatus = 'Running'", func(a Approvals) {
		out = append(out, a.Pending...)
	})
	if err != nil {
		return nil, err
	}
	for i, o := range s.opts.Others {
		reqs, err := o.Requests(ctx)
		if err != nil {
			return nil, err
		}
		for _, q := range reqs {
			q.ID = otherID(i, q.ID)
			out = append(out, q)
		}
	}
	slices.SortStableFunc(out, func(a, b approval.Request) int { return a.Since.Compare(b.Since) })
	return out, nil
}

// Answer decides the request id: for a workflow's, with the update
// DecideUpdate, waiting for the workflow to record it; for one of the
// Others', through that store. It returns an error wrapping
// approval.ErrNotPending when the request no longer waits as listed (it
// was answered, it timed out, the workflow ended); nothing was recorded.
// Any other error means the answer was not confirmed: if the request is
// still listed, nothing was recorded.
func (s *Store) Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	if err := approval.CheckAnswer(d, by); err != nil {
		return approval.Record{}, err
	}
	if i, inner, ok := parseOtherID(id, len(s.opts.Others)); ok {
		rec, err := s.opts.Others[i].Answer(ctx, inner, d, by, comment)
		if err != nil {
			return approval.Record{}, err
		}
		rec.RequestID = id
		return rec, nil
	}
	wid, rid, ok := parseRequestID(id)
	if !ok {
		return approval.Record{}, fmt.Errorf("%w: no request has the ID %q", approval.ErrNotPending, id)
	}
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: wid, RunID: rid, UpdateName: DecideUpdate,
		Args:         []any{Answer{RequestID: id, Decision: d, By: by, Comment: comment}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var rec approval.Record
	if err == nil {
		err = h.Get(ctx, &rec)
	}
	var app *temporal.ApplicationError
	var nf *serviceerror.NotFound
	switch {
	case err == nil:
		return rec, nil
	case errors.As(err, &app) && app.Type() == errNotPending:
		return approval.Record{}, fmt.Errorf("%w: the workflow %s no longer waits for it", approval.ErrNotPending, wid)
	case errors.As(err, &nf):
		return approval.Record{}, fmt.Errorf("%w: the workflow %s is not running", approval.ErrNotPending, wid)
	}
	return approval.Record{}, fmt.Errorf("temporaltools: the workflow %s did not confirm the answer: %w", wid, err)
}

// Audit returns at most limit records, newest first (limit ≤ 0: all):
// the Runs' audit trails, of running and closed workflows the Query
// selects, and the Others'.
func (s *Store) Audit(ctx context.Context, limit int) ([]approval.Record, error) {
	var out []approval.Record
	err := s.each(ctx, "", func(a Approvals) { out = append(out, a.Audit...) })
	if err != nil {
		return nil, err
	}
	for i, o := range s.opts.Others {
		recs, err := o.Audit(ctx, limit)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			r.RequestID = otherID(i, r.RequestID)
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b approval.Record) int { return b.At.Compare(a.At) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// each calls f with the Approvals in the memo of every workflow that the
// Query and filter select, at most MaxWorkflows of them.
func (s *Store) each(ctx context.Context, filter string, f func(Approvals)) error {
	q := filter
	if s.opts.Query != "" {
		if q != "" {
			q += " AND "
		}
		q += "(" + s.opts.Query + ")"
	}
	var token []byte
	for seen := 0; seen < s.opts.MaxWorkflows; {
		resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: q, NextPageToken: token, PageSize: int32(min(s.opts.MaxWorkflows-seen, 100)),
		})
		if err != nil {
			return fmt.Errorf("temporaltools: listing the workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			seen++
			p := e.GetMemo().GetFields()[memoKey]
			if p == nil {
				continue
			}
			var a Approvals
			if err := s.opts.DataConverter.FromPayload(p, &a); err != nil {
				s.opts.Logger.Warn("temporaltools: the approvals in a workflow's memo cannot be read; the inbox leaves them out (is StoreOptions.DataConverter the workers' one?)",
					"workflow_id", e.GetExecution().GetWorkflowId(), "run_id", e.GetExecution().GetRunId(), "error", err.Error())
				continue
			}
			f(a)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 || len(resp.GetExecutions()) == 0 {
			break
		}
	}
	return nil
}

// otherID is the ID a Store shows for the request id of Others[i].
func otherID(i int, id string) string { return "o" + strconv.Itoa(i) + "." + id }

var otherIDPattern = regexp.MustCompile(`^o([0-9]+)\.(.+)$`)

// parseOtherID returns the store of Others and its request ID that id
// names.
func parseOtherID(id string, n int) (int, string, bool) {
	m := otherIDPattern.FindStringSubmatch(id)
	if m == nil {
		return 0, "", false
	}
	i, err := strconv.Atoi(m[1])
	if err != nil || i >= n {
		return 0, "", false
	}
	return i, m[2], true
}
