#!/usr/bin/env bash
# The release check: every published module (the root, mcptools, redisstore, and
# any library module added later) can be fetched alone at the version that the
# nested modules' go.mod files require, as a user's build fetches it, ignoring
# their replace directives. It serves module zips of the working tree from a
# file-system module proxy and, in an empty module, gets each module alone and
# builds a program importing its packages; then gets all of them together in
# one empty module and builds one program importing every package of every
# published module. It also checks that every published module requires the
# core's OpenTelemetry version. See scripts/release/.
# RELEASECHECK_VERBOSE=1 prints the time of each go command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
GOWORK=off go run -C "$root/scripts/release" . check "$root"
