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
