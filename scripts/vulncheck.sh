#!/usr/bin/env bash
# Scans every module of the repository with govulncheck, offline: the
# vulnerability database is built from the golang.org/x/vulndb module (its
# OSV files, from the Go module proxy or the module cache) by tools/vulncheck
# and cached in ${XDG_CACHE_HOME:-$HOME/.cache}/segkit-vulndb/<version>/.
# Exits 1 if a module calls a vulnerable symbol (a reachable vulnerability).
#
#   scripts/vulncheck.sh             the modules' non-test code
#   scripts/vulncheck.sh -test       test files too
#   scripts/vulncheck.sh -v          also list vulnerabilities that are only imported or required
#   scripts/vulncheck.sh -rebuild    rebuild the cached database
#   scripts/vulncheck.sh -db         only build the database and print its directory
#   GOTOOLCHAIN=go1.27.3 scripts/vulncheck.sh   check that Go's standard library
#
# The Go on PATH (after GOTOOLCHAIN) is the standard library checked.
# govulncheck is tools/go.mod's tool (golang.org/x/vuln v1.9.0); the vulndb
# version is tools/vulncheck's defaultVersion (-version to override).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export GOFLAGS=${GOFLAGS:--buildvcs=false}

# Every module but test data: ., interop, oracle, e2e, tools, and any new one.
modules=(.)
while IFS= read -r dir; do
  modules+=("${dir#./}")
done < <(find . -mindepth 2 -name go.mod -not -path './.git/*' -not -path '*/testdata/*' -not -path '*/node_modules/*' -printf '%h\n' | sort)

db_only=false
for a in "$@"; do [ "$a" = -db ] && db_only=true; done
if $db_only; then
  exec go -C tools tool vulncheck "$@"
fi
exec go -C tools tool vulncheck -root "$root" "$@" "${modules[@]}"
