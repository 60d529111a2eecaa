#!/usr/bin/env bash
# Usage: bash scripts/release.sh VERSION   (e.g. v0.2.0)
# Sets VERSION in every go.mod's requirement on a published module of this
# repository (the modules are tagged together, from one commit) and prints the
# tags to push. No network is used once golang.org/x/mod is in the module cache.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bash scripts/release.sh VERSION" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
GOWORK=off go run -C "$root/scripts/release" . set "$root" "$1"
