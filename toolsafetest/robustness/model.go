package robustness

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"
)

// opKind is what a store operation of the history was.
type opKind int

const (
	opBegin opKind = iota
	opFinish
	opGrant
	opAnswer
	opDecide
)

func (k opKind) String() string {
	return [...]string{"Begin", "Finish", "Grant", "Answer", "Decide"}[k]
}

// opInput is one store operation as it was asked: part names the state it
// reads and writes (a run of the ledger, or a tool and canonical input of
// the grants), so the checker decides each part apart.
type opInput struct {
	kind     opKind
	part     string
	entry    run.Entry         // Begin, Finish
	decision approval.Decision // Answer
	request  string            // Answer: the RequestKey answered
	asked    []string          // Decide: the call's AnsweredAs
}

// opOutput is how it ended. lost means no reply came (an error): the
// operation may have been applied, at any time after it was asked.
type opOutput struct {
	lost       bool
	notPending bool // Answer: approval.ErrNotPending, nothing recorded
	begun      run.Begun
	finished   run.Finished
	decision   approval.Decision
}

// mentry is one entry of the model's ledger.
type mentry struct {
	Group   string     // tool and input
	N       int        // position
	Key     string     // idempotency key
	Claim   string     // while Pending
	Status  run.Status // where it stands
	Output  string     // when Answered
	Pending bool
}

// mdecision is one decision of the model's grants, waiting to be used.
type mdecision struct {
	D       approval.Decision
	Request string // "" for Grant and Deny
}

// mstate is a part's state: entries of a run, or decisions of a tool and
// input, JSON-encoded so that states compare with ==.
type mstate struct {
	Entries   []mentry    `json:",omitempty"`
	Decisions []mdecision `json:",omitempty"`
}

func decodeState(s string) mstate {
	var m mstate
	if s != "" {
		_ = json.Unmarshal([]byte(s), &m) // written by encode only
	}
	return m
}

func (m mstate) encode() string {
	slices.SortFunc(m.Entries, func(a, b mentry) int {
		if a.Group != b.Group {
			if a.Group < b.Group {
				return -1
			}
			return 1
		}
		return a.N - b.N
	})
	if len(m.Entries) == 0 && len(m.Decisions) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func groupOf(e run.Entry) string { return e.Tool + "\x00" + e.Input }

// takesOver is run.Ledger's rule: a call continues a Pending, Open,
// Answered or Unknown entry; Failed and Refused ones it passes by.
func takesOver(s run.Status) bool {
	return s == run.StatusPending || s == run.StatusOpen || s == run.StatusAnswered || s == run.StatusUnknown
}

// writes is run.Ledger's rule for Finish: Answered stands; an answer is
// written over anything else; Unknown over anything but Unknown; the rest
// only by the call whose Claim holds the Pending intent.
func writes(from, to run.Status, own bool) bool {
	switch {
	case from == run.StatusAnswered:
		return false
	case to == run.StatusAnswered:
		return true
	case to == run.StatusUnknown:
		return from != run.StatusUnknown
	}
	return own
}

// view is what the checker compares of a ledger's answer: for Begin,
// whether the call is New and the entry it got (position, key, status,
// answer); for Finish, whether it was written or the answer that stands.
type view struct {
	New     bool
	N       int
	Key     string
	Status  run.Status
	Output  string
	Written bool
	Answer  bool
}

func beganView(b run.Begun) view {
	v := view{New: b.New, N: b.Entry.N, Key: b.Entry.Key, Status: b.Entry.Status()}
	if v.Status == run.StatusAnswered {
		v.Output = b.Entry.Output
	}
	return v
}

func finishedView(f run.Finished) view {
	v := view{Written: f.Written, Answer: f.Answer != nil}
	if f.Answer != nil {
		v.Output = f.Answer.Output
	}
	return v
}

func (me mentry) view(isNew bool) view {
	return view{New: isNew, N: me.N, Key: me.Key, Status: me.Status, Output: me.Output}
}

// begin is Ledger.Begin on m: the state after it and what it answers.
func (m mstate) begin(e run.Entry) (mstate, view) {
	g := groupOf(e)
	m.Entries = slices.Clone(m.Entries)
	m.encode() // sorted by position
	next := 0
	for _, me := range m.Entries {
		if me.Group != g {
			continue
		}
		next = max(next, me.N+1)
		if me.N >= e.N && e.Claim != "" && me.Pending && me.Claim == e.Claim {
			return m, me.view(true)
		}
	}
	for i, me := range m.Entries {
		if me.Group != g || me.N < e.N || !takesOver(me.Status) {
			continue
		}
		if me.Status != run.StatusOpen {
			return m, me.view(false)
		}
		m.Entries[i].Status, m.Entries[i].Pending, m.Entries[i].Claim = run.StatusPending, true, e.Claim
		return m, m.Entries[i].view(true)
	}
	me := mentry{Group: g, N: max(next, e.N), Key: e.Key, Claim: e.Claim, Status: run.StatusPending, Pending: true}
	m.Entries = append(m.Entries, me)
	return m, me.view(true)
}

// finish is Ledger.Finish on m.
func (m mstate) finish(e run.Entry) (mstate, view) {
	g := groupOf(e)
	i := slices.IndexFunc(m.Entries, func(me mentry) bool { return me.Group == g && me.N == e.N })
	if i < 0 || m.Entries[i].Key != e.Key {
		return m, view{}
	}
	me := m.Entries[i]
	from, to := me.Status, e.Status()
	if !writes(from, to, me.Pending && me.Claim == e.Claim) {
		if from == run.StatusAnswered {
			return m, view{Answer: true, Output: me.Output}
		}
		return m, view{}
	}
	m.Entries = slices.Clone(m.Entries)
	m.Entries[i] = mentry{Group: g, N: e.N, Key: e.Key, Status: to}
	if to == run.StatusAnswered {
		m.Entries[i].Output = e.Output
	}
	return m, view{Written: true}
}

// decide is Approver.Decide on m: the oldest decision answered for one of
// asked, else the oldest given for any call, used up; else Pending.
func (m mstate) decide(asked []string) (mstate, approval.Decision) {
	i := slices.IndexFunc(m.Decisions, func(d mdecision) bool { return d.Request != "" && slices.Contains(asked, d.Request) })
	if i < 0 {
		i = slices.IndexFunc(m.Decisions, func(d mdecision) bool { return d.Request == "" })
	}
	if i < 0 {
		return m, approval.Pending
	}
	d := m.Decisions[i].D
	m.Decisions = slices.Delete(slices.Clone(m.Decisions), i, i+1)
	return m, d
}

func (m mstate) add(d approval.Decision, request string) mstate {
	m.Decisions = append(slices.Clone(m.Decisions), mdecision{d, request})
	return m
}

// step applies in to m, returning the states it may leave m in given out:
// none when out is not what the sequential store answers.
func step(state any, in, out any) []any {
	m := decodeState(state.(string))
	i, o := in.(opInput), out.(opOutput)
	var next mstate
	ok := true
	switch i.kind {
	case opBegin:
		var v view
		next, v = m.begin(i.entry)
		ok = v == beganView(o.begun)
	case opFinish:
		var v view
		next, v = m.finish(i.entry)
		ok = v == finishedView(o.finished)
	case opGrant:
		next = m.add(approval.Approved, "")
	case opAnswer:
		next = m.add(i.decision, i.request)
		if o.notPending {
			return []any{state}
		}
	case opDecide:
		var d approval.Decision
		next, d = m.decide(i.asked)
		ok = d == o.decision
	}
	switch {
	case o.lost:
		return []any{state, next.encode()}
	case ok:
		return []any{next.encode()}
	}
	return nil
}

// model is the sequential model of the ledger and the grants, each run and
// each tool and input a part of its own.
var model = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		parts := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range h {
			p := op.Input.(opInput).part
			if _, ok := parts[p]; !ok {
				order = append(order, p)
			}
			parts[p] = append(parts[p], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, p := range order {
			out = append(out, parts[p])
		}
		return out
	},
	Init: func() []any { return []any{""} },
	Step: step,
	DescribeOperation: func(in, out any) string {
		i, o := in.(opInput), out.(opOutput)
		if o.lost {
			return fmt.Sprintf("%v %s → (no reply)", i.kind, describeIn(i))
		}
		return fmt.Sprintf("%v %s → %s", i.kind, describeIn(i), describeOut(i.kind, o))
	},
	DescribeState: func(s any) string { return s.(string) },
}

func describeIn(i opInput) string {
	switch i.kind {
	case opBegin, opFinish:
		e := i.entry
		return fmt.Sprintf("%s %s %s N=%d key=%.8s claim=%.8s status=%v", i.part, e.Tool, e.Input, e.N, e.Key, e.Claim, e.Status())
	case opAnswer:
		return fmt.Sprintf("%q for %q: %v", i.part, i.request, i.decision)
	case opDecide:
		return fmt.Sprintf("%q as %q", i.part, i.asked)
	}
	return fmt.Sprintf("%q", i.part)
}

func describeOut(k opKind, o opOutput) string {
	switch k {
	case opBegin:
		return fmt.Sprintf("new=%v N=%d key=%.8s status=%v out=%q", o.begun.New, o.begun.Entry.N, o.begun.Entry.Key, o.begun.Entry.Status(), o.begun.Entry.Output)
	case opFinish:
		if o.finished.Answer != nil {
			return fmt.Sprintf("answer %q", o.finished.Answer.Output)
		}
		return fmt.Sprintf("written=%v", o.finished.Written)
	case opDecide:
		return o.decision.String()
	case opAnswer:
		if o.notPending {
			return "not pending"
		}
	}
	return "ok"
}
