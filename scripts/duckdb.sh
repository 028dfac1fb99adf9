#!/usr/bin/env bash
# DuckDB (the Python package from PyPI, pinned) for the lake module's
# statistics check (lake/duckdb_test.go, TestDuckDBAgrees).
#
#   scripts/duckdb.sh python   create the venv once (cached) and print its
#                              python's path
#
# The venv is ${SEGKIT_CACHE:-$HOME/.cache/segkit}/duckdb-venv-$DUCKDB_VERSION,
# made with `python3 -m venv` ($PYTHON overrides python3) and
# `pip install duckdb==$DUCKDB_VERSION`. A venv whose duckdb imports at the
# pinned version is reused as it is; a broken one is made again. Quiet:
# only the path on stdout; pip's output only when it fails.
#
#   export SEGKIT_DUCKDB_PYTHON=$(scripts/duckdb.sh python)
#   (cd lake && go test -run TestDuckDBAgrees ./...)
set -euo pipefail
DUCKDB_VERSION=2.0.1
cmd=${1:-}
if [ "$cmd" != python ]; then
  echo "usage: scripts/duckdb.sh python" >&2
  exit 2
fi
cache=${SEGKIT_CACHE:-$HOME/.cache/segkit}
venv=$cache/duckdb-venv-$DUCKDB_VERSION
py=$venv/bin/python
check() {
  [ -x "$py" ] && [ "$("$py" -c 'import duckdb; print(duckdb.__version__)' 2>/dev/null)" = "$DUCKDB_VERSION" ]
}
if check; then
  echo "$py"
  exit 0
fi
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  echo "scripts/duckdb.sh: no $python (Python 3 with the venv module is needed)" >&2
  exit 1
fi
mkdir -p "$cache"
log=$(mktemp "$cache/duckdb-venv.log.XXXXXX")
trap 'rm -f "$log"' EXIT
rm -rf "$venv"
if ! "$python" -m venv "$venv" >"$log" 2>&1; then
  cat "$log" >&2
  rm -rf "$venv"
  echo "scripts/duckdb.sh: $python -m venv failed (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "duckdb==$DUCKDB_VERSION" >"$log" 2>&1; then
  cat "$log" >&2
  rm -rf "$venv"
  echo "scripts/duckdb.sh: pip install duckdb==$DUCKDB_VERSION failed (see above)" >&2
  exit 1
fi
if ! check; then
  echo "scripts/duckdb.sh: $venv: duckdb $DUCKDB_VERSION does not import" >&2
  exit 1
fi
echo "$py"
