#!/usr/bin/env bash
# Runs `go test -race ./...` in every module of the repository, with the
# real parts their tests need, as CI does: server-everything from npm for
# mcptools (and Node from Debian when missing), a redis-server for
# redisstore (Debian's, started on a free port of 127.0.0.1 unless
# REDIS_ADDR names one), Debian's Chromium for the inbox's browser test, and
# the Temporal CLI for temporaltools and examples/temporal (built once from the
# Go module proxy by scripts/e2e-temporal.sh unless TEMPORAL_CLI names one).
#
#   bash scripts/test-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off # each module on its own go.mod, as CI builds it; the repository's go.work is for work by hand
as_root=""; [ "$(id -u)" -ne 0 ] && as_root="sudo"
apt_install() { # Debian packages, updating the lists once when they are stale
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 || {
    $as_root apt-get update -q >/dev/null
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
  }
}

bash scripts/mcp-everything.sh

redis_pid=""
if [ -z "${REDIS_ADDR:-}" ]; then
  command -v redis-server >/dev/null || apt_install redis-server
  for _ in $(seq 50); do # a free port of 127.0.0.1: nothing answers on it
    p=$((10000 + RANDOM % 22000)) # below the ephemeral ports (32768 up), which clients take at any moment
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then REDIS_ADDR=127.0.0.1:$p; break; fi
  done
  redis-server --port "${REDIS_ADDR##*:}" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --logfile "" >/dev/null 2>&1 &
  redis_pid=$!
  trap 'kill $redis_pid 2>/dev/null || true' EXIT
  for _ in $(seq 100); do redis-cli -p "${REDIS_ADDR##*:}" ping >/dev/null 2>&1 && break; sleep 0.05; done
fi
export REDIS_ADDR
TEMPORAL_CLI=${TEMPORAL_CLI:-$(bash scripts/e2e-temporal.sh -cli)}
export TEMPORAL_CLI

failed=()
for m in $(git ls-files '*go.mod' | xargs -n1 dirname | sort); do
  case $m in
  tools/*) continue ;; # builds Jaeger only: no packages to test
  examples/inbox/browsertest) bash scripts/e2e-browser.sh || failed+=("$m"); continue ;;
  esac
  echo "== $m"
  (cd "$m" && go test -race ./...) || failed+=("$m")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED in: ${failed[*]}"
  exit 1
fi
echo "every module passed"
