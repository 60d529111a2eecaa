#!/usr/bin/env bash
# The approvals inbox in a real headless Chromium (Debian's package), driven
# from Go by chromedp in the nested module examples/inbox/browsertest, so the
# core's go.mod does not require chromedp. Installs what it runs: Chromium
# when it is missing, and staticcheck v0.8.2 (go install, from the module
# proxy; the version CI uses). SCREENSHOT=path also writes the inbox's
# screenshot there (the README's is examples/inbox/inbox.png); SCREENSHOTS=dir
# writes those of a quorum half-way and an approval with changes into dir
# (the README's are examples/inbox/quorum.png and changes.png).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off # each module on its own go.mod, as CI builds it; the repository's go.work is for work by hand
if ! command -v chromium >/dev/null; then
  echo "-- installing Debian's chromium"
  as_root=""; [ "$(id -u)" -ne 0 ] && as_root="sudo"
  $as_root apt-get update -q >/dev/null
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
echo "-- $(chromium --version 2>/dev/null)"
go install honnef.co/go/tools/cmd/staticcheck@v0.8.2 # quick once built: the build cache keeps it
gobin=$(go env GOBIN); [ -n "$gobin" ] || gobin=$(go env GOPATH | cut -d: -f1)/bin
staticcheck=$gobin/staticcheck
args=()
[ -n "${SCREENSHOT:-}" ] && args=(-screenshot "$(realpath "$SCREENSHOT")")
[ -n "${SCREENSHOTS:-}" ] && args+=(-screenshots "$(realpath "$SCREENSHOTS")")
[ ${#args[@]} -gt 0 ] && args=(-args "${args[@]}")
cd examples/inbox/browsertest
go mod tidy -diff
go vet ./...
"$staticcheck" ./...
go test -race -count=1 ./... "${args[@]}"
