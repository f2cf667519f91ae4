#!/usr/bin/env bash
# make api-test: a third-party fuzzer, schemathesis, against a live server described by openapi.json.
#
# openapi-spec-validator checks the document; the server must serve the same bytes at /openapi.json. Then a server
# over a fresh store with simulated data and a token of each scope (ingest and read for net.rorklab.dailypick,
# metrics, admin) is fuzzed by schemathesis with every check (no 5xx, responses and their content types and headers
# as documented, schema-invalid requests refused, schema-valid ones accepted, 405 with Allow for undocumented
# methods, auth never ignored) over its four phases: the document's examples, coverage, fuzzing, and stateful
# sequences following the document's links (a search's IDs into why); then the reads again with the admin token.
#
#   API_EXAMPLES=N   examples per operation and phase (default 200; CI runs 25)
#   API_SEED=N       hypothesis's seed (default: random, printed, so a finding can be replayed)
# Run from the repository root after `make build`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=.build/debug/pushtrace
venv=.build/api-test-venv
examples=${API_EXAMPLES:-200}
seed=${API_SEED:-$RANDOM}

if [ ! -x "$venv/bin/schemathesis" ]; then
  # Python 3.12 or later: under CPython 3.11, hypothesis's description of a strategy calls ast.parse deep in the
  # coverage phase's recursion, which fails there ("AST constructor recursion depth mismatch").
  python=""
  for candidate in python3.13 python3.12 $(ls -d "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.1[2-9]*/bin/python3 2>/dev/null); do
    if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then python=$candidate; break; fi
  done
  [ -n "$python" ] || { echo "api-test: schemathesis needs Python 3.12 or later here (CPython 3.11 fails inside hypothesis)"; exit 1; }
  echo "== installing schemathesis 4.32.5 and openapi-spec-validator 0.9.0 into $venv ($("$python" --version))"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q schemathesis==4.32.5 openapi-spec-validator==0.9.0
fi

echo "== openapi-spec-validator openapi.json"
"$venv/bin/openapi-spec-validator" openapi.json

work=$(mktemp -d)
server_pid=""
cleanup() { [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
db=$work/pushtrace.sqlite
app=net.rorklab.dailypick
"$bin" simulate --out "$work/bundles" --notifications 300 --seed 11 > /dev/null
# One app's bundles: the admin token's report may then leave `app` out, as the document says it may while the store
# holds one app only (ReportEndpointTests has the 400 that names several).
"$bin" ingest --db "$db" --quiet "$work/bundles/$app" > /dev/null
token() { "$bin" token create --db "$db" "$@" 2>/dev/null; }
ingest=$(token --scope ingest --app "$app" --label api-test-ingest)
read=$(token --scope read --app "$app" --label api-test-read)
metrics=$(token --scope metrics --label api-test-metrics)
admin=$(token --scope admin --label api-test-admin)
port=$(free_port)
"$bin" serve --db "$db" --port "$port" --log-level error --follow-idle 2 2> "$work/server.log" &
server_pid=$!
wait_healthy "http://127.0.0.1:$port" 100 0.1 || { echo "the server did not start" >&2; exit 1; }

echo "== GET /openapi.json is the repository's openapi.json"
curl -sf "http://127.0.0.1:$port/openapi.json" | cmp - openapi.json

# Uploads with the ingest token, the backend's events with the admin token (it may replay an archived upload's
# arrival time), reads with the read token, /metrics with the metrics token.
# allow-extra-parameters = false: schemathesis would otherwise send a header the document does not name
# (x-schemathesis-unknown-property) and expect a refusal, where HTTP says a recipient must ignore header fields it
# does not know (RFC 9110, section 5.1): proxies and clients add their own.
cat > "$work/schemathesis.toml" <<TOML
[cache]
directory = "$work/schemathesis-cache"

[generation]
allow-extra-parameters = false

[[operations]]
include-operation-id = "uploadBundle"
headers = { Authorization = "Bearer $ingest" }

[[operations]]
include-operation-id = "uploadEvents"
headers = { Authorization = "Bearer $admin" }

[[operations]]
include-tag = "read"
headers = { Authorization = "Bearer $read" }

[[operations]]
include-operation-id = "metrics"
headers = { Authorization = "Bearer $metrics" }
TOML

# The same reads again with the admin token, which covers every app: what the document leaves optional for a read
# token (an app it implies) must hold for it too.
sed -e '/include-operation-id = "metrics"/,$d' -e "s/Bearer $read/Bearer $admin/" "$work/schemathesis.toml" \
  | sed '$d' > "$work/schemathesis-admin.toml"
grep -q "Bearer $admin" "$work/schemathesis-admin.toml" || { echo "api-test: the admin configuration was not made"; exit 1; }

status=0
run_schemathesis() {  # CONFIG LABEL [schemathesis options...]
  local config=$1 label=$2
  shift 2
  echo "== schemathesis $("$venv/bin/schemathesis" --version | awk '{print $3}') ($label): every check, $examples examples per operation and phase, seed $seed"
  SCHEMATHESIS_HOOKS=api_test_hooks PYTHONPATH=scripts "$venv/bin/schemathesis" --config-file "$config" --no-color \
    run openapi.json --url "http://127.0.0.1:$port" --checks all --phases examples,coverage,fuzzing,stateful \
    --max-examples "$examples" --seed "$seed" --workers 2 --generation-database none --generation-codec utf-8 "$@" || status=$?
}
run_schemathesis "$work/schemathesis.toml" "an app's tokens"
run_schemathesis "$work/schemathesis-admin.toml" "the admin token, reads" --include-tag read
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "api-test: the server died"; tail -n 30 "$work/server.log"; exit 1
fi
if grep -q "internal error" "$work/server.log"; then
  echo "api-test: the server logged internal errors:"; grep "internal error" "$work/server.log" | head -n 10; exit 1
fi
exit "$status"
