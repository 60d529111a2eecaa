package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

func TestBacklogCountsTheWaitingRequestsOfEachTool(t *testing.T) {
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	now := start
	g := &approval.Grants{TTL: time.Hour, Now: func() time.Time { return now }}
	if b, err := g.Backlog(context.Background()); b != nil || err != nil {
		t.Fatalf("empty: %v, %v; want nil, nil", b, err)
	}
	decide(t, g, "refund", `{"order":"A-1"}`)
	now = start.Add(time.Minute)
	decide(t, g, "refund", `{"order":"A-2"}`)
	decide(t, g, "close_account", `{"id":7}`)
	decide(t, g, "refund", `{"order":"A-1"}`) // asked again: still one request, as old as it was

	b, _ := g.Backlog(context.Background())
	want := []approval.Backlog{
		{Tool: "close_account", Requests: 1, Oldest: start.Add(time.Minute), Age: time.Nanosecond}, // listed just now, on g's clock
		{Tool: "refund", Requests: 2, Oldest: start, Age: time.Minute},
	}
	if len(b) != len(want) || b[0] != want[0] || b[1] != want[1] {
		t.Fatalf("backlog %+v; want %+v", b, want)
	}

	g.Grant("refund", `{"order":"A-1"}`) // answers the oldest refund
	g.Deny("close_account", `{"id":7}`)
	b, _ = g.Backlog(context.Background())
	if len(b) != 1 || b[0] != (approval.Backlog{Tool: "refund", Requests: 1, Oldest: start.Add(time.Minute), Age: time.Nanosecond}) {
		t.Fatalf("after a grant and a denial: %+v; want refund's A-2 alone, listed at 9:01", b)
	}
	now = start.Add(2 * time.Hour) // past its TTL
	if b, _ = g.Backlog(context.Background()); b != nil {
		t.Fatalf("after the TTL: %+v; want nothing waiting", b)
	}
}
