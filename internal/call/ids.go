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
