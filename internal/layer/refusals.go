package layer

import "github.com/toolsafe/toolsafe/middleware"

// busy is an attempt the attempt timeout refused before it began
// (middleware.KindBusy, not retried), and why, for the model.
type busy struct {
	msg string
	why string // what follows "X was not called: "; "" for tool-busy's words
}

func (e *busy) Error() string { return e.msg }

// Report says the attempt was refused: not retried.
func (e *busy) Report() (middleware.Kind, bool) { return middleware.KindBusy, false }

// Words says why the attempt was refused; the tool-busy message frames it.
func (e *busy) Words(string) (why, next string) { return e.why, "" }

var (
	// errStuck refuses an attempt while too many earlier attempts at the
	// same tool are still running after their time ran out.
	errStuck = &busy{
		msg: "toolsafe: earlier attempts at this tool are still running after their time ran out",
		why: "earlier attempts at it are still running after their time ran out (it does not stop when asked).",
	}
	// errTooMany refuses an attempt while very many attempts at the same
	// tool are in flight.
	errTooMany = &busy{msg: "toolsafe: too many attempts at this tool are in flight"}
)

// final ends the call with err's kind, not retried: an attempt of a tool
// without an idempotency key that may have been applied.
type final struct{ err error }

func (e *final) Error() string { return e.err.Error() }
func (e *final) Unwrap() error { return e.err }

// Report keeps the kind of the error final wraps (a kind of ""), and says
// another attempt may not succeed: it outranks every row of Classify's
// table.
func (e *final) Report() (middleware.Kind, bool) { return "", false }

// Words leaves the model the words of the error final wraps.
func (e *final) Words(string) (why, next string) { return "", "" }
