#!/bin/sh
# The entrypoint of the Postgres image scripts/install-podman.sh builds for
# the compose tests from Debian's PostgreSQL: what the official image's
# entrypoint does for compose.postgres.yml, and no more. On an empty data
# directory it makes a cluster whose superuser is POSTGRES_USER with
# POSTGRES_PASSWORD (password auth over TCP, trust over the container's
# own socket, as the official image), and the database POSTGRES_DB; then
# it runs the server as the postgres user.
set -eu
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  as_postgres "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    as_postgres "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    as_postgres "$bin/psql" -v ON_ERROR_STOP=1 -U "$user" -d postgres -q \
      -c "CREATE DATABASE \"$db\" OWNER \"$user\""
    as_postgres "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" -c listen_addresses='*'
