#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests/it/postgres.rs, on Debian's PostgreSQL binaries
# (/usr/lib/postgresql/*/bin, or PG_BIN):
#   cluster.sh start DIR PORT PYTHON OWNER_PID   initdb into DIR/data, listen on 127.0.0.1:PORT
#                                                 and a socket in DIR, password logins only over
#                                                 TCP (scram-sha-256); role `recite`, password
#                                                 `recite-test-password`; database `surveys`
#                                                 with tables versant_flat (the bundled Parquet
#                                                 file) and nhanes2 (NHANES II's CSV), loaded by
#                                                 PYTHON load.py and psql's \copy. Stopped when
#                                                 OWNER_PID (the test process) exits. Every
#                                                 statement is logged in DIR/server.log.
#   cluster.sh sql DIR PORT SQL                   runs SQL as the superuser, over the socket.
#   cluster.sh stop DIR                           stops it now (fast shutdown).
# As root, the server runs as `nobody` (PostgreSQL refuses root), and DIR is given to it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
[ -x "$bin/initdb" ] || { echo "cluster.sh: no PostgreSQL binaries (apt-get install postgresql)" >&2; exit 1; }
as() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
cmd="$1" dir="$2"
case "$cmd" in
  start)
    port="$3" python="$4" owner="$5"
    [ "$(id -u)" = 0 ] && chown nobody "$dir"
    printf 'postgres-test-superuser\n' > "$dir/pw"; [ "$(id -u)" = 0 ] && chown nobody "$dir/pw"
    as "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      --pwfile="$dir/pw" --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c log_statement=all" start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    # Stopped when the test process is gone, however it ends.
    ( while kill -0 "$owner" 2>/dev/null; do sleep 1; done
      as "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
      rm -rf "$dir" ) </dev/null >/dev/null 2>&1 &
    {
      echo "CREATE ROLE recite LOGIN PASSWORD 'recite-test-password';"
      echo "CREATE DATABASE surveys OWNER recite;"
      echo "\\c surveys"
      echo "SET ROLE recite;"
      "$python" "$here/load.py" "$root/datasets/versant/versant_flat.parquet" versant_flat "$dir"
      "$python" "$here/load.py" "$root/datasets/nhanes2/nhanes2.csv" nhanes2 "$dir"
    } > "$dir/load.sql"
    [ "$(id -u)" = 0 ] && chown nobody "$dir"/*.csv
    as "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres -f "$dir/load.sql" >/dev/null
    ;;
  sql)
    port="$3"
    as "$bin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d surveys -c "$4"
    ;;
  stop)
    as "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null
    ;;
  *) echo "cluster.sh: start, sql or stop" >&2; exit 2 ;;
esac
