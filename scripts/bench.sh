#!/usr/bin/env bash
# Runs toolsafe's benchmarks against the alternatives and prints the
# figures that matter as ratios measured in one run on this machine: the
# medians of interleaved rounds (every contender once per round, so a noisy
# machine slows them all alike), and, where valgrind is installed,
# instructions per call counted by callgrind, which repeat exactly. It
# installs what it runs when missing: Debian's valgrind and redis-server
# (a goal whose tool is missing would go unchecked).
#
#   bash scripts/bench.sh [rounds]     (rounds: default 6)
#
# Each figure is printed beside its goal, and "met" or "MISSED"; the script
# exits 1 when a goal is missed (or its figure is missing), after printing
# them all.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off # each module on its own go.mod, as CI builds it; the repository's go.work is for work by hand
# bench is a module of its own (it requires the alternatives it measures,
# which the core's go.mod does not): every go test below runs in it.
rounds=${1:-6}
as_root=""; [ "$(id -u)" -ne 0 ] && as_root="sudo"
apt_install() { # Debian packages, updating the lists once when they are stale
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 || {
    $as_root apt-get update -q >/dev/null
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
  }
}
command -v valgrind >/dev/null || { echo "-- installing Debian's valgrind"; apt_install valgrind; }
command -v redis-server >/dev/null || { echo "-- installing Debian's redis-server"; apt_install redis-server; }
out=$(mktemp)
redis_pid=
cleanup() {
  rm -f "$out" "$out.bin" "$out.mcp" "$out.cg" "$out.cg.err" "$out.redis"
  if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

echo "== $rounds interleaved rounds of go test -C bench -bench . ($(go version | cut -d' ' -f3), $(nproc) CPUs, $(date -u +%Y-%m-%d))"
for i in $(seq "$rounds"); do
  go test -C bench -run '^$' -bench 'Success|Retries|Spans|Parallel' -benchmem -count 1 . >>"$out"
done
for i in $(seq "$rounds"); do
  go test -C bench -run '^$' -bench 'Inflight|HardTimeout' -benchmem -count 1 . >>"$out"
done

benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
echo
go run "$benchstat" -col /.name "$out" 2>/dev/null || go run "$benchstat" "$out" 2>/dev/null || true

# The awk functions both tables share: line prints a figure beside its goal
# ("<= N", or "-" for none; any other goal is printed, not judged), judged
# on the figure as printed, and counts the goals missed; a figure that is ""
# (a benchmark that did not run) misses its goal. Its END, last in each
# program, exits 3 when one was missed.
goals='
  function line(what, x, goal,   limit, verdict) {
    if (x == "") {
      printf "%-64s %8s   (goal %s)   NO FIGURE\n", what, "-", goal
      if (goal != "-") missed++
      return
    }
    x = sprintf("%.2f", x) + 0
    verdict = ""
    if (goal ~ /^<= [0-9.]+$/) {
      limit = substr(goal, 4) + 0
      if (x <= limit) verdict = "   met"; else { verdict = "   MISSED"; missed++ }
    }
    printf "%-64s %8.2f   (goal %s)%s\n", what, x, goal, verdict
  }
  function div(a, b) { return a == "" || b == "" || b + 0 == 0 ? "" : a / b }
  function minus(a, b) { return a == "" || b == "" ? "" : a - b }
  END { exit missed ? 3 : 0 }
'
missed=0
judged() { # the status of a goals program: 0 all met, 3 some missed, else an error
  case $1 in
  0) ;;
  3) missed=1 ;;
  *) echo "the goals' awk program failed ($1)" >&2; exit "$1" ;;
  esac
}
finish() {
  echo
  if [ "$missed" -ne 0 ]; then
    echo "== some goal was MISSED (above)"
    exit 1
  fi
  echo "== every goal checked was met"
  exit 0
}

echo
echo "== ratios (medians of the rounds) and their goals"
rc=0
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
  function m(name, unit) { return ((name, unit) in v) ? median(v[name, unit]) : "" }
  END {
    s = "BenchmarkSuccess/"
    line("success: toolsafe / failsafe-go retry + its timeout, wall", div(m(s "toolsafe", "ns/op"), m(s "failsafe", "ns/op")), "<= 1.0")
    line("success: toolsafe / failsafe-go retry + a hand-written hard timeout, wall", div(m(s "toolsafe", "ns/op"), m(s "failsafe-hard", "ns/op")), "-")
    line("success: toolsafe / a hand-rolled loop + a hard timeout, wall", div(m(s "toolsafe", "ns/op"), m(s "handrolled-hard", "ns/op")), "-")
    line("success: allocations per call, toolsafe", m(s "toolsafe", "allocs/op"), "<= 4")
    line("success: allocations per call, failsafe-go", m(s "failsafe", "allocs/op"), "-")
    line("success: (traced - untraced) / two bare spans, wall", div(minus(m(s "toolsafe-traced", "ns/op"), m(s "toolsafe", "ns/op")), m("BenchmarkSpans/two", "ns/op")), "- (the goal is in instructions, below)")
    r = "BenchmarkRetries/"
    line("3 failures then success: toolsafe / failsafe-go, wall", div(m(r "toolsafe", "ns/op"), m(r "failsafe", "ns/op")), "-")
    line("3 failures then success: allocations, toolsafe / failsafe-go", div(m(r "toolsafe", "allocs/op"), m(r "failsafe", "allocs/op")), "<= 1.0")
    line("3 failures then success: allocations per call, toolsafe", m(r "toolsafe", "allocs/op"), "-")
    line("3 failures then success: allocations per call, failsafe-go", m(r "failsafe", "allocs/op"), "-")
    line("memory per in-flight call, toolsafe / failsafe-go", div(m("BenchmarkInflight/toolsafe", "bytes/call"), m("BenchmarkInflight/failsafe", "bytes/call")), "<= 1.0")
    line("memory per in-flight call, toolsafe, bytes", m("BenchmarkInflight/toolsafe", "bytes/call"), "-")
    line("memory per in-flight call, failsafe-go, bytes", m("BenchmarkInflight/failsafe", "bytes/call"), "-")
    h = "BenchmarkHardTimeout/"
    # Judged against the hand-written hard timeout of the same run: an
    # absolute millisecond is the noise floor of this machine, and a busy
    # machine moves both alike.
    line("hard-timeout lateness p99, toolsafe / a hand-written hard timeout", div(m(h "toolsafe", "p99-ms"), m(h "handrolled", "p99-ms")), "<= 1.1")
    line("hard-timeout lateness past the timeout, 50 callers, p99, ms", m(h "toolsafe", "p99-ms"), "-")
    line("hard-timeout lateness past the timeout, 50 callers, p50, ms", m(h "toolsafe", "p50-ms"), "-")
    line("the same for a hand-written hard timeout, p99, ms", m(h "handrolled", "p99-ms"), "-")
    line("the same for a hand-written hard timeout, p50, ms", m(h "handrolled", "p50-ms"), "-")
  }
'"$goals" "$out" || rc=$?
judged "$rc"

echo
echo "== instructions per call (callgrind; the difference of two runs, so start-up cancels out)"
go test -C bench -c -o "$out.bin" .
per_call() { # benchmark name → instructions per call, of $bin (the bench test binary) over $calls
  local counts=() c try n lo hi
  read -r lo hi <<<"${calls:-2000 12000}"
  for n in $lo $hi; do
    # Go's asynchronous preemption signals now and then make a run under
    # valgrind die before it reports: turned off, and a failed run retried.
    for try in 1 2 3; do
      GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out.cg" "${bin:-$out.bin}" -test.run='^$' \
        -test.bench="^Benchmark$1\$" -test.benchtime=${n}x -test.count=1 -test.cpu=1 >/dev/null 2>"$out.cg.err" || true
      c=$(grep -o 'Collected : [0-9]*' "$out.cg.err" | awk '{print $3}')
      [ -n "$c" ] && break
    done
    [ -n "$c" ] || { echo "callgrind failed on $1:" >&2; tail -5 "$out.cg.err" >&2; exit 1; }
    counts+=("$c")
  done
  echo $(( (counts[1] - counts[0]) / (hi - lo) ))
}
ts=$(per_call Success/toolsafe)
fs=$(per_call Success/failsafe)
fh=$(per_call Success/failsafe-hard)
tr=$(per_call Success/toolsafe-traced)
sp=$(per_call Spans/two)
me=$(per_call Success/toolsafe-metered)
spm=$(per_call Spans/two-metered)
rts=$(per_call Retries/toolsafe)
rfs=$(per_call Retries/failsafe)
printf "success: toolsafe %d, failsafe-go %d, failsafe-go + hard timeout %d, toolsafe traced %d, two bare spans %d\n" "$ts" "$fs" "$fh" "$tr" "$sp"
printf "success with metrics: toolsafe traced and metered %d, two bare spans and four bare measurements %d\n" "$me" "$spm"
printf "3 failures then success: toolsafe %d, failsafe-go %d\n" "$rts" "$rfs"
# The MCP call is measured in mcptools' module: the SDK's CallTool over the
# in-memory transport, and the same tool through mcptools and toolsafe.
go test -C mcptools -c -o "$out.mcp" .
ms=$(bin="$out.mcp" calls="200 1200" per_call Call/sdk)
mt=$(bin="$out.mcp" calls="200 1200" per_call Call/toolsafe)
printf "an MCP call: the SDK's CallTool %d, through toolsafe %d\n" "$ms" "$mt"
rc=0
awk -v ts="$ts" -v fs="$fs" -v fh="$fh" -v tr="$tr" -v sp="$sp" -v me="$me" -v spm="$spm" -v rts="$rts" -v rfs="$rfs" -v ms="$ms" -v mt="$mt" 'BEGIN {
  line("success: toolsafe / failsafe-go retry + its timeout, instructions", div(ts, fs), "<= 0.5")
  line("success: toolsafe / failsafe-go + a hard timeout, instructions", div(ts, fh), "-")
  line("3 failures then success: toolsafe / failsafe-go, instructions", div(rts, rfs), "<= 1.5")
  line("success: (traced - untraced) / two bare spans, instructions", div(minus(tr, ts), sp), "<= 1.05")
  line("success: (traced and metered - untraced) / two spans and four measurements, instructions", div(minus(me, ts), spm), "<= 1.05")
  line("an MCP call: toolsafe / the SDK'"'"'s raw CallTool, instructions", div(mt, ms), "<= 1.05")
}'"$goals" </dev/null || rc=$?
judged "$rc"

# Redis round trips per failed attempt, counted by a go-redis hook in
# redisstore's test, against a redis-server of our own.
echo
echo "== Redis round trips per failed attempt (redisstore TestRoundTripsPerFailedAttempt)"
port=$(( 10000 + RANDOM % 22000 )) # below the ephemeral ports (32768 up)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
redis_pid=$!
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
REDIS_ADDR=127.0.0.1:$port go test -C redisstore -count 1 -run '^TestRoundTripsPerFailedAttempt$' -v . >"$out.redis" 2>&1 || true
grep 'round trips for' "$out.redis" | sed 's/^ *roundtrips_test.go:[0-9]*: /  /'
rc=0
awk '
  /round trips for/ {
    for (i = 1; i <= NF; i++) { if ($i == "round") n = $(i-1); if ($i == "failed") a = $(i-1); if ($(i+1) == "of" && $(i+2) == "them") r = $i }
    if ($0 ~ / 0 of them retries/) breaker = div(n, a); else budget = div(n - r, a)
  }
  END {
    line("Redis: round trips per failed attempt, a shared breaker", breaker, "<= 1")
    line("Redis: the same with a shared retry budget, less its script per retry", budget, "<= 1")
  }
'"$goals" "$out.redis" || rc=$?
judged "$rc"
finish
