package approval

import (
	"slices"
	"time"
	"unicode/utf8"
)

// EventInputBytes is how much of a call's input an Event keeps: its first
// 1,024 bytes, in whole characters (Event.InputSize says how long it was),
// so that a flood of requests with large inputs keeps the audit trail
// small. Its canonical form is cut the same way.
const EventInputBytes = 1024

// EventKind says what an Event records.
type EventKind string

const (
	// EventRefused is a person refused: they tried to decide, or to open,
	// a request they may not decide (the approvals inbox's authorization
	// said no, and answered 403).
	EventRefused EventKind = "refused"
	// EventDropped is a request dropped from the full list of pending
	// requests (see Overflow): a request listed while MaxPending wait
	// pushed it out, undecided.
	EventDropped EventKind = "dropped"
)

// Event is the audit trail's entry for what happened to a request other
// than an answer: a person refused (EventRefused), or a request dropped
// from a full list (EventDropped). Audit lists answers only, as it always
// did; Events lists these.
type Event struct {
	// Kind is what happened.
	Kind EventKind
	// At is when it was recorded.
	At time.Time
	// By is who was refused, as the program identified them; Action what
	// they tried, in the program's words (the inbox's are "decide" and
	// "open"). Both are "" for EventDropped.
	By, Action string
	// RequestID is the request's ID (Request.ID), Since when it was first
	// listed, and Call its call, CanonicalInput set, with its Input and
	// CanonicalInput cut to EventInputBytes; InputSize is the length of
	// the whole Input, in bytes.
	RequestID string
	Since     time.Time
	Call      CallInfo
	InputSize int
	// Max is, for EventDropped, the cap of the list that was full
	// (MaxPending, or DefaultMaxPending); 0 for EventRefused.
	Max int
}

// RecordRefusal adds to the audit trail that by was refused when they
// tried action ("decide", "open") on req, a request they may not decide,
// and returns the event. It never fails. The events of each kind are
// bounded as the answers are (AuditTTL, MaxAudit), apart: a flood of
// dropped requests never pushes a refusal out, nor the other way round.
func (g *Grants) RecordRefusal(req Request, by, action string) Event {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expireLocked(now)
	c, size := CutForEvent(req.Call)
	e := Event{Kind: EventRefused, At: now, By: by, Action: action, RequestID: req.ID, Since: req.Since, Call: c, InputSize: size}
	g.refusals = appendBounded(g.refusals, e, g.maxAudit())
	return e
}

// Events returns the events kept (see Event; AuditTTL and MaxAudit for
// each kind), newest first, at most limit of them; limit ≤ 0 means all.
// The slice is a copy. They live in memory: they end with the process.
func (g *Grants) Events(limit int) []Event {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked(g.now())
	refusals, drops := newest(g.refusals, g.maxAudit()), newest(g.drops, g.maxAudit())
	out := make([]Event, 0, len(refusals)+len(drops))
	out = append(append(out, refusals...), drops...)
	// Oldest first within each kind: a stable sort newest first keeps the
	// order of events recorded at one instant reversed, as Audit's is.
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b Event) int { return b.At.Compare(a.At) })
	if limit > 0 && limit < len(out) {
		out = out[:limit]
	}
	return out
}

// recordDropsLocked adds an EventDropped for each of ps, dropped at now
// from a list of at most max.
func (g *Grants) recordDropsLocked(ps []pendingCall, max int, now time.Time) {
	for _, p := range ps {
		c, size := CutForEvent(p.call())
		g.drops = appendBounded(g.drops, Event{Kind: EventDropped, At: now, RequestID: p.id(), Since: p.since, Call: c, InputSize: size, Max: max}, g.maxAudit())
	}
}

// appendBounded appends e to es, oldest first. It keeps at least the
// newest max, and at most twice as many, so that a flood costs one copy
// per max events rather than one per event: readers take newest(es, max).
func appendBounded(es []Event, e Event, max int) []Event {
	es = append(es, e)
	if n := len(es) - max; n >= max {
		es = append(es[:0], es[n:]...)
	}
	return es
}

// newest returns the newest max of es, oldest first.
func newest(es []Event, max int) []Event {
	if n := len(es) - max; n > 0 {
		return es[n:]
	}
	return es
}

// CutForEvent returns c with its Input and CanonicalInput cut to
// EventInputBytes (whole characters), as an Event keeps it, and the length
// of the whole Input in bytes. Stores of events call it.
func CutForEvent(c CallInfo) (CallInfo, int) {
	size := len(c.Input)
	c.Input, c.CanonicalInput = cutText(c.Input), cutText(c.CanonicalInput)
	return c, size
}

// cutText returns the longest prefix of s of at most EventInputBytes that
// does not end inside a character.
func cutText(s string) string {
	if len(s) <= EventInputBytes {
		return s
	}
	i := EventInputBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// expireEventsLocked drops the events older than the audit TTL.
func (g *Grants) expireEventsLocked(now time.Time) {
	for _, es := range []*[]Event{&g.refusals, &g.drops} {
		i := 0
		for i < len(*es) && !now.Before((*es)[i].At.Add(g.auditTTL())) {
			i++
		}
		if i > 0 {
			*es = append((*es)[:0], (*es)[i:]...)
		}
	}
}
