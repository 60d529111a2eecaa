// Package chaos holds toolsafe's chaos test, and nothing else: thousands of
// calls from many goroutines, through every layer at once, against a real
// upstream on 127.0.0.1 that resets connections, answers 429 and 503 with
// Retry-After, hangs and answers slowly at random (toolsafetest.Upstream
// with a fixed seed). It lives in a package of its own so that its
// goroutine-leak check sees no other test's goroutines. Run it with
//
//	go test -race ./internal/chaos
package chaos
