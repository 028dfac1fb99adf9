#!/usr/bin/env bash
# SeaweedFS's weed, the S3-compatible server the tier/s3 tests run against.
#
#   scripts/seaweedfs.sh install       build weed once per version; print its path
#   scripts/seaweedfs.sh path          print the path if it is built, else exit 1
#   scripts/seaweedfs.sh serve DIR     run an S3 server on 127.0.0.1:${S3_PORT:-8333}
#                                      with DIR as its data (prints the keys)
#
# weed comes from the Go module proxy (module github.com/seaweedfs/seaweedfs)
# and is built from source. `go install …/weed@version` is refused: the
# module's go.mod has a replace directive. So the script downloads the
# module into the module cache and builds ./weed there as the main module,
# into ${SEGKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/segkit}/seaweedfs/<version>/weed.
# A binary already there is reused: the cache is keyed by the version.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

version=v0.0.0-20261109003541-7506e5f91cd6
cache=${SEGKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/segkit}/seaweedfs/$version
bin=$cache/weed

install() {
  if [ -x "$bin" ]; then echo "$bin"; return; fi
  local start=$SECONDS dir
  echo "building SeaweedFS weed $version (once per version, cached in $cache)" >&2
  dir=$(go mod download -json "github.com/seaweedfs/seaweedfs@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [ -z "$dir" ]; then echo "go mod download of seaweedfs@$version gave no directory" >&2; exit 1; fi
  mkdir -p "$cache"
  # -trimpath and -s -w: smaller, and the same binary wherever it is built.
  (cd "$dir" && go build -trimpath -ldflags='-s -w' -o "$bin.tmp" ./weed)
  mv "$bin.tmp" "$bin"
  echo "built weed in $((SECONDS - start))s: $(du -h "$bin" | cut -f1)" >&2
  echo "$bin"
}

case "${1:-}" in
  install) install ;;
  path)
    if [ -x "$bin" ]; then echo "$bin"; else echo "weed $version is not built: run scripts/seaweedfs.sh install" >&2; exit 1; fi ;;
  serve)
    [ $# -eq 2 ] || { echo "usage: $0 serve DIR" >&2; exit 2; }
    install >/dev/null
    mkdir -p "$2"
    cat >"$2/s3.json" <<'EOF'
{"identities": [{"name": "segkit", "credentials": [{"accessKey": "segkit", "secretKey": "segkit-secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
    port=${S3_PORT:-8333}
    echo "S3 on http://127.0.0.1:$port, access key segkit, secret segkit-secret" >&2
    # mini: master, volume server, filer and S3 in one process, the
    # lightest mode with an S3 API; its extras (WebDAV, admin UI, Iceberg
    # and Lance catalogs, telemetry) off. The tests run the same flags.
    mkdir -p "$2/data"
    exec "$bin" mini -dir="$2/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.config="$2/s3.json" -s3.port="$port" \
      -admin.ui=false -admin.port.legacy=0 -webdav=false -s3.port.iceberg=0 -s3.port.lance=0 \
      -master.telemetry=false -master.volumeSizeLimitMB=64 ;;
  *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
