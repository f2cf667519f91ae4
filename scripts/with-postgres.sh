#!/usr/bin/env bash
# Runs a command beside a private, throwaway PostgreSQL server: Debian's `postgresql` binaries, a new cluster in a
# temporary folder (initdb and pg_ctl run as the `postgres` user), listening on a free loopback port only, stopped
# and deleted when the command ends, however it ends.
#
#   scripts/with-postgres.sh COMMAND [ARGUMENT…]
#
# The command sees PUSHTRACE_TEST_POSTGRES, the URL of an empty database `pushtrace` owned by the role `pushtrace`
# (password `pushtrace`, md5/scram over TCP; trust on the private socket only), and PGBIN, the server's binaries.
# POSTGRES_VERSION picks the Debian major version (default: the newest installed); POSTGRES_SHARED_BUFFERS the
# server's shared_buffers (default 256MB, enough for the tests); POSTGRES_OPTIONS more `-c name=value` settings
# (a profile's `-c shared_preload_libraries=pg_stat_statements`). The command's exit status is the script's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

version=${POSTGRES_VERSION:-$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)}
bin=/usr/lib/postgresql/$version/bin
if [ -z "$version" ] || [ ! -x "$bin/initdb" ]; then
  echo "with-postgres: Debian's postgresql is not installed (make deps installs it)" >&2
  exit 1
fi
# initdb refuses to run as root: the cluster belongs to the postgres user, or to whoever runs this if not root.
if [ "$(id -u)" = 0 ]; then
  owner=postgres
  as_owner() { runuser -u postgres -- "$@"; }
else
  owner=$(id -un)
  as_owner() { "$@"; }
fi

folder=$(mktemp -d /tmp/pushtrace-postgres.XXXXXX)
chmod 700 "$folder"
chown "$owner" "$folder"
port=$(free_port)

stop() {
  [ ! -s "$folder/pgbouncer.pid" ] || kill "$(cat "$folder/pgbouncer.pid")" 2>/dev/null || true
  as_owner "$bin/pg_ctl" -D "$folder/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$folder"
}
trap stop EXIT

as_owner "$bin/initdb" -D "$folder/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
  --encoding=UTF8 --locale=C.UTF-8 >"$folder/initdb.log" 2>&1 \
  || { cat "$folder/initdb.log" >&2; exit 1; }
# TLS with a certificate for the name localhost (and not 127.0.0.1) signed by an authority made here
# (PUSHTRACE_TEST_POSTGRES_CA), and a second authority that signed nothing (PUSHTRACE_TEST_POSTGRES_OTHER_CA): the
# tests connect with each sslmode, and are refused for a wrong host name and an unknown authority.
tls() {
  openssl "$@" >>"$folder/openssl.log" 2>&1 || { cat "$folder/openssl.log" >&2; exit 1; }
}
key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
tls req -x509 $key -days 2 -subj "/CN=pushtrace test authority" -keyout "$folder/ca.key" -out "$folder/ca.crt"
tls req -x509 $key -days 2 -subj "/CN=another authority" -keyout "$folder/other-ca.key" -out "$folder/other-ca.crt"
tls req $key -subj "/CN=localhost" -keyout "$folder/server.key" -out "$folder/server.csr"
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$folder/server.ext"
tls x509 -req -days 2 -in "$folder/server.csr" -CA "$folder/ca.crt" -CAkey "$folder/ca.key" -CAcreateserial \
  -extfile "$folder/server.ext" -out "$folder/server.crt"
chmod 600 "$folder/server.key"
chmod 644 "$folder/server.crt" "$folder/ca.crt" "$folder/other-ca.crt"
chown "$owner" "$folder/server.key" "$folder/server.crt"
# A test server: loopback only, its socket in the private folder. fsync is on unless POSTGRES_OPTIONS turns it off
# (make test does): the bench and the crash tests measure a server as durable as a deployed one.
as_owner "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$folder -c max_connections=200 -c shared_buffers=${POSTGRES_SHARED_BUFFERS:-256MB} -c ssl=on -c ssl_cert_file=$folder/server.crt -c ssl_key_file=$folder/server.key ${POSTGRES_OPTIONS:-}" \
  start >/dev/null \
  || { cat "$folder/server.log" >&2; exit 1; }
as_owner "$bin/psql" -q -h "$folder" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
CREATE ROLE pushtrace LOGIN CREATEDB CREATEROLE PASSWORD 'pushtrace';
CREATE DATABASE pushtrace OWNER pushtrace;
SQL

# PgBouncer in transaction pooling in front of it, on a port of its own, speaking plain TCP to clients as it does
# by default (PUSHTRACE_TEST_PGBOUNCER, its database `pushtrace`; any other database name reaches the cluster's
# database of that name): the pooler docs/deploy.md describes, and a server that offers no TLS.
bouncer_port=$(free_port)
printf '"pushtrace" "pushtrace"\n' > "$folder/userlist.txt"
cat > "$folder/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $folder/userlist.txt
pool_mode = transaction
default_pool_size = 10
max_client_conn = 200
logfile = $folder/pgbouncer.log
pidfile = $folder/pgbouncer.pid
INI
chown "$owner" "$folder/userlist.txt" "$folder/pgbouncer.ini"
if command -v pgbouncer >/dev/null; then
  as_owner pgbouncer -d "$folder/pgbouncer.ini" || { cat "$folder/pgbouncer.log" >&2; exit 1; }
  export PUSHTRACE_TEST_PGBOUNCER="postgres://pushtrace:pushtrace@127.0.0.1:$bouncer_port/pushtrace"
fi

export PUSHTRACE_TEST_POSTGRES="postgres://pushtrace:pushtrace@127.0.0.1:$port/pushtrace"
export PGBIN=$bin PUSHTRACE_TEST_POSTGRES_DATA=$folder/data PUSHTRACE_TEST_POSTGRES_CA=$folder/ca.crt \
  PUSHTRACE_TEST_POSTGRES_OTHER_CA=$folder/other-ca.crt
echo "with-postgres: PostgreSQL $version on 127.0.0.1:$port (cluster in $folder, removed afterwards)" >&2
status=0
"$@" || status=$?
exit "$status"
