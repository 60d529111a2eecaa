package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/redis/go-redis/v9"
)

// changes is a Store's subscription to the changes of its breakers'
// states: the breaker script publishes every change it makes, on one
// channel per prefix, and each replica learns of it about as soon as it
// is made. Started by the first breaker of the Store; stopped by Close.
//
// A breaker trusts a state learned while the subscription is live (a
// confirmation, a message or a pong heard within the state's max age) and
// unbroken since (gen unchanged): no change of the fleet's state can then
// have escaped it.
type changes struct {
	s       *Store
	channel string

	mu       sync.Mutex
	started  bool
	ps       *redis.PubSub
	breakers map[string][]*Breaker // by the tag of their keys

	gen   atomic.Int64  // counts (re)subscriptions and breaks
	heard atomic.Int64  // when the subscription last heard from Redis, Unix ns; 0 while broken
	ready chan struct{} // closed at the first subscription: tests wait on it
	once  sync.Once
}

func newChanges(s *Store) *changes {
	return &changes{s: s, channel: s.key("breakers"), breakers: map[string][]*Breaker{}, ready: make(chan struct{})}
}

// add registers b for the changes of its state, subscribing first if this
// is the Store's first breaker.
func (c *changes) add(b *Breaker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.breakers[b.tag] = append(c.breakers[b.tag], b)
	if c.started {
		return
	}
	c.started = true
	c.ps = c.s.client.Subscribe(context.Background()) // the SUBSCRIBE is sent by the loop
	if !c.s.async(c.loop) {
		_ = c.ps.Close()
	}
}

// live reports whether the subscription heard from Redis within the
// state's max age, and its generation.
func (c *changes) live() (bool, int64) {
	g := c.gen.Load()
	h := c.heard.Load()
	return h != 0 && time.Since(time.Unix(0, h)) < c.s.cfg.maxAge, g
}

// loop receives the changes until the Store is closed, pinging Redis
// when nothing came for half the state's max age, and subscribing again
// after a break (waiting a recheck interval between tries while Redis
// does not answer).
func (c *changes) loop() {
	stop := c.s.health.stop
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-stop
		_ = c.ps.Close() // ends a Receive in progress
	}()
	defer func() { <-closed }() // every return below follows the stop
	ctx := context.Background()
	subscribed := false
	for {
		select {
		case <-stop:
			return
		default:
		}
		if !subscribed {
			sctx, cancel := context.WithTimeout(ctx, c.s.cfg.timeout)
			err := c.ps.Subscribe(sctx, c.channel)
			cancel()
			if err != nil {
				if !c.broken(stop, err) {
					return
				}
				continue
			}
			subscribed = true
		}
		msg, err := c.ps.ReceiveTimeout(ctx, c.s.cfg.maxAge/2)
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				_ = c.ps.Ping(ctx) // its pong tells the subscription is live
				continue
			}
			if !c.broken(stop, err) {
				return
			}
			continue // Receive connects and subscribes again
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				c.gen.Add(1) // what was learned before may have missed changes
				c.heard.Store(time.Now().UnixNano())
				c.once.Do(func() { close(c.ready) })
			}
		case *redis.Message:
			c.deliver(m.Payload)
		}
		c.heard.Store(time.Now().UnixNano())
	}
}

// broken marks the subscription broken by err, which counts as Redis
// being unavailable (so an outage is noticed even while no call needs
// Redis), and waits a recheck interval before it is tried again. It
// reports false when the Store closes first.
func (c *changes) broken(stop <-chan struct{}, err error) bool {
	c.heard.Store(0)
	c.gen.Add(1)
	select {
	case <-stop:
		return false
	default:
	}
	if c.s.health.available(c.channel) {
		c.s.health.fail(opSubscribe, c.channel, err)
	}
	t := time.NewTimer(c.s.cfg.recheck)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// deliver hands a published change to the breakers of its tag. The
// payload is the tag and the script's answer, separated by spaces.
func (c *changes) deliver(payload string) {
	f := strings.Fields(payload)
	if len(f) != 9 {
		return
	}
	var n [7]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return
		}
		n[i] = v
	}
	a := answer{
		state:     circuitbreaker.State(n[0]),
		epoch:     n[1],
		remaining: time.Duration(n[2]) * time.Millisecond,
		failures:  uint(n[3]),
		outcomes:  uint(n[4]),
		successes: uint(n[5]),
		version:   n[6],
		inc:       f[8],
		received:  time.Now(),
	}
	c.mu.Lock()
	bs := c.breakers[f[0]]
	c.mu.Unlock()
	_, gen := c.live()
	for _, b := range bs {
		b.learnChange(a, gen)
	}
}
