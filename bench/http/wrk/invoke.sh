#!/usr/bin/env bash
# POST /invoke throughput and p99 latency with wrk, for a small prime, a 64-bit prime and a 100-digit
# prime, each against a bare node:http server (JSON.parse + a fixed answer of the same size) in the same
# run; then start-up time, idle memory, and /healthz latency while a 4300-digit prime is tested.
# Usage: bash bench/http/wrk/invoke.sh   (DURATION=10s CONNECTIONS=32 ROUNDS=3 LOG_LEVEL=info)
set -euo pipefail
cd "$(dirname "$0")/../../.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-3}
LOG_LEVEL=${LOG_LEVEL:-info}
SERVICE_PORT=${SERVICE_PORT:-18080}
BARE_PORT=${BARE_PORT:-18081}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit invoke "POST /invoke against a bare node:http server" \
  docs/benchmarks/invoke.md "npm run bench" DURATION CONNECTIONS ROUNDS LOG_LEVEL NODE

npm run build --silent

start_ms=$(date +%s%3N)
start_algoserve serve . "$SERVICE_PORT" "$work/service.log" -- --data-dir "$work/data" --log-level "$LOG_LEVEL"
service_pid=$algoserve_pid
ready_ms=$(($(date +%s%3N) - start_ms))
sleep 2
idle_rss_kb=$(ps -o rss= -p "$service_pid" | tr -d ' ')

# Prints "<requests per second> <p99 in ms>" for one wrk run.
run_wrk() {
  local url=$1 body_file=$2
  cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$body_file", "r")
wrk.body = f:read("*a")
f:close()
LUA
  wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/post.lua" "$url" >"$work/wrk.out"
  if grep -q "Non-2xx" "$work/wrk.out"; then
    echo "non-2xx answers from $url" >&2
    cat "$work/wrk.out" >&2
    exit 1
  fi
  wrk_summary "$work/wrk.out" | cut -d' ' -f1,2
}

echo "## POST /invoke, $CONNECTIONS connections, $DURATION per run, median of $ROUNDS rounds (log level $LOG_LEVEL)"
echo
echo "| case | service req/s | bare req/s | ratio | service p99 ms | bare p99 ms |"
echo "|---|---|---|---|---|---|"
for case in "small prime:97" "64-bit prime:18446744073709551557" "100-digit prime:1$(printf '0%.0s' $(seq 1 96))289"; do
  name=${case%%:*}
  number=${case#*:}
  printf '{"number": %s}' "$number" >"$work/body.json"
  answer=$(curl -sf -H 'content-type: application/json' --data-binary @"$work/body.json" "http://127.0.0.1:$SERVICE_PORT/invoke")
  node bench/http/reference/bare-server.mjs "$BARE_PORT" "$answer" &
  bare_pid=$!
  pids+=("$bare_pid")
  wait_listening "$BARE_PORT"
  : >"$work/service.rounds"
  : >"$work/bare.rounds"
  for _ in $(seq 1 "$ROUNDS"); do
    run_wrk "http://127.0.0.1:$BARE_PORT/invoke" "$work/body.json" >>"$work/bare.rounds"
    run_wrk "http://127.0.0.1:$SERVICE_PORT/invoke" "$work/body.json" >>"$work/service.rounds"
  done
  kill "$bare_pid"
  s_rps=$(cut -d' ' -f1 "$work/service.rounds" | median)
  b_rps=$(cut -d' ' -f1 "$work/bare.rounds" | median)
  s_p99=$(cut -d' ' -f2 "$work/service.rounds" | median)
  b_p99=$(cut -d' ' -f2 "$work/bare.rounds" | median)
  ratio=$(awk -v s="$s_rps" -v b="$b_rps" 'BEGIN { printf "%.0f%%", 100 * s / b }')
  echo "| $name | $s_rps | $b_rps | $ratio | $s_p99 | $b_p99 |"
done
echo

# /healthz while one worker thread tests a 4300-digit prime (nextprime(10^4299) = 10^4299 + 3187).
printf '{"number": 1%s3187}' "$(printf '0%.0s' $(seq 1 4295))" >"$work/heavy.json"
curl -sf -o /dev/null -H 'content-type: application/json' --data-binary @"$work/heavy.json" \
  "http://127.0.0.1:$SERVICE_PORT/invoke" &
heavy_pid=$!
sleep 0.2
: >"$work/health.ms"
while kill -0 "$heavy_pid" 2>/dev/null; do
  curl -sf -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$SERVICE_PORT/healthz" | awk '{ print $1 * 1000 }' >>"$work/health.ms"
  sleep 0.02
done
probes=$(wc -l <"$work/health.ms")
echo "## Start-up, memory, isolation"
echo
echo "- ready (first 200 from /readyz) $ready_ms ms after the process was started"
echo "- idle RSS $((idle_rss_kb / 1024)) MiB"
echo "- /healthz while a 4300-digit prime is tested: $probes probes, median $(median <"$work/health.ms") ms, max $(sort -g "$work/health.ms" | tail -1) ms"
