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
