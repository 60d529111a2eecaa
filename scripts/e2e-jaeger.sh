#!/usr/bin/env bash
# End to end: the billing example's traces in a real Jaeger v2.
#
# Builds Jaeger v2 from the Go module proxy (tools/jaeger, a module of its own
# so the library's go.mod stays small; about 6 minutes the first time on 2
# cores, then cached), starts it with its in-memory storage with every port
# on 127.0.0.1, runs the billing example against it over OTLP/HTTP, asks
# Jaeger's HTTP API for the traces and checks the span tree
# (scripts/jaegercheck). Jaeger is stopped on the way out, whatever happens:
# SIGTERM, then SIGKILL after a grace period.
#
#   bash scripts/e2e-jaeger.sh
#
# Environment (all optional):
#   E2E_PROGRAM        the program to run (default ./examples/billing)
#   E2E_SERVICE        its service.name (default toolsafe-billing)
#   E2E_CHECK_ARGS     jaegercheck's checks (default: 4 fetch_invoice calls,
#                      outcomes ok, tool-error and tool-failed, 1 retried)
#   JAEGER_STOP_GRACE  seconds between SIGTERM and SIGKILL (default 10)
#   TOOLSAFE_CACHE     where the Jaeger binary is kept (default ~/.cache/toolsafe)
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off # each module on its own go.mod, as CI builds it; the repository's go.work is for work by hand

program=${E2E_PROGRAM:-./examples/billing}
service=${E2E_SERVICE:-toolsafe-billing}
check_args=${E2E_CHECK_ARGS:--tool fetch_invoice -calls 4 -want ok,tool-error,tool-failed -retried 1}
grace=${JAEGER_STOP_GRACE:-10}
cache=${TOOLSAFE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolsafe}
host=127.0.0.1
otlp_http=4318
query_http=16686

run_dir=$(mktemp -d)
jaeger_log=$run_dir/jaeger.log
jaeger_pid=
ok=

stop_jaeger() {
  [ -n "$jaeger_pid" ] || return 0
  if kill -0 "$jaeger_pid" 2>/dev/null; then
    echo "== stopping Jaeger (pid $jaeger_pid)"
    kill -TERM "$jaeger_pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
      kill -0 "$jaeger_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$jaeger_pid" 2>/dev/null; then
      echo "Jaeger ignored SIGTERM for ${grace}s: sending SIGKILL"
      kill -KILL "$jaeger_pid" 2>/dev/null || true
    fi
  fi
  wait "$jaeger_pid" 2>/dev/null || true
  jaeger_pid=
}

cleanup() {
  stop_jaeger
  if [ -z "$ok" ] && [ -s "$jaeger_log" ]; then
    echo "== the last lines of Jaeger's log"
    tail -n 30 "$jaeger_log"
  fi
  rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_open() { (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null; }

# 1. Jaeger, built once per version of tools/jaeger.
hash=$(cat tools/jaeger/go.mod tools/jaeger/go.sum | sha256sum | cut -c1-16)
jaeger=$cache/jaeger-$hash
if [ ! -x "$jaeger" ]; then
  echo "== building Jaeger v2 from tools/jaeger (about 6 minutes the first time on 2 cores)"
  mkdir -p "$cache"
  (cd tools/jaeger && go build -buildvcs=false -o "$jaeger.$$" github.com/jaegertracing/jaeger/cmd/jaeger)
  mv "$jaeger.$$" "$jaeger"
fi

# 2. Start it on loopback only: JAEGER_LISTEN_HOST binds the receivers and
# the other extensions of its all-in-one configuration; the query extension
# (UI and HTTP API, gRPC API) binds every interface unless told otherwise.
for port in 4317 $otlp_http 16685 $query_http; do
  if port_open "$port"; then
    echo "port $port on $host is already in use: stop what listens there (another Jaeger?) and try again" >&2
    exit 1
  fi
done
echo "== starting Jaeger ($jaeger)"
JAEGER_LISTEN_HOST=$host "$jaeger" \
  --set=extensions.jaeger_query.http.endpoint=$host:$query_http \
  --set=extensions.jaeger_query.grpc.endpoint=$host:16685 \
  >"$jaeger_log" 2>&1 &
jaeger_pid=$!
for ((i = 0; ; i++)); do
  if ! kill -0 "$jaeger_pid" 2>/dev/null; then
    echo "Jaeger exited before it was ready" >&2
    exit 1
  fi
  if port_open $otlp_http && port_open $query_http; then
    break
  fi
  if ((i >= 600)); then
    echo "Jaeger was not ready after 60s" >&2
    exit 1
  fi
  sleep 0.1
done
echo "Jaeger is ready: OTLP/HTTP on http://$host:$otlp_http, UI and API on http://$host:$query_http"

# 3. The program, exporting its spans to Jaeger. The scripted model, not a
# real one, so the calls are the same on every run.
echo "== running $program"
env -u OTEL_SERVICE_NAME -u OTEL_RESOURCE_ATTRIBUTES -u OTEL_EXPORTER_OTLP_TRACES_ENDPOINT \
  OPENAI_API_KEY= OTEL_EXPORTER_OTLP_ENDPOINT=http://$host:$otlp_http \
  go run "$program"

# 4. The span tree, as Jaeger's HTTP API gives it.
echo "== checking the traces of $service in Jaeger"
# shellcheck disable=SC2086 # check_args is a list of flags
go run ./scripts/jaegercheck -query "http://$host:$query_http" -service "$service" $check_args

ok=1
echo "e2e-jaeger: passed"
