#!/usr/bin/env bash
# Runs every check segkit has: formatting, vet, the unit and real-data
# tests (natively, with -race, and under GOOS=js with node), the interop
# module, the WASM builds, and a short burst of every fuzz target.
#
#   ./scripts/test.sh            everything
#   FUZZTIME=30s ./scripts/test.sh   longer fuzzing per target
#   SKIP_FUZZ=1 ./scripts/test.sh    no fuzzing (the seed corpora still run)
#
# Under CI=true a missing prerequisite (node, ../shared/kafka-real) fails
# the run instead of being skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
FUZZTIME=${FUZZTIME:-4s}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

step() { printf '\n=== %s\n' "$*"; }
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then echo "missing $1 (required under CI=true)"; exit 1; fi
    echo "skipping: $1 not found"; return 1
  fi
}

step "gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.bin/*'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi

step "go vet"
go vet ./...

step "go test ./... (includes the real-data tests)"
go test -count=1 ./...

step "go test -race (concurrency claims)"
go test -count=1 -race ./vfs/... ./record/...

step "builds for js/wasm and wasip1/wasm"
GOOS=js GOARCH=wasm go build ./...
GOOS=wasip1 GOARCH=wasm go build ./...

if need node; then
  step "go test under GOOS=js GOARCH=wasm (node)"
  GOOS=js GOARCH=wasm go test -count=1 -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./format/... ./compress/... ./record/... ./vfs/...
fi

step "interop module (franz-go, sarama, kafka-go, afero)"
(cd interop && go vet ./... && go test -count=1 ./...)

if [ -z "${SKIP_FUZZ:-}" ]; then
  step "fuzz every target for $FUZZTIME"
  for pkg in $(go list ./...); do
    dir=$(go list -f '{{.Dir}}' "$pkg")
    for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
      echo "--- $pkg $target"
      go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$pkg" >"$root/.fuzz.log" 2>&1 || {
        cat "$root/.fuzz.log"; echo "fuzz target $target failed; the crasher is under $dir/testdata/fuzz/$target"; exit 1; }
      tail -n 3 "$root/.fuzz.log" | grep -E 'elapsed|^ok' | tail -n 1 || true
    done
  done
  rm -f "$root/.fuzz.log"
fi

step "all checks passed"
