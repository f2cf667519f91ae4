# The helpers the scripts share: `. "$(dirname "$0")/lib.sh"` (or `. scripts/lib.sh` from the repository root).
# Nothing here runs on its own.

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Epoch milliseconds now.
now_ms() {
  python3 -c 'import time; print(int(time.time() * 1000))'
}

# Waits until BASE_URL/healthz answers 200: `wait_healthy URL [TRIES] [PAUSE] [CURL_OPTION…]` (default 100 tries,
# 0.1 s apart). Returns 1 if it never did.
wait_healthy() {
  local url=$1 tries=${2:-100} pause=${3:-0.1}
  shift $(($# < 3 ? $# : 3))
  for _ in $(seq 1 "$tries"); do
    curl -sf "$@" "$url/healthz" >/dev/null 2>&1 && return 0
    sleep "$pause"
  done
  return 1
}

# Stops a child of the calling shell: SIGTERM, then its exit status, or 137 if it was still running SECONDS later
# (default 60; it is then killed with SIGKILL): `stop_within PID [SECONDS]`. A test that stops a server never waits
# for ever on one that hangs.
stop_within() {
  local pid=$1 seconds=${2:-60} status=0 watchdog
  kill -TERM "$pid" 2>/dev/null || true
  ( sleep "$seconds"; kill -9 "$pid" 2>/dev/null ) &
  watchdog=$!
  wait "$pid" || status=$?
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  return "$status"
}

# A unit file's KEY= value (the last one): `unit_value FILE KEY`.
unit_value() {
  sed -n "s/^$2=//p" "$1" | tail -n 1
}

# Runs a systemd unit's service as systemd would, in place of the calling shell: call it in the background,
# `run_unit FILE [ROOT] &`, so that $! is the server's process and SIGTERM reaches it. ROOT is a chroot the unit is
# installed in (FILE is read from outside it). The StateDirectory is made first, owned by the User; then, in the
# WorkingDirectory with the EnvironmentFile and the UMask, the ExecCondition runs (its failure skips the start, as
# systemd skips it: exit status 3) and then ExecStart, each as the User (setpriv: no session and no watching
# parent). ${VAR} in the commands is the environment's, as systemd expands it.
run_unit() {
  local unit=$1 root=${2:-} environment
  local -a inside=()
  [ -z "$root" ] || inside=(chroot "$root")
  environment=$(unit_value "$unit" EnvironmentFile)
  exec "${inside[@]}" /bin/sh -c '
    set -e
    user=$1 directory=$2 environment=$3 mask=$4 state=$5 mode=$6 condition=$7 command=$8
    [ -z "$state" ] || install -d -o "$user" -g "$user" -m "${mode:-0755}" "/var/lib/$state"
    cd "$directory"
    umask "$mask"
    set -a; [ ! -f "$environment" ] || . "$environment"; set +a
    if [ -n "$condition" ] && ! eval "setpriv --reuid=\"\$user\" --regid=\"\$user\" --init-groups -- $condition"; then
      echo "run_unit: ExecCondition=$condition failed: the start is skipped, as systemd skips it" >&2
      exit 3
    fi
    eval "exec setpriv --reuid=\"\$user\" --regid=\"\$user\" --init-groups -- $command"' sh \
    "$(unit_value "$unit" User)" "$(unit_value "$unit" WorkingDirectory)" "${environment#-}" \
    "$(unit_value "$unit" UMask)" "$(unit_value "$unit" StateDirectory)" "$(unit_value "$unit" StateDirectoryMode)" \
    "$(unit_value "$unit" ExecCondition)" "$(unit_value "$unit" ExecStart)"
}

# deploy/nginx.conf as shipped but for its ports and certificate paths, run by Debian's nginx with a self-signed
# certificate (WORK/fullchain.pem, for localhost and 127.0.0.1) in front of 127.0.0.1:UPSTREAM_PORT:
# `start_tls_site WORK UPSTREAM_PORT TLS_PORT`. It starts nginx in the background (its PID is then `$!`) once the
# site's configuration is checked, and returns at once.
start_tls_site() {
  local work=$1 upstream=$2 tls_port=$3
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$work/privkey.pem" -out "$work/fullchain.pem" \
    >"$work/openssl.log" 2>&1 || { cat "$work/openssl.log"; return 1; }
  sed -e "s#127.0.0.1:8080#127.0.0.1:$upstream#" -e "s#listen 443 ssl http2;#listen 127.0.0.1:$tls_port ssl http2;#" \
    -e "/listen \[::\]:443/d" -e "s#/etc/pushtrace/tls/#$work/#" deploy/nginx.conf > "$work/site.conf"
  grep -q "127.0.0.1:$tls_port" "$work/site.conf" || { echo "deploy/nginx.conf no longer has the lines this adapts" >&2; return 1; }
  mkdir -p "$work/nginx"
  cat > "$work/nginx.conf" <<NGINX
$( [ "$(id -u)" = 0 ] && echo "user root;" )
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events {}
http {
    access_log $work/nginx/access.log;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    include $work/site.conf;
}
NGINX
  nginx -t -q -c "$work/nginx.conf" -p "$work/nginx" || { echo "nginx -t failed" >&2; return 1; }
  nginx -c "$work/nginx.conf" -p "$work/nginx" -g 'daemon off;' &
}
