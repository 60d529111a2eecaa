#!/usr/bin/env bash
# govulncheck on every published module (the root, mcptools, redisstore,
# adktools, einotools and any library module added later: every go.mod
# outside examples/, tools/, scripts/ and bench/, as scripts/release counts
# them), built and run with the Go that the README says to build binaries
# with. It fails when any vulnerability is reachable from a module's code.
#
# vuln.go.dev cannot be reached from here, so the database is built from the
# golang.org/x/vulndb module (its data/osv files, indexed by its own
# cmd/indexdb) at VULNDB_VERSION and passed to govulncheck with -db file://.
# The database is kept in TOOLSAFE_CACHE; about 80 s to build the first time,
# then each module takes 15-60 s. Everything comes from the Go module proxy.
#
#   bash scripts/vulncheck.sh
#
# Environment (all optional):
#   VULNCHECK_GO    the Go toolchain (default go1.27.3, the README's); set it to
#                   "local" to see what the installed Go's standard library has
#   VULNDB_VERSION  the golang.org/x/vulndb version (default: the one pinned
#                   below; "latest" for the newest served)
#   TOOLSAFE_CACHE  where the database is kept (default ~/.cache/toolsafe)
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off # each module on its own go.mod, as CI builds it; the repository's go.work is for work by hand

toolchain=${VULNCHECK_GO:-go1.27.3}
vulndb=${VULNDB_VERSION:-v0.0.0-20261105234957-e22db6528018}
govulncheck=golang.org/x/vuln/cmd/govulncheck@v1.9.0
cache=${TOOLSAFE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolsafe}

if [ "$vulndb" = latest ]; then
  vulndb=$(go list -m -f '{{.Version}}' golang.org/x/vulndb@latest)
fi
db=$cache/vulndb-$vulndb
if [ ! -f "$db/index/db.json" ]; then
  echo "-- building the vulnerability database from golang.org/x/vulndb@$vulndb"
  src=$(go mod download -json "golang.org/x/vulndb@$vulndb" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src/data/osv" ] || { echo "golang.org/x/vulndb@$vulndb has no data/osv" >&2; exit 1; }
  rm -rf "$db.$$"
  mkdir -p "$cache"
  go run "golang.org/x/vulndb/cmd/indexdb@$vulndb" -vulns "$src/data/osv" -out "$db.$$"
  rm -rf "$db"
  mv "$db.$$" "$db"
fi
echo "-- database golang.org/x/vulndb@$vulndb ($(find "$db/ID" -name '*.json' | wc -l) entries); $(GOTOOLCHAIN=$toolchain go version)"

failed=()
for m in $(git ls-files '*go.mod' | xargs -n1 dirname | sort); do
  case $m in
  examples | examples/* | tools | tools/* | scripts | scripts/* | bench | bench/*) continue ;;
  esac
  echo "== $m"
  # govulncheck type-checks with the go/types of the Go it is built with,
  # so it is built with the toolchain it checks.
  (cd "$m" && GOTOOLCHAIN=$toolchain go run "$govulncheck" -db "file://$db" ./...) || failed+=("$m")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "vulnerabilities reachable in: ${failed[*]} (with $toolchain)"
  exit 1
fi
echo "no vulnerability reachable in any published module (with $toolchain)"
