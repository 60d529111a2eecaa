package call

import (
	"context"
	"sync"

	"github.com/toolsafe/toolsafe/middleware"
)

// Flights are the calls of one agent run in flight, by what makes two
// calls identical (package run keeps them per run, the run layer keys them
// by tool and canonical input): an identical call made while one is in
// flight waits for it and shares its outcome, instead of being made again.
// The zero Flights is ready to use; it is safe for concurrent use, and
// keeps nothing once the calls in it have landed.
type Flights struct {
	mu sync.Mutex
	m  map[any]*Flight
}

// Flight is one call in flight, which identical calls wait for.
type Flight struct {
	leader *Call
	done   chan struct{}
	o      Outcome
}

// Outcome is how a call in flight ended, as the calls that waited for it
// share it.
type Outcome struct {
	// Output and Err are what the call returned.
	Output string
	Err    error
	// Failure is the call's failure, built from Err and the call's facts
	// (FailureOf); nil when it answered.
	Failure *middleware.Failure
	// Fallback is the alternative that answered, if one did.
	Fallback string
	// Gone reports that the call did not end with an outcome to share: its
	// caller gave up before it was made, or it panicked. A call that waited
	// for it is made on its own.
	Gone bool
}

// Join makes c the call in flight under key and returns its Flight to land
// (lead), or, when an identical call is in flight, returns that one for c
// to wait on (wait). It returns neither when the call in flight is one
// that c is made inside of (a tool that calls itself with the same input):
// waiting for it would wait forever, so c is made on its own.
func (fs *Flights) Join(key any, c *Call) (lead, wait *Flight) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.m[key]; f != nil {
		if c.within(f.leader) {
			return nil, nil
		}
		return nil, f
	}
	if fs.m == nil {
		fs.m = make(map[any]*Flight)
	}
	f := &Flight{leader: c, done: make(chan struct{})}
	fs.m[key] = f
	return f, nil
}

// Land ends the flight f under key with o: the calls waiting for it get o,
// and an identical call made from now on is made again.
func (fs *Flights) Land(key any, f *Flight, o Outcome) {
	fs.mu.Lock()
	if fs.m[key] == f {
		delete(fs.m, key)
	}
	fs.mu.Unlock()
	f.o = o
	close(f.done)
}

// Wait waits until f lands and returns its outcome, or returns false when
// ctx ends first.
func (f *Flight) Wait(ctx context.Context) (Outcome, bool) {
	select {
	case <-f.done:
		return f.o, true
	default:
	}
	select {
	case <-f.done:
		return f.o, true
	case <-ctx.Done():
		return Outcome{}, false
	}
}

// Leader is the call in flight.
func (f *Flight) Leader() *Call { return f.leader }

// within reports whether c was begun inside the call p (in one of its
// attempts, or inside a call made in one).
func (c *Call) within(p *Call) bool {
	for a := c; a != nil; a = a.parent {
		if a == p {
			return true
		}
	}
	return false
}

// Adopt makes f, a copy of the failure of the call whose outcome this one
// shares, the call's failure, unless one was built already: Surface then
// tells the model what f says.
func (c *Call) Adopt(f *middleware.Failure) {
	if c == nil || f == nil {
		return
	}
	cp := *f
	cp.Tool = c.tool
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failure == nil {
		c.failure = &cp
	}
}
