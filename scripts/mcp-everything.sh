#!/usr/bin/env bash
# Installs the TypeScript-SDK MCP servers that mcptools' tests run against,
# @modelcontextprotocol/server-everything and server-filesystem (its tools
# annotated read-only, idempotent or destructive), at the versions pinned in
# mcptools/testdata/everything/package.json (their dependencies as
# package-lock.json pins them), into that folder's node_modules. Installs
# Debian's Node first when there is none. .ci/run calls it; so can you.
set -euo pipefail
cd "$(dirname "$0")/../mcptools/testdata/everything"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "-- installing Debian's nodejs and npm"
  as_root=""; [ "$(id -u)" -ne 0 ] && as_root="sudo"
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null
fi
echo "-- node $(node --version); npm ci in $(pwd)"
npm ci --no-audit --no-fund --loglevel=error
