#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and benchmarks (issue 25): Debian's
# postgresql package, initdb'd in a directory of its own, listening on 127.0.0.1:$port
# with trust authentication, so no system service or password is involved.
#   bash scripts/pg-cluster.sh start [dir] [port]   prints the URL to export as PLACARD_TEST_DATABASE_URL
#   bash scripts/pg-cluster.sh stop [dir]
set -euo pipefail
cmd=${1:-start}
dir=${2:-/tmp/placard-pg}
port=${3:-55432}
bin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
[ -x "$bin/initdb" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
# PostgreSQL refuses to run as root: the cluster belongs to the postgres user then.
as=()
if [ "$(id -u)" = 0 ]; then as=(runuser -u postgres --); fi
case "$cmd" in
  start)
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" = 0 ] && chown postgres "$dir"
      # C collation and UTF-8: text sorts by bytes, as SQLite's BINARY does.
      "${as[@]}" "$bin/initdb" -D "$dir" -U placard --auth=trust --locale=C --encoding=UTF8 >/dev/null
      cat >>"$dir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 400
shared_buffers = 256MB
fsync = on
CONF
    fi
    if ! "${as[@]}" "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      "${as[@]}" "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w start >/dev/null
    fi
    echo "postgres://placard@127.0.0.1:$port/postgres"
    ;;
  stop)
    "${as[@]}" "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  *) echo "usage: $0 start|stop [dir] [port]" >&2; exit 2 ;;
esac
