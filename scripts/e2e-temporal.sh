#!/usr/bin/env bash
# End to end: a durable agent run on a real Temporal dev server.
#
# Builds the Temporal CLI (temporalio/cli v1.5.1) from the Go module proxy
# with go install (about 5 minutes of CPU and a 252 MB binary the first
# time; then cached, by version, as the Jaeger build is), starts
# `temporal server start-dev` with every port on 127.0.0.1, and runs
# examples/temporal against it with -decide=person: its worker process is
# killed while the approved refund is in flight and a new one takes over.
# This script is the person: with curl, through the approvals inbox's HTTP
# interface, it lists the requests, opens the refund's page and posts the
# approval with the page's token. Then it checks the demo's report (the
# worker killed, the upstream's counts, the refund applied once under one
# key, the audit naming the approver) and the workflow's status. The server
# and the demo are stopped on the way out, whatever happens: SIGTERM, then
# SIGKILL after a grace period.
#
#   bash scripts/e2e-temporal.sh        # the test
#   bash scripts/e2e-temporal.sh -cli   # only build (or find) the CLI; print its path
#
# Environment (all optional):
#   TEMPORAL_STOP_GRACE  seconds between SIGTERM and SIGKILL (default 10)
#   TOOLSAFE_CACHE       where the CLI is kept (default ~/.cache/toolsafe)
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off # each module on its own go.mod, as CI builds it; the repository's go.work is for work by hand

version=v1.5.1
grace=${TEMPORAL_STOP_GRACE:-10}
cache=${TOOLSAFE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolsafe}
host=127.0.0.1
approver=bob

# 1. The CLI, built once per version.
cli=$cache/temporal-$version
if [ ! -x "$cli" ]; then
  echo "== building the Temporal CLI $version from the Go module proxy (about 5 minutes the first time)" >&2
  mkdir -p "$cache"
  gobin=$(mktemp -d "$cache/build.XXXXXX")
  (cd "$gobin" && GOWORK=off GOBIN="$gobin" go install "github.com/temporalio/cli/cmd/temporal@$version") >&2
  mv "$gobin/temporal" "$cli"
  rmdir "$gobin"
fi
if [ "${1:-}" = "-cli" ]; then
  echo "$cli"
  exit 0
fi
if ! command -v curl >/dev/null; then # the person's client: install what the script runs
  echo "-- installing Debian's curl"
  as_root=""; [ "$(id -u)" -ne 0 ] && as_root="sudo"
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q curl >/dev/null 2>&1 || {
    $as_root apt-get update -q >/dev/null
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q curl >/dev/null
  }
fi

run_dir=$(mktemp -d)
server_log=$run_dir/server.log
demo_log=$run_dir/demo.log
server_pid=
demo_pid=
ok=

stop() { # pid name: SIGTERM, then SIGKILL after the grace period
  local pid=$1 name=$2
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "$name ignored SIGTERM for ${grace}s: sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  stop "$demo_pid" "the demo"
  stop "$server_pid" "the Temporal server"
  if [ -z "$ok" ]; then
    for f in "$demo_log" "$server_log"; do
      if [ -s "$f" ]; then
        echo "== the last lines of $(basename "$f")"
        tail -n 40 "$f"
      fi
    done
  fi
  rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_open() { (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null; }
free_port() {
  for _ in $(seq 50); do
    local p=$((10000 + RANDOM % 22000)) # below the ephemeral ports (32768 up), which clients take at any moment
    if ! port_open "$p"; then echo "$p"; return 0; fi
  done
  echo "no free port on $host" >&2
  return 1
}

# 2. The dev server, every port on loopback (--ip binds the gRPC, HTTP and
# metrics ports; --headless: no UI).
port=$(free_port)
echo "== starting the Temporal dev server ($cli) on $host:$port"
"$cli" server start-dev --ip "$host" --port "$port" --headless --log-level warn >"$server_log" 2>&1 &
server_pid=$!
for ((i = 0; ; i++)); do
  kill -0 "$server_pid" 2>/dev/null || { echo "the Temporal server exited before it was ready" >&2; exit 1; }
  if "$cli" operator cluster health --address "$host:$port" >/dev/null 2>&1; then break; fi
  ((i < 600)) || { echo "the Temporal server was not ready after 60s" >&2; exit 1; }
  sleep 0.1
done
echo "the Temporal server is ready"

# 3. The demo, waiting for a person to decide in its inbox.
inbox_port=$(free_port)
inbox=http://$host:$inbox_port
echo "== building and running examples/temporal (-decide=person, the inbox at $inbox/)"
go build -C examples/temporal -o "$run_dir/demo" .
OPENAI_API_KEY= TEMPORAL_CLI= TEMPORAL_ADDRESS=$host:$port "$run_dir/demo" -decide=person -inbox "$host:$inbox_port" >"$demo_log" 2>&1 &
demo_pid=$!

# 4. The person, through the inbox's HTTP interface.
echo "== deciding the refund in the inbox, as $approver, with curl"
id=
for ((i = 0; i < 600; i++)); do
  kill -0 "$demo_pid" 2>/dev/null || { echo "the demo exited before anything waited for a decision" >&2; exit 1; }
  list=$(curl -fsS -H "X-Approver: $approver" "$inbox/requests.json" 2>/dev/null || true)
  # Only the demo's workflows are listed (its store selects its task queue),
  # and only its refund waits for a decision.
  if grep -qF '"tool":"refund"' <<<"$list"; then
    id=$(printf '%s' "$list" | grep -o '"id":"[^"]*"' | head -n 1 | sed 's/^"id":"\(.*\)"$/\1/')
    break
  fi
  sleep 0.1
done
[ -n "$id" ] || { echo "the inbox listed no refund after 60s: $list" >&2; exit 1; }
echo "the inbox lists the refund: $id"
page=$(curl -fsS -G -H "X-Approver: $approver" --data-urlencode "id=$id" "$inbox/request")
# What the person approves is what the call runs with, bound to its canonical form.
grep -qF 'class="canonical">{&#34;amount_eur&#34;:25,&#34;order&#34;:&#34;A-1001&#34;}</pre>' <<<"$page" ||
  { echo "the refund's page does not show its input: $page" >&2; exit 1; }
token=$(printf '%s' "$page" | sed -n 's/.*name="token" value="\([^"]*\)".*/\1/p' | head -n 1)
[ -n "$token" ] || { echo "the refund's page has no decision form" >&2; exit 1; }
status=$(curl -sS -o "$run_dir/decide.html" -w '%{http_code}' -H "X-Approver: $approver" \
  --data-urlencode "id=$id" --data-urlencode "token=$token" --data-urlencode "decision=approve" \
  --data-urlencode "comment=approved by the e2e script" "$inbox/decide")
[ "$status" = 303 ] || { echo "the inbox answered the decision with $status:" >&2; cat "$run_dir/decide.html" >&2; exit 1; }
echo "approved (303 See Other)"

# 5. The run's end, as the demo reports it and the server has it.
rc=0
wait "$demo_pid" || rc=$?
demo_pid=
[ "$rc" = 0 ] || { echo "the demo failed (exit $rc)" >&2; exit 1; }
cat "$demo_log"
expect() { grep -qF -- "$1" "$demo_log" || { echo "the demo's report lacks: $1" >&2; exit 1; }; }
expect "killing worker 1"
expect "worker 2 started"
expect "status: error (tool-error)   attempts: 1"
expect "status: ok   attempts: 2   approved by $approver"
expect '"refund":"R-1","status":"applied"'
expect "upstream: GET /invoices/INV-1001 2 requests; POST /refunds 2 requests with 1 idempotency key(s); refunds applied: 1"
expect "audit: $approver approved refund {\"order\":\"A-1001\",\"amount_eur\":25}"
wid=$(sed -n 's/^workflow \([^ ]*\) started:.*/\1/p' "$demo_log")
"$cli" workflow describe --address "$host:$port" --workflow-id "$wid" >"$run_dir/describe.txt"
grep -q 'Status *COMPLETED' "$run_dir/describe.txt" || { echo "the workflow $wid did not complete:" >&2; cat "$run_dir/describe.txt" >&2; exit 1; }
echo "the workflow $wid completed"

ok=1
echo "e2e-temporal: passed"
