package inbox

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

// EventStore is a Store whose audit trail also keeps events
// (approval.Event): each refusal of a person who tried to decide or open
// a request they may not decide (WithAuthorize), which the inbox records
// with RecordRefusal, and each request a full list dropped. The audit
// page and audit.json show them beside the answers, to those who may
// decide the request. Memory's Store is one, and so is redisstore's
// Grants. Its methods must be safe for concurrent use; an error reads as
// the store being unavailable.
type EventStore interface {
	// RecordRefusal records that by was refused action ("decide",
	// "open") on req.
	RecordRefusal(ctx context.Context, req approval.Request, by, action string) (approval.Event, error)
	// Events returns at most limit events, newest first; limit ≤ 0: all.
	Events(ctx context.Context, limit int) ([]approval.Event, error)
}

func (m memory) RecordRefusal(_ context.Context, req approval.Request, by, action string) (approval.Event, error) {
	return m.g.RecordRefusal(req, by, action), nil
}

func (m memory) Events(_ context.Context, limit int) ([]approval.Event, error) {
	return m.g.Events(limit), nil
}

// refused answers 403 to user for the request req, logs the refusal, and
// records it in the audit trail when the store keeps events.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, req approval.Request, what string) {
	user := userOf(r)
	h.cfg.logger.Warn("inbox: refused, the user may not decide this request", "user", user, "tool", req.Call.Tool, "request", req.ID, "action", what)
	text := "You may not decide requests of this tool: it is decided by its approver groups. Your attempt was logged."
	if es, ok := h.store.(EventStore); ok {
		if _, err := es.RecordRefusal(r.Context(), req, user, what); err != nil {
			h.storeFailed(r, "refusal", err)
			text = "You may not decide requests of this tool: it is decided by its approver groups. Your attempt was logged; the approvals store did not confirm it in the audit trail."
		} else {
			text = "You may not decide requests of this tool: it is decided by its approver groups. Your attempt was recorded in the audit trail."
		}
	}
	h.renderStatus(w, "message", message{User: user, Title: "Not yours to decide", Text: text}, http.StatusForbidden)
}

// events reads the store's events, nil when it keeps none.
func (h *Handler) events(ctx context.Context) ([]approval.Event, error) {
	es, ok := h.store.(EventStore)
	if !ok {
		return nil, nil
	}
	return es.Events(ctx, 0)
}

// mayEvent reports whether user may see e: its request is one they may
// decide.
func (h *Handler) mayEvent(user string, e approval.Event) bool {
	return h.may(user, approval.Request{ID: e.RequestID, Since: e.Since, Call: e.Call})
}

// trailEntry is one line of the audit page: an answer or an event.
type trailEntry struct {
	at   time.Time
	view recordView
}

// trail merges the answers and events user may see that f keeps, newest
// first, and says how many user may see in all.
func (h *Handler) trail(user string, f filter, recs []approval.Record, events []approval.Event) (kept []trailEntry, all int) {
	for _, rec := range recs {
		if h.mayRecord(user, rec) {
			all++
			if f.record(rec) {
				kept = append(kept, trailEntry{rec.At, viewRecord(rec)})
			}
		}
	}
	for _, e := range events {
		if h.mayEvent(user, e) {
			all++
			if f.event(e) {
				kept = append(kept, trailEntry{e.At, viewEvent(e)})
			}
		}
	}
	slices.SortStableFunc(kept, func(a, b trailEntry) int { return b.at.Compare(a.at) })
	return kept, all
}

// viewEvent is e as the audit page shows it, in the columns of an answer:
// its kind in the decision's, and what happened beside it.
func viewEvent(e approval.Event) recordView {
	v := viewRecord(approval.Record{RequestID: e.RequestID, By: e.By, At: e.At, Since: e.Since, Call: e.Call})
	v.Decision = string(e.Kind)
	switch e.Kind {
	case approval.EventRefused:
		v.Event = fmt.Sprintf("tried to %s this request, which is not theirs to decide (403): nothing was decided", e.Action)
	case approval.EventDropped:
		v.Event = fmt.Sprintf("from the list, undecided, because it was full (at most %d wait): its call asks again when its run resumes", e.Max)
	default:
		v.Event = "an event of a kind this inbox does not know"
	}
	if e.InputSize > len(e.Call.Input) {
		v.Input = append(v.Input, piece{Text: fmt.Sprintf("… (the trail keeps the first %s of its %s)", size(len(e.Call.Input)), size(e.InputSize))})
	}
	return v
}

// eventJSON is an event in audit.json.
type eventJSON struct {
	Kind      string    `json:"kind"`
	At        time.Time `json:"at"`
	By        string    `json:"by,omitempty"`
	Action    string    `json:"action,omitempty"`
	RequestID string    `json:"request_id"`
	Since     time.Time `json:"since"`
	Max       int       `json:"max,omitempty"`
	InputSize int       `json:"input_size"`
	callJSON
}

func toEventJSON(e approval.Event) eventJSON {
	return eventJSON{string(e.Kind), e.At.UTC(), e.By, e.Action, e.RequestID, e.Since.UTC(), e.Max, e.InputSize, toJSON(e.Call)}
}
