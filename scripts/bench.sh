#!/usr/bin/env bash
# Runs toolsafe's benchmarks against the alternatives and prints the
# figures that matter as ratios measured in one run on this machine: the
# medians of interleaved rounds (every contender once per round, so a noisy
# machine slows them all alike), and, where valgrind is installed,
# instructions per call counted by callgrind, which repeat exactly.
#
#   bash scripts/bench.sh [rounds]     (rounds: default 6)
set -euo pipefail
cd "$(dirname "$0")/.."
# bench is a module of its own (it requires the alternatives it measures,
# which the core's go.mod does not): every go test below runs in it.
rounds=${1:-6}
out=$(mktemp)
trap 'rm -f "$out" "$out.bin" "$out.cg"' EXIT

echo "== $rounds interleaved rounds of go test -C bench -bench . ($(go version | cut -d' ' -f3), $(nproc) CPUs, $(date -u +%Y-%m-%d))"
for i in $(seq "$rounds"); do
  go test -C bench -run '^$' -bench 'Success|Retries|Spans|Parallel' -benchmem -count 1 . >>"$out"
done
go test -C bench -run '^$' -bench 'Inflight|HardTimeout' -benchmem -count 1 . >>"$out"

benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
echo
go run "$benchstat" -col /.name "$out" 2>/dev/null || go run "$benchstat" "$out" 2>/dev/null || true

echo
echo "== ratios (medians of the rounds) and their goals"
awk '
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    for (i = 3; i < NF; i++) v[name, $(i+1)] = v[name, $(i+1)] " " $i
  }
  function m(name, unit) { return median(v[name, unit]) }
  function line(what, x, goal) { printf "%-64s %8.2f   (goal %s)\n", what, x, goal }
  END {
    s = "BenchmarkSuccess/"
    line("success: toolsafe / failsafe-go retry + its timeout, wall", m(s "toolsafe", "ns/op") / m(s "failsafe", "ns/op"), "<= 1.3")
    line("success: toolsafe / failsafe-go retry + a hand-written hard timeout", m(s "toolsafe", "ns/op") / m(s "failsafe-hard", "ns/op"), "<= 0.85")
    line("success: toolsafe / a hand-rolled loop + a hard timeout", m(s "toolsafe", "ns/op") / m(s "handrolled-hard", "ns/op"), "-")
    line("success: allocations per call, toolsafe", m(s "toolsafe", "allocs/op"), "<= 12")
    line("success: allocations per call, failsafe-go", m(s "failsafe", "allocs/op"), "-")
    line("success: (traced - untraced) / two bare spans, wall", (m(s "toolsafe-traced", "ns/op") - m(s "toolsafe", "ns/op")) / m("BenchmarkSpans/two", "ns/op"), "<= 1.1 in instructions")
    r = "BenchmarkRetries/"
    line("3 failures then success: toolsafe / failsafe-go, wall", m(r "toolsafe", "ns/op") / m(r "failsafe", "ns/op"), "-")
    line("memory per in-flight call, toolsafe, bytes", m("BenchmarkInflight/toolsafe", "bytes/call"), "<= 8192")
    line("memory per in-flight call, failsafe-go, bytes", m("BenchmarkInflight/failsafe", "bytes/call"), "-")
    line("hard-timeout lateness past the timeout, 50 callers, p99, ms", m("BenchmarkHardTimeout", "p99-ms"), "<= 2")
  }
' "$out"

if ! command -v valgrind >/dev/null; then
  echo
  echo "(valgrind is not installed: apt-get install -y valgrind for instruction counts)"
  exit 0
fi
echo
echo "== instructions per call (callgrind; the difference of two runs, so start-up cancels out)"
go test -C bench -c -o "$out.bin" .
per_call() { # benchmark name → instructions per call
  local counts=() c try
  for n in 2000 12000; do
    # Go's asynchronous preemption signals now and then make a run under
    # valgrind die before it reports: turned off, and a failed run retried.
    for try in 1 2 3; do
      GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out.cg" "$out.bin" -test.run='^$' \
        -test.bench="^Benchmark$1\$" -test.benchtime=${n}x -test.count=1 -test.cpu=1 >/dev/null 2>"$out.cg.err" || true
      c=$(grep -o 'Collected : [0-9]*' "$out.cg.err" | awk '{print $3}')
      [ -n "$c" ] && break
    done
    [ -n "$c" ] || { echo "callgrind failed on $1:" >&2; tail -5 "$out.cg.err" >&2; exit 1; }
    counts+=("$c")
  done
  echo $(( (counts[1] - counts[0]) / 10000 ))
}
ts=$(per_call Success/toolsafe)
fs=$(per_call Success/failsafe)
fh=$(per_call Success/failsafe-hard)
tr=$(per_call Success/toolsafe-traced)
sp=$(per_call Spans/two)
printf "toolsafe %d, failsafe-go %d, failsafe-go + hard timeout %d, toolsafe traced %d, two bare spans %d\n" "$ts" "$fs" "$fh" "$tr" "$sp"
awk -v ts="$ts" -v fs="$fs" -v fh="$fh" -v tr="$tr" -v sp="$sp" 'BEGIN {
  printf "%-64s %8.2f   (goal <= 0.9)\n", "success: toolsafe / failsafe-go retry + its timeout, instructions", ts / fs
  printf "%-64s %8.2f   (goal -)\n", "success: toolsafe / failsafe-go + a hard timeout, instructions", ts / fh
  printf "%-64s %8.2f   (goal <= 1.1)\n", "success: (traced - untraced) / two bare spans, instructions", (tr - ts) / sp
}'
