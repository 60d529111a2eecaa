// Package transcript prints what the examples show of each tool call: its
// status and kind, attempts, the delays between them (Result.Delays), how
// long it took and what the model saw.
package transcript

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

// Print writes the three lines of call n: "[n] tool (call id)", the status
// line and the observation. A paused call shows no observation: the run
// stops instead.
func Print(w io.Writer, n int, r middleware.Result) {
	fmt.Fprintf(w, "[%d] %s (call %s)\n", n, r.Tool, r.CallID)
	fmt.Fprintf(w, "    status: %s   attempts: %d   delays: %s   took: %s\n",
		Status(r), r.Attempts, Delays(r.Delays), Took(r.Elapsed))
	if r.Replayed {
		fmt.Fprintf(w, "    replayed: the run ledger answered; this call completed before the pause, so the tool was not called again\n")
	}
	if r.Fallback != "" && r.Primary != nil {
		fmt.Fprintf(w, "    fell back to %s because %s: %s\n", r.Fallback, r.Primary.Kind, OneLine(r.Primary.MessageWithoutArguments()))
	}
	obs := OneLine(r.Observation())
	if r.Status() == "paused" {
		obs = "(none: the run pauses for approval)"
	}
	fmt.Fprintf(w, "    observation: %s\n", obs)
}

// Status is "ok", or the status and the failure's kind: "error (tool-failed)".
func Status(r middleware.Result) string {
	if r.Failure != nil {
		return r.Status() + " (" + string(r.Failure.Kind) + ")"
	}
	return r.Status()
}

// Delays lists the delays before attempts 2..n rounded to the millisecond,
// "[250ms 500ms]", or "none".
func Delays(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.Round(time.Millisecond).String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Took rounds d to the millisecond, or to the microsecond below one.
func Took(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// OneLine folds s onto one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
