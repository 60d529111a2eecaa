package robustness

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// checkRules checks the rules a user relies on, whatever the history.
func (d *driver) checkRules(rep *Report) []string {
	var v []string
	keys := make([]string, 0, len(d.effects))
	for k, n := range d.effects {
		rep.Effects += n
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if n := d.effects[k]; n > 1 {
			v = append(v, fmt.Sprintf("the call with key %s was applied %d times; a call without idempotency keys must be sent once", k, n))
		}
	}
	// When each key's answer was first recorded (a Finish of an answer
	// acknowledged), and what it was: from then on it is settled. An
	// answer its replica could not record (the store was down) is not:
	// a later call takes its outcome as unknown, as it must.
	type settled struct {
		end    int64
		output string
	}
	first := map[string]settled{}
	for _, op := range d.h.ops {
		in, out := op.Input.(opInput), op.Output.(opOutput)
		if in.kind != opFinish || out.lost || !out.finished.Written || in.entry.Status() != run.StatusAnswered {
			continue
		}
		if s, ok := first[in.entry.Key]; !ok || op.Return < s.end {
			first[in.entry.Key] = settled{op.Return, in.entry.Output}
		}
	}
	for _, r := range d.results {
		if r.res.Replayed {
			rep.Replays++
		}
		if r.res.Failure != nil && r.res.Kind() == middleware.KindApprovalRequired {
			rep.Pauses++
		}
	}
	// A resumed run's n-th call of a tool with an input continues the
	// run's n-th entry of them, whatever its key: where a run made one such
	// call more than once, a resume that makes only the paused one is not
	// the run resumed, and continues the first.
	several := map[string]bool{}
	for _, op := range d.h.ops {
		in, out := op.Input.(opInput), op.Output.(opOutput)
		if in.kind == opBegin && (in.entry.N > 0 || (!out.lost && out.begun.Entry.N > 0)) {
			several[in.part+"\x00"+groupOf(in.entry)] = true
		}
	}
	for _, r := range d.results {
		if several["run "+r.runID+"\x00"+r.group] {
			continue
		}
		key := r.key
		if ar := pausedBy(r.res); ar != nil && key == "" {
			key = ar.IdempotencyKey
		}
		s, ok := first[key]
		if key == "" || !ok || r.start < s.end {
			continue
		}
		switch {
		case r.res.Failure == nil && r.res.Output != s.output:
			v = append(v, fmt.Sprintf("run %s: a call with key %s answered %q after its answer %q was recorded", r.runID, key, r.res.Output, s.output))
		case r.res.Failure != nil && r.res.Kind() == middleware.KindApprovalRequired:
			v = append(v, fmt.Sprintf("run %s: the call with key %s paused for approval again after its answer %q was recorded: a settled answer was replaced", r.runID, key, s.output))
		case r.res.Failure != nil && r.key != "" && r.res.Kind() != middleware.KindBusy:
			v = append(v, fmt.Sprintf("run %s: a resume of the call with key %s ended with %v (%q) after its answer %q was recorded; it replays the answer", r.runID, key, r.res.Kind(), r.res.Observation(), s.output))
		}
	}
	return v
}

// checkLinearizable checks the history against the sequential model.
func (d *driver) checkLinearizable(t testing.TB) []string {
	end := d.h.now() + 1
	ops := slices.Clone(d.h.ops)
	for i := range ops {
		if ops[i].Output.(opOutput).lost {
			ops[i].Return = end // it may have been applied at any time after it was asked
		}
	}
	res, info := porcupine.CheckOperationsVerbose(model.ToModel(), ops, 60*time.Second)
	switch res {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return []string{"the checker could not decide within 60s whether the history is linearizable"}
	}
	var v []string
	for _, part := range model.Partition(ops) {
		if porcupine.CheckOperationsTimeout(model.ToModel(), part, 10*time.Second) == porcupine.Illegal {
			v = append(v, fmt.Sprintf("the store operations on %q are not linearizable: no order of them, each at one instant between when it was asked and when it answered, gives the answers the replicas got:\n%s",
				part[0].Input.(opInput).part, describeHistory(part)))
		}
	}
	path := t.TempDir() + "/history.html"
	if err := porcupine.VisualizePath(model.ToModel(), info, path); err == nil {
		t.Logf("robustness: the history, drawn: %s", path)
	}
	if len(v) == 0 {
		v = append(v, "the history of store operations is not linearizable")
	}
	return v
}

func describeHistory(ops []porcupine.Operation) string {
	ops = slices.Clone(ops)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	var b strings.Builder
	for _, op := range ops {
		ret := fmt.Sprint(op.Return)
		if op.Output.(opOutput).lost {
			ret = "end"
		}
		fmt.Fprintf(&b, "  [%d] %d..%s %s\n", op.ClientId, op.Call, ret, model.DescribeOperation(op.Input, op.Output))
	}
	return b.String()
}

// errorLog keeps the messages the tools logged at ERROR: a store that
// cannot be read, a panic. None is expected.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelError }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }
