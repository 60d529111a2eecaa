package inbox

import (
	"context"
	"fmt"

	"github.com/toolsafe/toolsafe/approval"
)

// Overflower is a Store that tells what its full list of pending requests
// dropped (approval.Grants.Overflow): a request listed while the list is
// full pushes the oldest out, so an agent that floods requests could hide
// a real one. The list page says how many were dropped and since when.
// Memory's Store is one.
type Overflower interface {
	Overflow(ctx context.Context) (approval.Overflow, error)
}

func (m memory) Overflow(ctx context.Context) (approval.Overflow, error) { return m.g.Overflow(ctx) }

// overflowView is what the list says of an overflow: Text of what was
// dropped (with its times), Unlisted of what waits unlisted; either may be
// "".
type overflowView struct {
	Text        string
	Since, Last string // RFC 3339, for the page's local times
	SinceUTC    string
	LastUTC     string
	Unlisted    string
}

// overflow reads what the store's full list dropped, and how many wait
// unlisted; nil when neither happened, the store does not say, or it
// failed to (the list itself says when the store is down). listed is how
// many requests the store listed.
func (h *Handler) overflow(ctx context.Context, listed int) *overflowView {
	o, ok := h.store.(Overflower)
	if !ok {
		return nil
	}
	ov, err := o.Overflow(ctx)
	if err != nil || ov.Dropped == 0 && ov.Unlisted == 0 {
		return nil
	}
	v := &overflowView{}
	if ov.Dropped > 0 {
		what := "1 request was"
		if ov.Dropped > 1 {
			what = fmt.Sprintf("%d requests were", ov.Dropped)
		}
		v.Text = fmt.Sprintf("%s dropped from this list because it was full (at most %d wait; the oldest goes first), so a flood of requests may have pushed a real one out. "+
			"A dropped call asks again when its run resumes; the audit trail names each one dropped; if this list is often full, raise the store's limit.", what, ov.Max)
		v.Since, v.SinceUTC = ov.Since.UTC().Format("2006-01-02T15:04:05Z"), ov.Since.UTC().Format("2006-01-02 15:04:05 UTC")
		v.Last, v.LastUTC = ov.Last.UTC().Format("2006-01-02T15:04:05Z"), ov.Last.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if ov.Unlisted > 0 {
		what := "1 more request waits but is"
		if ov.Unlisted > 1 {
			what = fmt.Sprintf("%d more requests wait but are", ov.Unlisted)
		}
		v.Unlisted = fmt.Sprintf("%s not listed: this list shows the newest %d, and older ones wait unseen until they expire or newer ones are decided. Raise the store's limit, or decide the newest.",
			what, listed)
	}
	return v
}
