#!/usr/bin/env bash
# Where the small-prime /invoke's throughput goes: the same wrk load, in alternating rounds, against
#   bare      bench/http/reference/bare-server.mjs (node:http, JSON.parse, a fixed answer): the baseline
#   fastify   bench/http/reference/fastify-server.mjs LEVEL=1: Fastify alone, one route, a fixed answer
#   +logging  LEVEL=2: plus pino's access line per request and a UUID request id
#   minimum   LEVEL=3: less than the contract asks of every request, each part in its cheapest form (the
#             file says what); a ceiling for any server of the contract on this stack
#   service   node --max-semi-space-size=1 dist/main.js serve (as npm start), log level info
#   bare + N µs   with SPIN_US=N: the bare server busy-waiting N µs before each answer. In a closed loop a
#             slower server also pays more per request for what is not its own work (waking an idle client,
#             colder caches); this rung shows how much, at a known cost of its own
# and for each: median req/s, its ratio to bare, median p99, and the server's CPU time per request (user +
# system, from /proc). Usage: bash bench/http/wrk/invoke-ladder.sh   (DURATION=5s CONNECTIONS=32 ROUNDS=5;
# RATE= paces every run at that many requests a second, bench/http/wrk/alternating-rounds.sh; SPIN_US=30)
set -euo pipefail
cd "$(dirname "$0")/../../.."

DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-5}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit invoke-ladder "where the time of a small /invoke goes" \
  docs/benchmarks/invoke.md "npm run bench:ladder" DURATION CONNECTIONS ROUNDS RATE SPIN_US NODE

npm run build --silent

names=(bare fastify +logging minimum service)
ports=(18091 18092 18093 18095 18094)
start_algoserve serve . 18094 "$work/service.log" -- --data-dir "$work/data" --log-level info
service_pid=$algoserve_pid
answer=$(curl -sf -H 'content-type: application/json' -d '{"number": 97}' http://127.0.0.1:18094/invoke)
node bench/http/reference/bare-server.mjs 18091 "$answer" &
bare_pid=$!
LEVEL=1 node bench/http/reference/fastify-server.mjs 18092 >/dev/null &
fastify_pid=$!
LEVEL=2 node bench/http/reference/fastify-server.mjs 18093 >"$work/fastify.log" &
logging_pid=$!
LEVEL=3 node bench/http/reference/fastify-server.mjs 18095 >/dev/null &
minimum_pid=$!
pids+=("$bare_pid" "$fastify_pid" "$logging_pid" "$minimum_pid")
server_pids=("$bare_pid" "$fastify_pid" "$logging_pid" "$minimum_pid" "$service_pid")
if [ -n "${SPIN_US:-}" ]; then
  node bench/http/reference/bare-server.mjs 18096 "$answer" "$SPIN_US" &
  pids+=($!)
  server_pids+=($!)
  names+=("bare + $SPIN_US µs")
  ports+=(18096)
fi
for port in "${ports[@]}"; do wait_listening "$port"; done

# shellcheck source=bench/http/wrk/alternating-rounds.sh
. bench/http/wrk/alternating-rounds.sh
alternating_rounds
echo "## Small-prime POST /invoke ladder: $CONNECTIONS connections${RATE:+ paced at $RATE/s}, $DURATION per run, median of $ROUNDS rounds"
echo
rounds_table
