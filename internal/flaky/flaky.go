// Package flaky is the old home of the flaky upstream, now
// toolsafetest.Upstream. It forwards to that package for the tests of the
// policies file, which still import it until they move to their own
// package; new code imports toolsafetest. Remove this package once nothing
// imports it.
package flaky

import (
	"net/http"
	"time"

	"github.com/toolsafe/toolsafe/toolsafetest"
)

// Server is a toolsafetest.Upstream.
type Server = toolsafetest.Upstream

// Step is a toolsafetest.Step.
type Step = toolsafetest.Step

// Chaos is a toolsafetest.Chaos.
type Chaos = toolsafetest.Chaos

// Start is toolsafetest.NewUpstream.
func Start(h http.Handler) *Server { return toolsafetest.NewUpstream(h) }

// OK is toolsafetest.Pass.
func OK() Step { return toolsafetest.Pass() }

// ResetConn is toolsafetest.Reset.
func ResetConn() Step { return toolsafetest.Reset() }

// ApplyReset is toolsafetest.ApplyThenReset.
func ApplyReset() Step { return toolsafetest.ApplyThenReset() }

// Respond is toolsafetest.Respond.
func Respond(code int, body string) Step { return toolsafetest.Respond(code, body) }

// TooMany is toolsafetest.TooMany.
func TooMany(retryAfter string) Step { return toolsafetest.TooMany(retryAfter) }

// Unavailable is toolsafetest.Unavailable.
func Unavailable(retryAfter string) Step { return toolsafetest.Unavailable(retryAfter) }

// HangUp is toolsafetest.Hang.
func HangUp() Step { return toolsafetest.Hang() }

// SlowAnswer is toolsafetest.Slow.
func SlowAnswer(d time.Duration) Step { return toolsafetest.Slow(d) }
