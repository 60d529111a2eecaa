package middleware

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
)

// leaves are errors a tree is built from: one for every row of Classify's
// table, and foreign ones.
var leaves = []error{
	io.ErrUnexpectedEOF, syscall.ECONNRESET, errors.New("foreign"),
	reported{KindApprovalDenied, false}, circuitbreaker.ErrOpen, bulkhead.ErrFull, reported{KindBusy, false}, timeout.ErrExceeded,
	retrypolicy.ErrExceeded, retrypolicy.ExceededError{LastError: syscall.ECONNRESET},
	attemptTimeout{}, reported{KindPanic, false}, reported{KindCallLimit, false},
	reported{KindFailed, false}, reported{KindBusy, true},
	&ArgsError{Problems: []string{"x"}}, NewToolError("not found"), RetryableToolError("later"),
	&Failure{Kind: KindBusy}, &Failure{Kind: KindTimeout, Retryable: true}, testKinded{},
	asFailure{}, asToolError{}, asReporter{reported{KindCallLimit, false}}, asReporter{final{errors.New("applied")}},
	asArgs{},
}

// asToolError is a semantic ToolError through its As method only.
type asToolError struct{}

func (asToolError) Error() string { return "claims to be a tool error" }
func (asToolError) As(target any) bool {
	if te, ok := target.(**ToolError); ok {
		*te = NewToolError("not found")
		return true
	}
	return false
}

// asReporter is a reporter through its As method only.
type asReporter struct{ r reporter }

func (a asReporter) Error() string { return "claims to report: " + a.r.Error() }
func (a asReporter) As(target any) bool {
	if r, ok := target.(*reporter); ok {
		*r = a.r
		return true
	}
	return false
}

// asArgs is an *ArgsError through its As method only.
type asArgs struct{}

func (asArgs) Error() string { return "claims to be invalid arguments" }
func (asArgs) As(target any) bool {
	if a, ok := target.(**ArgsError); ok {
		*a = &ArgsError{Problems: []string{"x"}}
		return true
	}
	return false
}

// testKinded says its own kind, as the approval pause does.
type testKinded struct{}

func (testKinded) Error() string { return "paused" }
func (testKinded) Kind() Kind    { return KindApprovalRequired }

// reported reports its own kind and retryability, as the errors of
// toolsafe's own layers do.
type reported struct {
	kind      Kind
	retryable bool
}

func (r reported) Error() string                   { return "reported " + string(r.kind) }
func (r reported) Report() (Kind, bool)            { return r.kind, r.retryable }
func (r reported) Words(string) (why, next string) { return "", "" }

// final keeps the kind of the error it wraps, not retried, as the side
// effects layer's mark does.
type final struct{ err error }

func (f final) Error() string                   { return "final: " + f.err.Error() }
func (f final) Unwrap() error                   { return f.err }
func (f final) Report() (Kind, bool)            { return "", false }
func (f final) Words(string) (why, next string) { return "", "" }

// attemptTimeout is timeout.ErrExceeded too, as the attempt timeout's
// error is.
type attemptTimeout struct{}

func (attemptTimeout) Error() string        { return "attempt timeout" }
func (attemptTimeout) Is(target error) bool { return target == timeout.ErrExceeded }

// tree builds an error tree from b, a byte at a time: a leaf, or a wrapper
// around the rest.
func tree(b []byte) error {
	if len(b) == 0 {
		return errors.New("end")
	}
	rest := func() error { return tree(b[1:]) }
	switch op := b[0]; op % 9 {
	case 0:
		return fmt.Errorf("wrapped: %w", rest())
	case 1:
		return Transient(rest())
	case 2:
		return RetryAfter(rest(), time.Second)
	case 3:
		return Permanent(rest())
	case 4:
		return final{rest()}
	case 5:
		half := len(b) / 2
		return errors.Join(tree(b[1:max(1, half)]), tree(b[max(1, half):]))
	case 6:
		return &ToolError{msg: "wrapped", cause: rest()}
	case 7:
		return &Failure{Kind: KindFailed, Cause: rest()}
	default:
		return fmt.Errorf("%w and %w", leaves[int(op/9)%len(leaves)], rest())
	}
}

// FuzzClassifyOnePass: one walk over the tree classifies as the table's rows
// tried one at a time with errors.As and errors.Is do.
func FuzzClassifyOnePass(f *testing.F) {
	for i := range 9 * len(leaves) {
		f.Add([]byte{byte(i)})
		f.Add([]byte{byte(i), 0, 1, byte(i * 7)})
		f.Add([]byte{5, byte(i), 2, 6, byte(i + 9)})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64 {
			b = b[:64]
		}
		err := tree(b)
		kind, retryable := Classify(err)
		wantKind, wantRetryable := classifyByRows(err)
		if kind != wantKind || retryable != wantRetryable {
			t.Fatalf("Classify(%v) = %q, %v; errors.As row by row says %q, %v", err, kind, retryable, wantKind, wantRetryable)
		}
	})
}

// asFailure claims, through an As method, to be a *Failure.
type asFailure struct{}

func (asFailure) Error() string { return "claims to be a failure" }
func (asFailure) As(target any) bool {
	if f, ok := target.(**Failure); ok {
		*f = &Failure{Kind: KindBudget}
		return true
	}
	return false
}

func TestClassifyHonoursAsMethods(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", asFailure{})
	if kind, _ := Classify(err); kind != KindBudget {
		t.Errorf("Classify = %q; want the kind of the Failure its As method gives, %q", kind, KindBudget)
	}
}

func BenchmarkClassify(b *testing.B) {
	err := fmt.Errorf("attempt: %w", Transient(fmt.Errorf("read: %w", syscall.ECONNRESET)))
	b.ReportAllocs()
	for b.Loop() {
		Classify(err)
	}
}

// An error that reports its own kind ranks at its row of the table, not
// above every row: a failure of another toolsafe call still decides, and
// the rows above its own still win.
func TestAReportedErrorRanksAtItsRow(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		kind      Kind
		retryable bool
	}{
		{"another call's failure decides", &Failure{Kind: KindBusy, Cause: reported{KindBusy, true}}, KindBusy, false},
		{"invalid input ranks above a panic", errors.Join(reported{KindPanic, false}, &ArgsError{Problems: []string{"x"}}), KindArgsInvalid, false},
		{"the loop guard ranks above the ledger's unreadable record", errors.Join(reported{KindFailed, false}, reported{KindCallLimit, false}), KindCallLimit, false},
		{"the ledger unavailable ranks above an open circuit", errors.Join(circuitbreaker.ErrOpen, reported{KindBusy, true}), KindBusy, true},
		{"the attempt timeout's refusal ranks below an open circuit", errors.Join(reported{KindBusy, false}, circuitbreaker.ErrOpen), KindCircuitOpen, false},
		{"the mark that it may not be retried keeps the kind", final{reported{KindBusy, true}}, KindBusy, false},
		{"the mark outranks another call's failure", &Failure{Kind: KindTimeout, Retryable: true, Cause: final{timeout.ErrExceeded}}, KindTimeout, false},
	} {
		if kind, retryable := Classify(tt.err); kind != tt.kind || retryable != tt.retryable {
			t.Errorf("%s: Classify = %q, %v; want %q, %v", tt.name, kind, retryable, tt.kind, tt.retryable)
		}
		if kind, retryable := classifyByRows(tt.err); kind != tt.kind || retryable != tt.retryable {
			t.Errorf("%s: classifyByRows = %q, %v; want %q, %v", tt.name, kind, retryable, tt.kind, tt.retryable)
		}
	}
}

// classifyByRows is Classify one row at a time with errors.As and
// errors.Is, as its table reads: the reference its one walk is held to.
func classifyByRows(err error) (Kind, bool) {
	var final error
	var rows uint16
	eachReporter(err, func(r reporter) bool {
		kind, retryable := r.Report()
		if kind == "" {
			final = r
			return false
		}
		rows |= reportedRow(kind, retryable)
		return true
	})
	if final != nil {
		kind, _ := Classify(errors.Unwrap(final))
		return kind, false
	}
	if k, ok := errors.AsType[kinded](err); ok && k.Kind().Err() != nil {
		return k.Kind(), false
	}
	if f, ok := errors.AsType[*Failure](err); ok && f.Kind.Err() != nil {
		return f.Kind, f.Retryable
	}
	for _, t := range lookFor {
		if errors.Is(err, t.err) {
			rows |= t.row
		}
	}
	rows |= asRow[*ArgsError](err, rowArgs) | asRow[*permanentError](err, rowPermanent)
	for _, r := range rowKinds {
		if rows&r.row != 0 {
			return r.kind, r.retryable
		}
	}
	if te, ok := errors.AsType[*ToolError](err); ok && !te.retryable && !hasMarker(err) {
		return KindToolError, false
	}
	return KindFailed, true
}

// asRow is row when err's tree holds an E, else 0.
func asRow[E error](err error, row uint16) uint16 {
	if _, ok := errors.AsType[E](err); ok {
		return row
	}
	return 0
}
