#!/usr/bin/env bash
# A throwaway PostgreSQL server for the lake module's catalog tests
# (lake/postgres_test.go, TestProcessesKillAndPause/postgres), from
# Debian's postgresql package (.ci/run installs it).
#
#   scripts/postgres.sh start DIR   initdb DIR (once) and start a server on
#                                   127.0.0.1:${PGPORT:-55432}, trusting local
#                                   connections (it is a test server, listening
#                                   on loopback only); print its URL
#   scripts/postgres.sh stop DIR    stop it
#
# initdb and postgres refuse to run as root: as root, the server runs as
# the postgres user the package creates, and DIR is given to it.
set -euo pipefail
port=${PGPORT:-55432}
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: scripts/postgres.sh start|stop DIR" >&2
  exit 2
fi
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/pg_ctl" ]; then
  echo "no PostgreSQL server: install Debian's postgresql (apt-get install -y postgresql)" >&2
  exit 1
fi
as() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi
}
case "$cmd" in
start)
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as "'$bindir/initdb' -D '$dir/data' -A trust -U lake >'$dir/initdb.log' 2>&1"
  fi
  as "'$bindir/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c fsync=off\" start >/dev/null"
  echo "postgres://lake@127.0.0.1:$port/postgres?sslmode=disable"
  ;;
stop)
  as "'$bindir/pg_ctl' -D '$dir/data' -m fast stop >/dev/null" || true
  ;;
*)
  echo "usage: scripts/postgres.sh start|stop DIR" >&2
  exit 2
  ;;
esac
