#!/usr/bin/env bash
# Starts a fresh server (the build `npm start` runs, on its own embedded PostgreSQL in a temporary
# DATA_DIR), creates a scale-plan org with an agent and a test key through the operator CLI, three
# orgs to be refused (one on a small plan whose limit the check uses up, one without test credits, one
# without a plan) and one whose first call takes its test balance below the low-balance threshold,
# runs the build's `voice-call-api conformance` against it in test mode, and stops it.
# Extra arguments go to the conformance check (e.g. --seed 7 --cases 50 --junit report.xml).
set -euo pipefail
cd "$(dirname "$0")/.."

# One build up front (nothing when dist/ is current); every command below then runs it directly.
npm run -s build
admin() { node dist/src/main.js admin "$@"; }

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }

data_dir=$(mktemp -d)
# Enterable by the cluster's OS user when run as root, so the cluster stays inside it (and goes with it).
chmod 755 "$data_dir"
port=$(free_port)
unset DATABASE_URL
export DATA_DIR="$data_dir" EMBEDDED_PG_PORT="$(free_port)" LOG_LEVEL=warn
# The check's own loopback receiver gets the webhook deliveries: its CA (webhook:listen's, in a private
# folder of this run) is made first, so the server can trust it from the start.
export WEBHOOK_LISTEN_DIR="$data_dir/listen"
node dist/src/main.js webhook:listen --setup >/dev/null
# The body timeout is shorter than the request deadline, so a stalled body gets its documented 408: with
# the defaults (both 10 s) the deadline's 503 comes first. Simulated calls step four times a second, so
# the call.completed the check awaits comes in seconds rather than a minute.
PORT="$port" VALIDATE_RESPONSES=true BODY_TIMEOUT_MS=4000 SIMULATOR_STEP_MS=250 WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8 \
  NODE_EXTRA_CA_CERTS="$WEBHOOK_LISTEN_DIR/ca.pem" node dist/src/main.js serve >"$data_dir/server.log" 2>&1 &
server=$!
cleanup() {
  kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$data_dir"
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data_dir/server.log"; exit 1; }
  sleep 0.5
done

# Every key is a test key: the check dials nothing and spends only test credits.
org=$(admin org create --name Conformance --plan scale --json | field id)
admin credits reset --org "$org" --mode test --paise 1000000000 >/dev/null
agent=$(admin agent create --org "$org" --name Conformance --json | field id)
key=$(admin key create --org "$org" --mode test --json | field key)

# An org with an agent and a test key, with NAME's test balance and the given `org create` options;
# prints the key.
refused_org() {
  local id
  id=$(admin org create --name "Conformance $1" "${@:3}" --json | field id)
  admin credits reset --org "$id" --mode test --paise "$2" >/dev/null
  admin agent create --org "$id" --name Conformance --json >/dev/null
  admin key create --org "$id" --mode test --json | field key
}
admin plan create --id conformance-small --name "Conformance small" --rate-limit 5 >/dev/null
export VOICE_CALL_SMALL_PLAN_API_KEY VOICE_CALL_NO_CREDITS_API_KEY VOICE_CALL_NO_PLAN_API_KEY VOICE_CALL_LOW_BALANCE_API_KEY
VOICE_CALL_SMALL_PLAN_API_KEY=$(refused_org small-plan 1000000 --plan conformance-small)
VOICE_CALL_NO_CREDITS_API_KEY=$(refused_org no-credits 0 --plan scale)
VOICE_CALL_NO_PLAN_API_KEY=$(refused_org no-plan 1000000 --no-plan)
# One call of the default agent holds 2,000 paise: from 11,000 that crosses the default threshold of 10,000.
VOICE_CALL_LOW_BALANCE_API_KEY=$(refused_org low-balance 11000 --plan scale)

status=0
VOICE_CALL_API_KEY="$key" node dist/src/main.js conformance --base-url "http://127.0.0.1:$port/api/v1" --agent-id "$agent" \
  "$@" || status=$?
if grep -q '"level":50' "$data_dir/server.log"; then
  echo "server logged errors during the run:"; grep '"level":50' "$data_dir/server.log" | head -20
  status=1
fi
exit "$status"
