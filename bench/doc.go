// Package bench holds toolsafe's benchmarks against the alternatives: the
// bare tool, a bare failsafe-go executor, a hand-written retry loop,
// cenkalti/backoff and avast/retry-go. See README.md in this folder.
package bench
