#!/usr/bin/env bash
# Runs every check segkit has: formatting, vet, the unit and real-data
# tests (natively, with -race, and under GOOS=js with node), the interop
# module, the S3 remote's tests (tier/s3, against versitygw), the lake
# module's (the indexer, its catalog on SQLite and PostgreSQL), the WASM
# builds, a short burst of every fuzz target, and the browser end-to-end
# tests.
#
#   ./scripts/test.sh                 everything
#   FUZZTIME=30s ./scripts/test.sh    longer fuzzing per target
#   SKIP_FUZZ=1 ./scripts/test.sh     no fuzzing (the seed corpora still run)
#   SKIP_E2E=1 ./scripts/test.sh      no browser tests
#
# Under CI=true a missing prerequisite (node, chromium, ../shared/kafka-real)
# fails the run instead of being skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Go 1.27.3, the newest toolchain the module proxy serves here: 1.26.8's
# standard library has 10 reachable vulnerabilities (scripts/vulncheck.sh).
# The go command fetches it from the proxy on first use (76 MB).
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
FUZZTIME=${FUZZTIME:-4s}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

step() { printf '\n=== %s (%ss)\n' "$*" "$SECONDS"; }
count_files() { if [ -d "$1" ]; then ls "$1" | wc -l; else echo 0; fi; }
skipped=()
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then echo "missing $1 (required under CI=true)"; exit 1; fi
    echo "skipping: $1 not found"; skipped+=("$2 (no $1)"); return 1
  fi
}

step "gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.bin/*'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi

step "go vet"
go vet ./...
GOOS=js GOARCH=wasm go vet ./format/... ./compress/... ./record/... ./vfs/... ./index/... ./timeindex/... ./internal/indexfile/... ./segment/... ./kafkalog/... ./retention/... ./inspect/... ./finding/... ./verify/... ./compaction/... ./wasm/...

step "tools module (apicheck, vulncheck)"
(cd tools && go vet ./... && go test -count=1 ./...)

step "API compatibility (api/ baseline, golang.org/x/exp/apidiff)"
./scripts/apicheck.sh

step "go test ./... (includes the real-data tests)"
go test -count=1 ./...

step "go test -race (one writer, many readers)"
go test -count=1 -race -short ./vfs/... ./record/... ./index/... ./timeindex/... ./segment/... ./retention/... ./internal/viz/... ./internal/web/...
go test -count=1 -race -run 'TestOneWriterManyReaders|TestAppendReadRollReopen|TestTruncateAndFollower|TestOffsetForTimestamp|TestOpenLocksLogDir' ./kafkalog/
# Two writers, the library and the CLI, in every order: exactly one writes.
go test -count=1 -race -run 'TestTwoWritersOnePartition|TestConcurrentAppends|TestAppendLockedByAnotherProcess' ./cmd/segviz/

step "builds for js/wasm and wasip1/wasm"
GOOS=js GOARCH=wasm go build ./...
GOOS=wasip1 GOARCH=wasm go build ./...

step "the embedded WASM engine is current and reproducible (internal/web/wasmdist)"
# segviz embeds the engine (docs/visualiser.md); rebuilding it from these
# sources must give the bytes that are checked in.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  go generate ./internal/web/wasmdist
  if ! git diff --exit-code --stat -- internal/web/wasmdist; then
    echo "the embedded WASM engine differs from a rebuild of these sources: run go generate ./internal/web/wasmdist and commit it"
    exit 1
  fi
else
  echo "not a git checkout: the rebuild is not compared (TestEmbeddedIsCurrent checks the source hash)"
fi

if need node "the js/wasm tests"; then
  step "go test under GOOS=js GOARCH=wasm (node)"
  # The bit-flip campaigns over the real partitions run natively above;
  # under node they would take a minute more.
  GOOS=js GOARCH=wasm go test -count=1 -short -skip 'TestRealBitFlips' -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" \
    ./format/... ./compress/... ./record/... ./vfs/... ./index/... ./timeindex/... ./segment/... ./kafkalog/... ./retention/... ./wasm/...
fi

step "interop module (franz-go, sarama, kafka-go, afero)"
(cd interop && go vet ./... && go test -count=1 ./...)

step "tier/s3 module: vet and tests against Versity S3 Gateway (versitygw)"
# The S3 remote's tests need a real S3-compatible server. CI runs them
# against versitygw's posix backend, which scripts/versitygw.sh builds from
# the module proxy once per pinned version (~70 s cold on this 2-core
# machine; SeaweedFS's weed, the other server the tests take, ~600 s).
# Under CI=true a missing server fails the tests instead of skipping them.
# Locally: ./scripts/versitygw.sh install && (cd tier/s3 && go test ./...),
# or SEGKIT_S3_SERVER=weed after ./scripts/seaweedfs.sh install.
./scripts/versitygw.sh install >/dev/null
(cd tier/s3 && go vet ./... && go test -count=1 ./...)

step "lake module (the indexer): vet and tests, the catalog on SQLite and on PostgreSQL, DuckDB judging the statistics"
# A throwaway PostgreSQL server on 127.0.0.1 (scripts/postgres.sh, from
# Debian's postgresql, which .ci/run installs); without one the tests
# skip its store, except under CI=true, where that fails.
pgdir=""
if ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  pgdir=$(mktemp -d "${TMPDIR:-/tmp}/segkit-pg.XXXXXX")
  SEGKIT_POSTGRES_URL=$(./scripts/postgres.sh start "$pgdir")
  export SEGKIT_POSTGRES_URL
  trap './scripts/postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
elif [ "${CI:-}" = true ]; then
  echo "no PostgreSQL server (required under CI=true): apt-get install -y postgresql"; exit 1
else
  skipped+=("the lake catalog on PostgreSQL (no postgresql)")
fi
# DuckDB (the Python package from PyPI, pinned in scripts/duckdb.sh, a venv
# cached under ~/.cache/segkit) reads the rebuilt files and must agree with
# the catalog's statistics (TestDuckDBAgrees); under CI=true a missing one
# fails.
if command -v python3 >/dev/null 2>&1 && duckpy=$(./scripts/duckdb.sh python); then
  export SEGKIT_DUCKDB_PYTHON=$duckpy
elif [ "${CI:-}" = true ]; then
  echo "no DuckDB (required under CI=true): scripts/duckdb.sh python failed"; exit 1
else
  skipped+=("the DuckDB check of the lake's files (no python3 or pip)")
fi
(cd lake && go vet ./... && go test -count=1 ./...)
unset SEGKIT_DUCKDB_PYTHON
if [ -n "$pgdir" ]; then
  ./scripts/postgres.sh stop "$pgdir"; rm -rf "$pgdir"; trap - EXIT
  unset SEGKIT_POSTGRES_URL
fi

if need java "the Kafka oracle tests" && need mvn "the Kafka oracle tests"; then
  step "oracle module: Kafka 4.3.1 as the judge (dump, recovery, retention, indexes, a broker)"
  # The first use builds oracle/ with Maven (Kafka's jars into ~/.m2, the cache).
  oracle/kafka help >/dev/null
  (cd oracle && go vet ./... && go test -count=1 -timeout 20m ./...)
fi

if [ -z "${SKIP_FUZZ:-}" ]; then
  step "fuzz every target for $FUZZTIME"
  # One go test -list over every package (not one per package), then two
  # targets at a time, each on one core: a target's build and its
  # baseline-coverage pass, about as long as its burst, overlap the
  # other's fuzzing instead of leaving a core idle.
  targets=$(go test -list '^Fuzz' ./... | awk '/^Fuzz/ { t[n++] = $1; next } /^(ok|\?) / { for (i = 0; i < n; i++) print $2, t[i]; n = 0 }')
  fuzzlogs=$(mktemp -d "${TMPDIR:-/tmp}/segkit-fuzz.XXXXXX")
  # fuzz_one PKG TARGET: the burst, with one retry of the engine's
  # context-deadline hiccup; prints one line, or the log and fails.
  fuzz_one() {
    local pkg=$1 target=$2 dir log before after execs rate msgs attempt
    dir=$(go list -f '{{.Dir}}' "$pkg")
    log="$fuzzlogs/$target.${pkg//\//_}.log"
    for attempt in 1 2; do
      before=$(count_files "$dir/testdata/fuzz/$target")
      if go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" -parallel=1 "$pkg" >"$log" 2>&1; then
        # A run whose time went on the baseline-coverage pass prints
        # no execs line: grep finds nothing, which must not stop the script.
        execs=$(grep -Eo 'execs: [0-9]+' "$log" | tail -n 1 || true)
        rate=$(grep -Eo '\([0-9]+/sec\)' "$log" | tr -dc '0-9\n' | sort -n | tail -n 1 || true)
        execs=${execs:-"execs: 0 (baseline coverage only)"}
        printf '%-60s %s (%s/sec)\n' "$pkg $target" "$execs" "$rate"
        return 0
      fi
      after=$(count_files "$dir/testdata/fuzz/$target")
      # A failure that wrote no crasher and says only "context deadline
      # exceeded" is the fuzzing engine's own hiccup at the end of
      # -fuzztime (go.dev/issue/75804): retry once, and if it says that
      # again with no crasher, the target ran and found nothing.
      msgs=$(grep -A1 -- '--- FAIL:' "$log" | grep -v -- '--- FAIL:' | grep -v '^--$' | sed 's/^[[:space:]]*//' | sort -u || true)
      if [ "$after" -eq "$before" ] && [ "$msgs" = "context deadline exceeded" ]; then
        if [ "$attempt" = 2 ]; then
          printf '%-60s %s\n' "$pkg $target" "no crasher (the engine's context-deadline hiccup twice, go.dev/issue/75804)"
        fi
        continue
      fi
      if [ "$after" -gt "$before" ] || [ "$attempt" = 2 ]; then
        cat "$log"
        echo "fuzz target $target failed; replay: go test -run='$target' $pkg (crasher under $dir/testdata/fuzz/$target)"
        return 1
      fi
    done
  }
  failed=0
  running=0
  while read -r pkg target; do
    if [ "$running" -ge 2 ]; then
      wait -n || failed=1
      running=$((running - 1))
    fi
    [ "$failed" = 0 ] || break
    fuzz_one "$pkg" "$target" &
    running=$((running + 1))
  done <<<"$targets"
  while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
  done
  rm -rf "$fuzzlogs"
  if [ "$failed" != 0 ]; then exit 1; fi
fi

if [ -z "${SKIP_E2E:-}" ] && [ -d e2e ]; then
  # The kill -9 campaign (30 runs over append and recover --in-place) and
  # append's peak-RSS bound need the segviz binary, not a browser.
  step "kill -9 campaign and append's memory bound (e2e module)"
  (cd e2e && go vet ./... && go test -count=1 -run 'TestKill9|TestAppendPeakRSS' ./...)
  if need chromium "the browser tests"; then
    step "browser end-to-end tests (e2e module, headless Chromium)"
    (cd e2e && go test -count=1 -skip 'TestKill9|TestAppendPeakRSS' ./...)
  fi
fi

step "govulncheck of every module, offline database from golang.org/x/vulndb"
./scripts/vulncheck.sh

if [ ${#skipped[@]} -gt 0 ]; then
  step "checks passed, but skipped: $(IFS=';'; echo "${skipped[*]}")"
  exit 0
fi
step "all checks passed"
