#!/usr/bin/env bash
# Versity S3 Gateway (versitygw), the S3-compatible server the tier/s3
# tests run against in CI (scripts/seaweedfs.sh's weed is the other one).
#
#   scripts/versitygw.sh install       build versitygw once per version; print its path
#   scripts/versitygw.sh path          print the path if it is built, else exit 1
#   scripts/versitygw.sh serve DIR     run an S3 server on 127.0.0.1:${S3_PORT:-7070}
#                                      with DIR as its data (prints the keys)
#
# Why versitygw: it is one Go binary (module github.com/versity/versitygw)
# whose posix backend stores each bucket as a directory and each object as
# a file under it, with no master, volume server or filer to start. It
# builds from the module proxy in about 70 s cold on a 2-core machine,
# where SeaweedFS's weed takes about 600 s, so CI can afford to build it
# and run the whole suite.
#
# Unlike weed, `go install …/cmd/versitygw@version` works (its go.mod has
# no replace directive), so GOBIN puts the binary straight into
# ${SEGKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/segkit}/versitygw/<version>/versitygw.
# A binary already there is reused: the cache is keyed by the version,
# which is pinned (not @latest) so that every run tests the same server.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

version=v1.8.0
cache=${SEGKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/segkit}/versitygw/$version
bin=$cache/versitygw

install() {
  if [ -x "$bin" ]; then echo "$bin"; return; fi
  local start=$SECONDS tmp
  echo "building versitygw $version (once per version, cached in $cache)" >&2
  mkdir -p "$cache"
  # Into a directory of its own first, then renamed: an interrupted build
  # never leaves a half-written binary where `path` would find it.
  tmp=$(mktemp -d "$cache/build.XXXXXX")
  # -trimpath and -s -w: smaller, and the same binary wherever it is built.
  # Outside the repository (cd /): the install must not see segkit's
  # go.mod or go.work.
  (cd / && GOBIN="$tmp" GOWORK=off go install -trimpath -ldflags='-s -w' "github.com/versity/versitygw/cmd/versitygw@$version")
  mv "$tmp/versitygw" "$bin"
  rmdir "$tmp"
  echo "built versitygw in $((SECONDS - start))s: $(du -h "$bin" | cut -f1)" >&2
  echo "$bin"
}

case "${1:-}" in
  install) install ;;
  path)
    if [ -x "$bin" ]; then echo "$bin"; else echo "versitygw $version is not built: run scripts/versitygw.sh install" >&2; exit 1; fi ;;
  serve)
    [ $# -eq 2 ] || { echo "usage: $0 serve DIR" >&2; exit 2; }
    install >/dev/null
    # The posix backend keeps object metadata in extended attributes
    # (user.*), which DIR's file system must support (ext4, xfs, btrfs,
    # and tmpfs since Linux 6.6 do).
    mkdir -p "$2"
    port=${S3_PORT:-7070}
    echo "S3 on http://127.0.0.1:$port, access key segkit, secret segkit-secret" >&2
    # The root identity's keys are the only credentials; --quiet drops the
    # per-request log. The tests run the same flags.
    exec "$bin" --access segkit --secret segkit-secret --port "127.0.0.1:$port" --quiet posix "$2" ;;
  *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
