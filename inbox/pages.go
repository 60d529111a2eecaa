package inbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

// storeDown is what the pages say while the store does not answer.
const storeDown = "The approvals store is unavailable: nothing can be listed or decided until it answers again."

// load reads what the list shows: the pending requests and the recent
// answers. Problem is set when the store failed.
func (h *Handler) load(r *http.Request) pageData {
	d := h.base(r)
	reqs, err := h.store.Requests(r.Context())
	if err != nil {
		h.storeFailed(r, "requests", err)
		d.Problem = storeDown
		return d
	}
	now := time.Now()
	f := parseFilter(r)
	d.Filter = f
	kept, all := make([]approval.Request, 0, len(reqs)), 0
	for _, q := range reqs {
		if h.may(d.User, q) {
			all++
			if f.request(q, now) {
				kept = append(kept, q)
			}
		}
	}
	slices.SortStableFunc(kept, func(a, b approval.Request) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if f.Sort == "newest" {
		slices.Reverse(kept)
	}
	lo, hi, p := f.paginate(len(kept), all)
	d.Pager = p
	for _, q := range kept[lo:hi] {
		d.Requests = append(d.Requests, h.viewRequest(d.User, q, now))
	}
	d.Overflow = h.overflow(r.Context(), len(reqs))
	recent, err := h.store.Audit(r.Context(), recentAnswers)
	if err != nil {
		h.storeFailed(r, "audit", err)
		d.Problem = storeDown
		return d
	}
	for _, rec := range recent {
		if h.mayRecord(d.User, rec) {
			d.Recent = append(d.Recent, viewRecord(rec))
		}
	}
	return d
}

func (h *Handler) base(r *http.Request) pageData {
	return pageData{User: userOf(r), PollMS: h.cfg.poll.Milliseconds()}
}

// notices are the fixed texts a redirect after an answer may ask for.
var notices = map[string]string{
	"approved": "Approved. The call runs when its agent run resumes.",
	"denied":   "Denied. The model is told not to ask again for this request.",
	"voted":    "Your approval is recorded as one vote: the call runs once enough other people approve it too.",
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	d := h.load(r)
	d.Notice = notices[r.URL.Query().Get("answered")]
	h.render(w, "list", d)
}

// live is the part of the list page that updates itself.
func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	d := h.load(r)
	if d.Problem != "" {
		h.render(w, "live", d)
		return
	}
	var b bytes.Buffer
	if err := h.pages.ExecuteTemplate(&b, "live", d); err != nil {
		h.cfg.logger.Error("inbox: a page failed to render", "page", "live", "error", err.Error())
		http.Error(w, "inbox: the page failed to render", http.StatusInternalServerError)
		return
	}
	writeConditional(w, r, "text/html; charset=utf-8", b.Bytes())
}

func (h *Handler) detail(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	d := h.base(r)
	reqs, err := h.store.Requests(r.Context())
	if err != nil {
		h.storeFailed(r, "requests", err)
		d.Problem = storeDown
		h.render(w, "detail", d)
		return
	}
	for _, q := range reqs {
		if q.ID == id {
			if !h.may(d.User, q) {
				h.refused(w, r, q, "open")
				return
			}
			v := h.viewRequest(d.User, q, time.Now())
			d.Request = &v
			h.render(w, "detail", d)
			return
		}
	}
	d.Answered, d.Problem = h.answered(r.Context(), d.User, id)
	h.render(w, "detail", d)
}

// answered finds the record of the request id, or says why it is not
// shown: dropped from a full list, when the store's events say so.
func (h *Handler) answered(ctx context.Context, user, id string) (*recordView, string) {
	recs, err := h.store.Audit(ctx, 0)
	if err != nil {
		return nil, storeDown
	}
	for _, rec := range recs {
		if rec.RequestID == id && h.mayRecord(user, rec) {
			v := viewRecord(rec)
			return &v, ""
		}
	}
	if events, err := h.events(ctx); err == nil {
		for _, e := range events {
			if e.Kind == approval.EventDropped && e.RequestID == id && h.mayEvent(user, e) {
				return nil, fmt.Sprintf("This request was dropped, undecided, from the list at %s because the list was full (at most %d wait): its call asks again when its run resumes, as a new request. Look at the list.",
					e.At.UTC().Format("2006-01-02 15:04:05 UTC"), e.Max)
			}
		}
	}
	return nil, "This request no longer waits as it was shown: it expired, or its call asked again with other details (its next attempt). Look at the list."
}

func (h *Handler) auditPage(w http.ResponseWriter, r *http.Request) {
	d := h.base(r)
	recs, err := h.store.Audit(r.Context(), 0)
	if err != nil {
		h.storeFailed(r, "audit", err)
		d.Problem = storeDown
	}
	events, err := h.events(r.Context())
	if err != nil {
		h.storeFailed(r, "events", err)
		d.Problem = storeDown
	}
	f := parseFilter(r)
	d.Filter = f
	kept, all := h.trail(d.User, f, recs, events)
	lo, hi, p := f.paginate(len(kept), all)
	d.Pager = p
	for _, e := range kept[lo:hi] {
		d.Recent = append(d.Recent, e.view)
	}
	h.render(w, "audit", d)
}

// render writes the template name with d; the status is 503 when the store
// failed.
func (h *Handler) render(w http.ResponseWriter, name string, d pageData) {
	status := http.StatusOK
	if d.Problem == storeDown {
		status = http.StatusServiceUnavailable
	} else if name == "detail" && d.Request == nil && d.Answered == nil {
		status = http.StatusNotFound
	}
	h.renderStatus(w, name, d, status)
}

func (h *Handler) renderStatus(w http.ResponseWriter, name string, d any, status int) {
	var b bytes.Buffer
	if err := h.pages.ExecuteTemplate(&b, name, d); err != nil {
		h.cfg.logger.Error("inbox: a page failed to render", "page", name, "error", err.Error())
		http.Error(w, "inbox: the page failed to render", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// callJSON is a call in the JSON endpoints.
type callJSON struct {
	Tool           string `json:"tool"`
	Input          string `json:"input"`
	CanonicalInput string `json:"canonical_input"`
	RunID          string `json:"run_id"`
	CallID         string `json:"call_id"`
	Attempt        int    `json:"attempt"`
	IdempotencyKey string `json:"idempotency_key"`
	Destructive    bool   `json:"destructive"`
	MayHaveApplied bool   `json:"may_have_applied"`
}

func toJSON(c approval.CallInfo) callJSON {
	return callJSON{c.Tool, c.Input, c.CanonicalInput, c.RunID, c.CallID, c.Attempt, c.IdempotencyKey, c.Destructive, c.MayHaveApplied}
}

type requestJSON struct {
	ID     string    `json:"id"`
	Since  time.Time `json:"since"`
	Reason string    `json:"reason"`
	callJSON
}

type recordJSON struct {
	RequestID string    `json:"request_id"`
	Decision  string    `json:"decision"`
	By        string    `json:"by"`
	Comment   string    `json:"comment"`
	At        time.Time `json:"at"`
	Since     time.Time `json:"since"`
	callJSON
	ChangedInput string `json:"changed_input,omitempty"`
	Message      string `json:"message,omitempty"`
	Approvals    int    `json:"approvals,omitempty"`
	Quorum       int    `json:"quorum,omitempty"`
}

func (h *Handler) requestsJSON(w http.ResponseWriter, r *http.Request) {
	reqs, err := h.store.Requests(r.Context())
	if err != nil {
		h.storeFailed(r, "requests", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": storeDown})
		return
	}
	out := make([]requestJSON, 0, len(reqs))
	for _, q := range reqs {
		if !h.may(userOf(r), q) {
			continue
		}
		out = append(out, requestJSON{q.ID, q.Since.UTC(), q.Call.Reason(), toJSON(q.Call)})
	}
	writeJSONConditional(w, r, map[string]any{"requests": out})
}

// auditJSON answers the answers ("records", as before events were kept)
// and the events ("events") the user may see, newest first.
func (h *Handler) auditJSON(w http.ResponseWriter, r *http.Request) {
	recs, err := h.store.Audit(r.Context(), 0)
	if err != nil {
		h.storeFailed(r, "audit", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": storeDown})
		return
	}
	events, err := h.events(r.Context())
	if err != nil {
		h.storeFailed(r, "events", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": storeDown})
		return
	}
	out := make([]recordJSON, 0, len(recs))
	for _, rec := range recs {
		if !h.mayRecord(userOf(r), rec) {
			continue
		}
		out = append(out, recordJSON{rec.RequestID, rec.Decision.String(), rec.By, rec.Comment, rec.At.UTC(), rec.Since.UTC(), toJSON(rec.Call),
			rec.Input, rec.Message, rec.Approvals, rec.Quorum})
	}
	evs := make([]eventJSON, 0, len(events))
	for _, e := range events {
		if h.mayEvent(userOf(r), e) {
			evs = append(evs, toEventJSON(e))
		}
	}
	writeJSONConditional(w, r, map[string]any{"records": out, "events": evs})
}

// writeJSONConditional answers with v as JSON, through writeConditional.
func writeJSONConditional(w http.ResponseWriter, r *http.Request, v any) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v) // escapes <, > and & too
	writeConditional(w, r, "application/json", b.Bytes())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // escapes <, > and & too
}
