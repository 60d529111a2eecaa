// Package robustness checks a run ledger and a store of approvals the way
// etcd's robustness tests check etcd: replicas drive them through
// toolsafe's whole stack with concurrent calls, identical calls in flight,
// pauses for approval, grants, answers and resumes of the same agent runs
// (two replicas resuming one pause at once among them) while faults are
// injected; every store operation is recorded with when it was asked, when
// it answered and what it answered; and the history is checked against a
// small sequential model of run.Ledger and of the grants with porcupine
// (linearizability), and against the rules a user relies on: no effect
// applied twice, no settled answer replaced, no decision used by another
// request.
//
// Anyone who implements run.Ledger or a grants store can run the same
// check against theirs:
//
//	func TestRobustness(t *testing.T) {
//		l, g := mystore.Ledger(), mystore.Grants()
//		robustness.Check(t, robustness.Config{
//			Replicas: []robustness.Replica{{Ledger: l, Grants: g}, {Ledger: l, Grants: g}},
//			Faults:   []robustness.Fault{{Name: "store paused", Inject: pause}},
//		})
//	}
//
// # Faults
//
// Check injects two faults itself: a lost reply (Config.LoseReplies: the
// operation is applied, the replica gets an error), for stores that have no
// network of their own to lose it on, and a replica killed between a call's
// effect and the record of its outcome (Config.Kills). A store with a
// server adds its own as Faults: redisstore's test pauses Redis, kills and
// restarts it, runs slow scripts and drops replies in a TCP proxy.
//
// # Seeds
//
// Every choice (which run, tool, input, operation and fault) comes from
// Config.Seed, or the -robust.seed flag, or the time; the Report's line,
// which Check logs, names it. The same seed drives the same operations and
// faults on each worker, in the same order; how the workers' operations
// interleave is the scheduler's, so a history found wrong once may need a
// few runs with its seed to be found again.
//
// Check is bounded: Config.Ops operations (300 by default) within
// Config.Duration (20 seconds by default).
package robustness
