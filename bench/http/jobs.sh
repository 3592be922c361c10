#!/usr/bin/env bash
# Jobs end to end: POST /jobs to completed, on the embedded store. Small primes are posted by wrk for
# DURATION with CONNECTIONS connections (closed loop: as fast as the service takes them); 600-digit
# primes are posted COUNT at a time by bench/http/job-stats.mjs. Each job's created_at and completed_at
# give the creation-to-completion time; jobs per second is jobs / (last completion - first creation).
# Baseline in the same run: POST /invoke with the same number, same connections and duration.
# Usage: bash bench/http/jobs.sh   (DURATION=10s CONNECTIONS=16 ROUNDS=3 COUNT=200 LOG_LEVEL=info)
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
ROUNDS=${ROUNDS:-3}
COUNT=${COUNT:-200}
LOG_LEVEL=${LOG_LEVEL:-info}
PORT=${PORT:-18090}
# nextprime(10^599) by PARI/GP: a 600-digit prime.
PRIME_600="1$(printf '0%.0s' $(seq 1 595))2161"
# shellcheck source=bench/http/wrk-common.sh
. bench/http/wrk-common.sh
service_pid=
on_exit() {
  if [ -n "$service_pid" ]; then kill "$service_pid" 2>/dev/null || true; fi
}

npm run build --silent

start_service() {
  rm -rf "$work/data"
  node --max-semi-space-size=1 dist/main.js serve --port "$PORT" --data-dir "$work/data" --log-level "$LOG_LEVEL" >"$work/service.log" 2>&1 &
  service_pid=$!
  wait_ready "http://127.0.0.1:$PORT/readyz" "$work/service.log"
}

stop_service() {
  kill "$service_pid"
  wait "$service_pid" || true
  service_pid=
}

cat >"$work/post.lua" <<'LUA'
-- Each wrk thread writes the ids of the jobs it created to a file of its own.
local threads = 0
function setup(thread)
  thread:set("n", threads)
  threads = threads + 1
end
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"algorithm":"PrimeChecker","params":{"number":1000003}}'
  out = io.open(os.getenv("IDS_DIR") .. "/ids-" .. n .. ".txt", "w")
end
function response(status, headers, body)
  local id = body:match('"job_id":"(%x+)"')
  if status == 202 and id then out:write(id, "\n") else io.stderr:write("POST /jobs: ", status, "\n") end
  out:flush()
end
LUA

cat >"$work/invoke.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"number":1000003}'
LUA

echo "## small primes (1000003): wrk -t2 -c$CONNECTIONS -d$DURATION, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  start_service
  ids="$work/ids-small-$round"
  mkdir -p "$ids"
  IDS_DIR="$ids" wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$work/post.lua" "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
  posted=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  stats=$(node bench/http/job-stats.mjs "http://127.0.0.1:$PORT" "$ids")
  wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$work/invoke.lua" "http://127.0.0.1:$PORT/invoke" >"$work/wrk.out"
  invoked=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  echo "round $round: POST /jobs $posted req/s; $stats; baseline POST /invoke $invoked req/s"
  stop_service
done

echo "## 600-digit primes: $COUNT jobs posted by 16 clients, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  start_service
  echo "round $round: $(node bench/http/job-stats.mjs "http://127.0.0.1:$PORT" "$work/ids-600-$round.txt" --post "$COUNT" --number "$PRIME_600")"
  stop_service
done
