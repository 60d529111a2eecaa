package robustness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

var seedFlag = flag.Uint64("robust.seed", 0, "the seed of the robustness checks of package robustness (0: from the time, printed)")

// DefaultOps is how many operations Check drives when Config.Ops is zero.
const DefaultOps = 300

// DefaultDuration is how long Check drives operations at most when
// Config.Duration is zero: 20 seconds.
const DefaultDuration = 20 * time.Second

// Grants is a store of approvals as Check drives it: an Approver whose
// decisions a program grants (Grant) or a person gives for the request
// shown (Requests, Answer), as redisstore's Grants are. MemoryGrants
// adapts an approval.Grants. A Grants must be safe for concurrent use.
type Grants interface {
	approval.Approver
	// Grant approves one call of tool with input, in whichever run.
	Grant(ctx context.Context, tool, input string) error
	// Requests lists the calls waiting for a decision.
	Requests(ctx context.Context) ([]approval.Request, error)
	// Answer decides the request id; approval.ErrNotPending when it no
	// longer waits.
	Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error)
}

// MemoryGrants adapts g, whose methods take no context and never fail, to
// Grants.
func MemoryGrants(g *approval.Grants) Grants { return memoryGrants{g} }

type memoryGrants struct{ *approval.Grants }

func (g memoryGrants) Grant(_ context.Context, tool, input string) error {
	g.Grants.Grant(tool, input)
	return nil
}

func (g memoryGrants) Requests(context.Context) ([]approval.Request, error) {
	return g.Grants.Requests(), nil
}

func (g memoryGrants) Answer(_ context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	return g.Grants.Answer(id, d, by, comment)
}

// Replica is one replica's view of the stores under test: its own client
// of the shared ledger and grants (for stores in memory, the same values
// for every replica).
type Replica struct {
	// Ledger is the replica's run ledger.
	Ledger run.Ledger
	// Grants are the replica's approvals.
	Grants Grants
}

// Fault is one kind of fault a Check injects while it drives the stores,
// one at a time, at random: Inject starts it, waits while it lasts and ends
// it (a Redis paused and continued, killed and restarted), and returns once
// the stores are whole again; ctx ends when the Check stops driving. An
// error fails the Check.
type Fault struct {
	// Name names the fault in the report.
	Name string
	// Inject injects the fault once; rng is the Check's, for how long.
	Inject func(ctx context.Context, rng *rand.Rand) error
}

// Config is what Check drives and how much.
type Config struct {
	// Seed seeds every random choice; zero means the -robust.seed flag,
	// or, when that is zero too, the time. Check reports the seed it used.
	Seed uint64
	// Replicas are the replicas that drive the stores, two workers each;
	// at least one.
	Replicas []Replica
	// Ops is how many operations the workers start in all (calls,
	// resumes, grants, answers); zero means DefaultOps (300).
	Ops int
	// Duration bounds the time the workers start operations in; zero
	// means DefaultDuration (20 seconds).
	Duration time.Duration
	// Runs is how many agent runs are in progress at once (a new one
	// begins every 20 operations); zero means 6.
	Runs int
	// LoseReplies is the probability, from 0 to 1, that the reply of a
	// store operation that was applied is lost (the replica gets an error):
	// for stores with no network to lose it on. Zero loses none.
	LoseReplies float64
	// Kills is the probability, from 0 to 1, that a call's replica is
	// killed between its effect and the record of its outcome: its Finish
	// is never sent, and its answer never reaches anyone. Zero kills none.
	Kills float64
	// Ready, when set, is called after an operation the replica's store
	// refused as unavailable (a call that ended tool-busy, a grant or an
	// answer that failed), and returns once that replica's store may
	// answer again or ctx ends: as a program waits for its store, so the
	// operations are not spent while it is down. Nil waits for nothing.
	Ready func(ctx context.Context, replica int)
	// Faults are injected one after the other, at random, while the
	// workers drive; none means none but LoseReplies and Kills.
	Faults []Fault
}

// Report is what a Check did and found.
type Report struct {
	// Seed is the seed it used: pass it as -robust.seed to drive the same
	// operations and faults again.
	Seed uint64
	// Ops counts the operations driven; StoreOps the store operations
	// they made, which the checker checked.
	Ops, StoreOps int
	// Faults counts the faults injected, by name: "lost reply" and
	// "replica killed" for LoseReplies and Kills.
	Faults map[string]int
	// Effects counts the effects the upstream applied; Replays the calls
	// answered from the ledger; Pauses the calls that paused.
	Effects, Replays, Pauses int
	// Violations are the broken rules, each a sentence; none when the
	// Check passed.
	Violations []string
}

// FaultCount is the number of faults injected.
func (r Report) FaultCount() int {
	n := 0
	for _, c := range r.Faults {
		n += c
	}
	return n
}

// String is the report in one line, starting "robustness:".
func (r Report) String() string {
	names := make([]string, 0, len(r.Faults))
	for n := range r.Faults {
		names = append(names, n)
	}
	sort.Strings(names)
	var fs []string
	for _, n := range names {
		fs = append(fs, fmt.Sprintf("%s %d", n, r.Faults[n]))
	}
	return fmt.Sprintf("robustness: seed=%d ops=%d store-ops=%d faults=%d (%s) effects=%d replays=%d pauses=%d violations=%d",
		r.Seed, r.Ops, r.StoreOps, r.FaultCount(), strings.Join(fs, ", "), r.Effects, r.Replays, r.Pauses, len(r.Violations))
}

// result is one user-visible operation: a call or a resume and how it
// ended.
type result struct {
	start, end int64
	runID      string
	key        string // the key a resume continues, or "" for a call
	group      string // the call's tool and canonical input
	res        middleware.Result
}

// kill is the flag of a call whose replica is killed once its effect is
// applied.
type kill struct{ applied atomic.Bool }

// driver is one Check's state.
type driver struct {
	cfg     Config
	h       *history
	reps    []replicaTools
	mu      sync.Mutex
	pauses  []*approval.Required
	results []result
	effects map[string]int // idempotency key → times applied
	kills   int
	ops     atomic.Int64
	errs    errorLog
}

type replicaTools struct {
	ledger *ledger
	grants *grants
	tools  map[string]*toolsafe.Tool // by name
	names  []string
}

// kinds are the tools Check drives: a refund that sends its idempotency
// key (an upstream applies a key once) and a cancel that sends none, both
// approved one call at a time, and a payment that needs no approval.
var kinds = []struct {
	name        string
	sideEffects middleware.SideEffects
	approval    bool
}{
	{"refund", middleware.SideEffectsWithKey, true},
	{"cancel", middleware.SideEffectsWithoutKey, true},
	{"pay", middleware.SideEffectsWithoutKey, false},
}

var inputs = []string{`{"order":"A-1"}`, `{"order":"A-2"}`}

// Check drives cfg.Replicas with concurrent calls, pauses, grants and
// resumes of the same agent runs, through toolsafe's whole stack (a
// refund that needs approval from the replica's Grants and a payment,
// both with side effects and no idempotency keys, on a run ledger), while
// it injects cfg's faults. It records every store operation with when it
// was asked, when it answered and what it answered, and checks the history
// against a sequential model of run.Ledger and of Grants with porcupine
// (every history must be linearizable), and the calls against the rules:
// no effect applied twice, no settled answer replaced (a resume of a call
// that answered replays the answer; no call pauses again after it
// answered), no decision used by another request. It fails t with what it
// found, and logs the Report's line.
//
// Every choice comes from cfg.Seed, but the goroutines' interleaving comes
// from the scheduler: the same seed drives the same operations and faults
// in the same order on each worker, not the same history.
func Check(t testing.TB, cfg Config) Report {
	t.Helper()
	if len(cfg.Replicas) == 0 {
		t.Fatal("robustness: Config.Replicas is empty; give at least one replica")
	}
	if cfg.Seed == 0 {
		cfg.Seed = *seedFlag
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	if cfg.Ops <= 0 {
		cfg.Ops = DefaultOps
	}
	if cfg.Duration <= 0 {
		cfg.Duration = DefaultDuration
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 6
	}
	t.Logf("robustness: seed %d (repeat with -robust.seed=%d)", cfg.Seed, cfg.Seed)
	d := &driver{cfg: cfg, effects: map[string]int{},
		h: &history{start: time.Now(), rng: rand.New(rand.NewPCG(cfg.Seed, 1)), lose: cfg.LoseReplies}}
	logger := slog.New(&d.errs) // the WARNs of lost replies are expected; an ERROR is not
	for i, r := range cfg.Replicas {
		rt := replicaTools{ledger: &ledger{r.Ledger, d.h, i}, grants: &grants{r.Grants, d.h, i}}
		rt.tools = map[string]*toolsafe.Tool{}
		for _, k := range kinds {
			opts := []toolsafe.Option{toolsafe.WithSideEffects(k.sideEffects), toolsafe.WithLogger(logger)}
			if k.approval {
				opts = append(opts, toolsafe.WithApproval(rt.grants))
			}
			tool, err := toolsafe.New(middleware.Func(k.name, "Changes an order.", d.upstream(k.name)), opts...)
			if err != nil {
				t.Fatal(err)
			}
			rt.tools[k.name] = tool
			rt.names = append(rt.names, k.name)
		}
		d.reps = append(d.reps, rt)
	}

	ctx, stop := context.WithTimeout(context.Background(), cfg.Duration)
	defer stop()
	faults := map[string]int{}
	var faultErr error
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		if len(cfg.Faults) == 0 {
			return
		}
		rng := rand.New(rand.NewPCG(cfg.Seed, 2))
		for ctx.Err() == nil {
			f := cfg.Faults[rng.IntN(len(cfg.Faults))]
			if err := f.Inject(ctx, rng); err != nil {
				faultErr = fmt.Errorf("fault %q: %w", f.Name, err)
				return
			}
			faults[f.Name]++
		}
	}()
	var wg sync.WaitGroup
	for w := range 2 * len(d.reps) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.work(ctx, w, rand.New(rand.NewPCG(cfg.Seed, uint64(10+w))))
		}()
	}
	wg.Wait()
	stop()
	<-faultsDone
	if faultErr != nil {
		t.Error(faultErr)
	}

	rep := Report{Seed: cfg.Seed, Ops: int(min(d.ops.Load(), int64(cfg.Ops))), StoreOps: len(d.h.ops), Faults: faults}
	if d.h.lost > 0 {
		faults["lost reply"] = d.h.lost
	}
	if d.kills > 0 {
		faults["replica killed"] = d.kills
	}
	rep.Violations = append(rep.Violations, d.checkRules(&rep)...)
	for _, m := range d.errs.msgs {
		rep.Violations = append(rep.Violations, "a tool logged at ERROR: "+m)
	}
	rep.Violations = append(rep.Violations, d.checkLinearizable(t)...)
	t.Log(rep.String())
	for _, v := range rep.Violations {
		t.Error(v)
	}
	if len(rep.Violations) > 0 {
		t.Logf("robustness: repeat with -robust.seed=%d", cfg.Seed)
	}
	return rep
}

// upstream is the tool's effect: it counts the effects applied per
// idempotency key, and answers with the key, so that an answer names the
// call that made it. The refund's upstream honours the key, as a payment
// provider does: a request sent again under a key applied already is not
// applied again, and gets the same answer.
func (d *driver) upstream(tool string) func(ctx context.Context, in string) (string, error) {
	return func(ctx context.Context, in string) (string, error) {
		key := middleware.IdempotencyKey(ctx)
		d.mu.Lock()
		if tool != "refund" || d.effects[key] == 0 {
			d.effects[key]++
		}
		d.mu.Unlock()
		if k, _ := ctx.Value(killKey{}).(*kill); k != nil {
			k.applied.Store(true)
		}
		// The upstream takes a moment, as a real one does: long enough
		// for the calls of other replicas to come between this call's
		// intent and its outcome.
		time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
		return tool + " " + in + " applied under " + key, nil
	}
}

// work is one worker's loop: it starts operations until Ops are started or
// ctx ends.
func (d *driver) work(ctx context.Context, w int, rng *rand.Rand) {
	rt := d.reps[w%len(d.reps)]
	ready := func(failed bool) {
		if failed && d.cfg.Ready != nil {
			d.cfg.Ready(ctx, w%len(d.reps))
		}
	}
	scopes := map[string]context.Context{}
	scope := func(runID string) context.Context {
		if s, ok := scopes[runID]; ok && rng.IntN(4) > 0 {
			return s
		}
		s := run.With(context.Background(), runID, rt.ledger)
		scopes[runID] = s
		return s
	}
	for ctx.Err() == nil {
		n := d.ops.Add(1)
		if n > int64(d.cfg.Ops) {
			break
		}
		// The runs in progress: a window of Runs over a new run every
		// 20 operations, so that new pauses keep coming.
		runID := fmt.Sprintf("robust-%d-%d", d.cfg.Seed, int(n)/20+rng.IntN(d.cfg.Runs))
		tool := rt.tools[rt.names[rng.IntN(len(rt.names))]]
		in := inputs[rng.IntN(len(inputs))]
		switch x := rng.IntN(100); {
		case x < 30: // a call of the run, killed now and then
			s := scope(runID)
			if rng.Float64() < d.cfg.Kills {
				d.call(context.WithValue(s, killKey{}, &kill{}), runID, "", tool, in)
				delete(scopes, runID) // a new process continues the run
				continue
			}
			ready(d.call(s, runID, "", tool, in))
		case x < 40: // an identical call made while the first runs
			s := scope(runID)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { d.call(s, runID, "", tool, in) })
			}
			wg.Wait()
			ready(true)
		case x < 65: // a resume, on one replica or on two at once
			p := d.pause(rng)
			if p == nil {
				continue
			}
			if x < 55 {
				ready(d.resume(rt, p))
				continue
			}
			other := d.reps[rng.IntN(len(d.reps))]
			var wg sync.WaitGroup
			wg.Go(func() { d.resume(rt, p) })
			wg.Go(func() { d.resume(other, p) })
			wg.Wait()
			ready(true)
		case x < 78: // a program grants what a pause waits for
			if p := d.pause(rng); p != nil {
				ready(rt.grants.Grant(ctx, p.Tool, p.Input) != nil) // an error is recorded
			}
		default: // a person answers a request shown
			rs, err := rt.grants.inner.Requests(ctx)
			if err != nil || len(rs) == 0 {
				ready(err != nil)
				continue
			}
			dec := approval.Approved
			if rng.IntN(5) == 0 {
				dec = approval.Denied
			}
			err = rt.grants.Answer(ctx, rs[rng.IntN(len(rs))], dec)
			ready(err != nil && !errors.Is(err, approval.ErrNotPending))
		}
	}
}

// pause returns one of the latest pauses, or nil.
func (d *driver) pause(rng *rand.Rand) *approval.Required {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pauses) == 0 {
		return nil
	}
	return d.pauses[max(0, len(d.pauses)-1-rng.IntN(2*d.cfg.Runs))]
}

func (d *driver) resume(rt replicaTools, p *approval.Required) bool {
	ctx := run.Resume(run.With(context.Background(), "", rt.ledger), p)
	return d.call(ctx, p.RunID, p.IdempotencyKey, rt.tools[p.Tool], p.Input)
}

// call makes the call and keeps its result; it reports whether the call
// ended tool-busy or paused because its approver could not answer (the
// store was unavailable).
func (d *driver) call(ctx context.Context, runID, key string, tool *toolsafe.Tool, in string) bool {
	start := d.h.now()
	r := tool.Run(ctx, in)
	end := d.h.now()
	if k, _ := ctx.Value(killKey{}).(*kill); k != nil && k.applied.Load() {
		d.mu.Lock()
		d.kills++
		d.mu.Unlock()
		return false // its replica is dead: nobody hears the answer
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	canon, err := canonical.JSON(in)
	if err != nil {
		canon = in
	}
	d.results = append(d.results, result{start, end, runID, key, r.Tool + "\x00" + canon, r})
	ar := pausedBy(r)
	if ar != nil {
		d.pauses = append(d.pauses, ar)
	}
	return (r.Failure != nil && r.Kind() == middleware.KindBusy) || (ar != nil && ar.Err != nil)
}

// pausedBy returns the pause r ended with, or nil.
func pausedBy(r middleware.Result) *approval.Required {
	if r.Failure == nil {
		return nil
	}
	ar, _ := r.Failure.Cause.(*approval.Required)
	return ar
}
