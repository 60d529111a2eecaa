#!/usr/bin/env bash
# Runs toolsafe's benchmarks against the alternatives and prints a benchstat
# table and the ratios that matter. Usage: bash scripts/bench.sh [count]
# (count: runs of each benchmark, default 6; benchstat wants at least 6 for
# confidence intervals).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-6}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "== go test -bench . -count $count ./bench  ($(go version | cut -d' ' -f3), $(nproc) CPUs)"
go test -run '^$' -bench . -benchmem -count "$count" ./bench | tee "$out" >/dev/null

benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
echo
go run "$benchstat" -col /.name "$out" 2>/dev/null || go run "$benchstat" "$out"

# Ratios from the medians of ns/op.
echo
echo "== ratios (medians of ns/op)"
awk '
  /^Benchmark/ {
    split($1, p, "/"); group = p[1]; sub(/-[0-9]+$/, "", p[2]); name = p[2]
    for (i = 3; i <= NF; i++) if ($(i+1) == "ns/op") { v[group "/" name] = v[group "/" name] " " $i }
  }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function ratio(g, x, y) {
    if ((g "/" x) in v && (g "/" y) in v)
      printf "%-18s %-16s / %-11s = %5.2fx\n", g, x, y, median(v[g "/" x]) / median(v[g "/" y])
  }
  END {
    for (g in grp) {}
    split("BenchmarkSuccess BenchmarkRetries", gs, " ")
    for (k = 1; k <= 2; k++) {
      ratio(gs[k], "toolsafe", "failsafe")
      ratio(gs[k], "toolsafe-traced", "toolsafe")
      ratio(gs[k], "toolsafe", "handrolled")
      ratio(gs[k], "toolsafe-no-timeout", "failsafe")
    }
  }
' "$out"
