#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the bench and for trying `--store` by hand, the same as
# the tests' (Sources/JobRunnerTesting/ThrowawayPostgres.swift): initdb into a temporary
# directory, a unix socket there and no TCP, fsync=off, stopped with `-m immediate`.
#
#   bench/pg-cluster.sh start          prints the directory, then the URL of database `jobrunner`
#   bench/pg-cluster.sh stop DIR       stops that cluster and removes DIR
#
# Never touches a cluster it did not start. As root, the server runs as the `postgres` user.
set -euo pipefail
BIN=${JOBRUNNER_PG_BIN:-/usr/lib/postgresql/15/bin}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "${1:-}" in
start)
    [ -x "$BIN/initdb" ] || { echo "PostgreSQL 15 is not in $BIN (apt-get install postgresql-15)" >&2; exit 1; }
    dir=$(mktemp -d "${TMPDIR:-/tmp}/jobrunner-pg-XXXXXX")
    chmod 700 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    (cd "$dir" && as_pg "$BIN/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 --locale=C >/dev/null)
    (cd "$dir" && as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 \
        -o "-c listen_addresses='' -k $dir -p 5432 -c fsync=off -c full_page_writes=off -c max_connections=200" start >/dev/null)
    "$BIN/psql" -X -q -h "$dir" -U postgres -d postgres -c "CREATE DATABASE jobrunner"
    echo "$dir"
    echo "postgres://postgres@/jobrunner?host=$dir"
    ;;
stop)
    dir=${2:?usage: pg-cluster.sh stop DIR}
    [ -f "$dir/data/PG_VERSION" ] || { echo "$dir holds no cluster of ours" >&2; exit 1; }
    (cd "$dir" && as_pg "$BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null) || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: bench/pg-cluster.sh start | stop DIR" >&2; exit 2 ;;
esac
