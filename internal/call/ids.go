package call

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
)

// callIDs makes call IDs without a system call each: a random seed per
// process, a counter, and splitmix64's finalizer, which is a bijection, so
// IDs never repeat within the process and look random.
var callIDs struct {
	seed uint64
	n    atomic.Uint64
}

func init() {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	callIDs.seed = binary.LittleEndian.Uint64(b[:])
}

func newCallID() string {
	z := callIDs.seed + callIDs.n.Add(1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	var raw [8]byte
	binary.BigEndian.PutUint64(raw[:], z)
	var b [len("call_") + 16]byte
	copy(b[:], "call_")
	hex.Encode(b[len("call_"):], raw[:])
	return string(b[:])
}

// RandomHex returns n random bytes from crypto/rand as 2n hex digits.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error (Go 1.24+)
	return hex.EncodeToString(b)
}

// AdoptKey makes key the call's idempotency key, unless it has one.
func (c *Call) AdoptKey(key string) {
	if c == nil {
		return
	}
	c.keyOnce.Do(func() {
		c.mu.Lock()
		if !c.keyFixed {
			c.key = key
		}
		c.keyFixed = true
		c.mu.Unlock()
	})
}

// FixedKey returns the call's idempotency key and true when it is set
// for good (the call continues a paused one, or the key was asked for);
// else "" and false, and the key can still be adopted (AdoptKey).
func (c *Call) FixedKey() (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.keyFixed {
		return "", false
	}
	return c.key, true
}

// IsAlternative reports whether the call is the alternative tool that
// the call it was begun in falls back to: part of that call.
func (c *Call) IsAlternative() bool {
	return c != nil && c.parent != nil && c.parent.FallbackName() == c.tool
}

// AdoptID makes id the call's ID, unless the model gave the call one or the
// ID was asked for already: a replayed call keeps the ID of the call it
// replays.
func (c *Call) AdoptID(id string) {
	if c == nil || c.idKnown || id == "" {
		return
	}
	c.idOnce.Do(func() { c.id = id })
}
