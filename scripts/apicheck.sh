#!/usr/bin/env bash
# Guards the exported API of the core module (github.com/segkit/segkit):
# compares it with the baseline in api/ using golang.org/x/exp/apidiff.
#
#   scripts/apicheck.sh          check: exit 1 on an incompatible change, or if
#                                api/segkit.txt is out of date with the code
#   scripts/apicheck.sh -write   rewrite api/ from the code (commit it with the change)
#   scripts/apicheck.sh -v       also list the packages checked and skipped
#
# The tool is tools/apicheck, a tool of the tools module (tools/go.mod). Offline once the
# modules are in the module cache; about a second on a warm build cache.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--buildvcs=false}
exec go -C tools tool apicheck -root .. "$@"
