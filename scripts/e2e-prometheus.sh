#!/usr/bin/env bash
# toolsafe's operator files end to end: Debian's Prometheus, on 127.0.0.1,
# scrapes the operators demo (examples/operators) through the OpenTelemetry
# Prometheus exporter with deploy/prometheus/toolsafe-rules.yml loaded,
# while the demo's storm takes its upstream down for 3 minutes and brings
# it back. examples/operators/e2e reads Prometheus's HTTP API until the
# breaker gauge reads open, the alert ToolsafeCircuitBreakerOpen fires, and
# it clears, then takes a screenshot of Prometheus's graph in headless
# Chromium. Before that, promtool checks and unit-tests the rules, and the
# demo module's own tests run (on a redis-server of their own). Installs
# what it runs: prometheus, chromium and redis-server (Debian's) when they
# are missing, and staticcheck v0.8.2 (go install, the version CI uses).
# SCREENSHOT=path also keeps the screenshot there (the README's is
# examples/operators/storm.png). About 6 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off # each module on its own go.mod, as CI builds it; the repository's go.work is for work by hand
as_root=""; [ "$(id -u)" -ne 0 ] && as_root="sudo"
install() { # install Debian packages, refreshing stale package lists once if needed
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 || {
    $as_root apt-get update -q >/dev/null
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null
  }
}
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  echo "-- installing Debian's prometheus"
  install prometheus
fi
if ! command -v chromium >/dev/null; then
  echo "-- installing Debian's chromium"
  install chromium fonts-dejavu-core
fi
if ! command -v redis-server >/dev/null; then
  echo "-- installing Debian's redis-server"
  install redis-server
fi
go install honnef.co/go/tools/cmd/staticcheck@v0.8.2 # quick once built: the build cache keeps it
gobin=$(go env GOBIN); [ -n "$gobin" ] || gobin=$(go env GOPATH | cut -d: -f1)/bin
staticcheck=$gobin/staticcheck
echo "-- $(prometheus --version 2>&1 | head -1)"

echo "-- promtool: the rules parse, and their alerts pass their unit tests"
promtool check rules deploy/prometheus/toolsafe-rules.yml
(cd deploy/prometheus && promtool test rules toolsafe-rules.test.yml)

echo "-- examples/operators (own module: the Prometheus exporter and chromedp stay out of the core's go.mod)"
(cd examples/operators && go mod tidy -diff && go vet ./... && "$staticcheck" ./... && go test -race -count=1 ./...)

free_port() { # a port of 127.0.0.1 nothing answers on
  for _ in $(seq 50); do
    p=$((10000 + RANDOM % 22000)) # below the ephemeral ports (32768 up), which clients take at any moment
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  echo "no free port" >&2; exit 1
}
work=$(mktemp -d)
demo_pid=""; prom_pid=""
cleanup() {
  for pid in $demo_pid $prom_pid; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
demo_port=$(free_port)
prom_port=$(free_port)
go build -C examples/operators -o "$work/operators" .
go build -C examples/operators -o "$work/e2e" ./e2e

cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 2s
  evaluation_interval: 2s
rule_files:
  - $PWD/deploy/prometheus/toolsafe-rules.yml
scrape_configs:
  - job_name: agents
    static_configs:
      - targets: ['127.0.0.1:$demo_port']
YAML
promtool check config "$work/prometheus.yml" >/dev/null

"$work/operators" -listen "127.0.0.1:$demo_port" -storm 20s,3m,90s >"$work/demo.log" 2>&1 &
demo_pid=$!
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
prom_pid=$!
echo "-- the demo on 127.0.0.1:$demo_port, Prometheus on 127.0.0.1:$prom_port; the storm: up 20s, down 3m, up 90s"
shot="$work/storm.png"
if ! "$work/e2e" -prometheus "http://127.0.0.1:$prom_port" -screenshot "$shot" -timeout 8m; then
  echo "-- the demo's log:"; cat "$work/demo.log"
  echo "-- Prometheus's log (last lines):"; tail -20 "$work/prometheus.log"
  exit 1
fi
if [ -n "${SCREENSHOT:-}" ]; then cp "$shot" "$SCREENSHOT"; echo "-- kept in $SCREENSHOT"; fi
echo "ok: the breaker alert fired through the storm and cleared after it"
