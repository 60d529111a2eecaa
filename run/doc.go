// Package run keeps agent runs exactly once across pauses: With scopes a
// run on a Ledger (MemoryLedger in the process, or a shared store such as
// redisstore's for a fleet); every call of the run records its intent, as
// an Entry, before its first attempt and its outcome when it ends, and a
// run resumed after an approval (Resume) is answered from the ledger for
// the calls that already completed, instead of calling them again. An
// identical call made while the first is in flight waits for it and shares
// its outcome. The ledger's protocol is a small sequential machine, stated
// in Ledger's doc. Limits are the loop guard's caps on the calls of one run
// (toolsafe.WithCallLimits).
package run
