#!/usr/bin/env bash
# A user's algorithm through POST /algorithms/{name}/invoke against PrimeChecker's small-prime POST /invoke,
# in alternating wrk rounds on the same service: the price of a module algorithm's hop to a worker thread
# (built-in PrimeChecker answers a small prime inline). The module is examples/algorithms/collatz.mjs with
# n = 27 (111 steps: microseconds of work). Then the start-up cost of loading 50 trivial modules: time to
# ready and idle RSS, against the same service with none, median of START_ROUNDS starts each.
# Usage: bash bench/http/wrk/algorithm-invoke.sh   (DURATION=5s CONNECTIONS=32 ROUNDS=5 START_ROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/../../.."

DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-5}
START_ROUNDS=${START_ROUNDS:-5}
PORT=${PORT:-18300}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit algorithm-invoke "a module algorithm over HTTP, and loading 50 modules" \
  docs/benchmarks/algorithms.md "npm run bench:algorithms" DURATION CONNECTIONS ROUNDS START_ROUNDS NODE

npm run build --silent

start_algoserve serve . "$PORT" "$work/service.log" -- --data-dir "$work/data" \
  --algorithms examples/algorithms/collatz.mjs

# Prints "<requests per second> <p99 in ms>" for one wrk run of BODY posted to PATH.
run_wrk() {
  local path=$1 body=$2
  cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA
  wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/post.lua" "http://127.0.0.1:$PORT$path" >"$work/wrk.out"
  if grep -q "Non-2xx" "$work/wrk.out"; then
    echo "non-2xx answers from $path" >&2
    cat "$work/wrk.out" >&2
    exit 1
  fi
  wrk_summary "$work/wrk.out" | cut -d' ' -f1,2
}

: >"$work/invoke.rounds"
: >"$work/module.rounds"
for _ in $(seq 1 "$ROUNDS"); do
  run_wrk /invoke '{"number": 97}' >>"$work/invoke.rounds"
  run_wrk /algorithms/Collatz/invoke '{"n": 27}' >>"$work/module.rounds"
done
invoke_rps=$(cut -d' ' -f1 "$work/invoke.rounds" | median)
module_rps=$(cut -d' ' -f1 "$work/module.rounds" | median)
echo "## A module algorithm against the small-prime /invoke: $CONNECTIONS connections, $DURATION per run, median of $ROUNDS rounds"
echo
echo "| call | req/s | p99 ms | each round (req/s) |"
echo "|---|---|---|---|"
echo "| POST /invoke {\"number\": 97} | $invoke_rps | $(cut -d' ' -f2 "$work/invoke.rounds" | median) | $(cut -d' ' -f1 "$work/invoke.rounds" | tr '\n' ' ')|"
echo "| POST /algorithms/Collatz/invoke {\"n\": 27} | $module_rps | $(cut -d' ' -f2 "$work/module.rounds" | median) | $(cut -d' ' -f1 "$work/module.rounds" | tr '\n' ' ')|"
echo
awk -v m="$module_rps" -v i="$invoke_rps" 'BEGIN { printf "module / invoke: %.2f\n\n", m / i }'
kill "${pids[@]}" 2>/dev/null || true
wait 2>/dev/null || true
pids=()

# 50 trivial modules, each its own name.
mkdir -p "$work/modules"
for i in $(seq 1 50); do
  cat >"$work/modules/trivial-$i.mjs" <<JS
export default {
  name: 'Trivial$i',
  version: '1.0.0',
  description: 'Returns its input.',
  params: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
  result: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] },
  run: ({ x }) => ({ x }),
}
JS
done

# Prints "<ms to ready> <RSS KiB once idle>" for one start with the given extra arguments.
start_once() {
  rm -rf "$work/data"
  local started pid ready_ms
  started=$(date +%s%3N)
  pids=()
  start_algoserve serve . "$PORT" "$work/start.log" -- --data-dir "$work/data" --log-level warn "$@"
  pid=$algoserve_pid
  ready_ms=$(($(date +%s%3N) - started))
  sleep 1
  echo "$ready_ms $(ps -o rss= -p "$pid" | tr -d ' ')"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

: >"$work/none.starts"
: >"$work/fifty.starts"
for _ in $(seq 1 "$START_ROUNDS"); do
  start_once >>"$work/none.starts"
  start_once --algorithms "$work/modules" >>"$work/fifty.starts"
done
echo "## Start with 50 trivial modules, median of $START_ROUNDS starts each"
echo
echo "| modules | ms to ready | idle RSS MiB |"
echo "|---|---|---|"
for case in none fifty; do
  ms=$(cut -d' ' -f1 "$work/$case.starts" | median)
  kib=$(cut -d' ' -f2 "$work/$case.starts" | median)
  echo "| $case | $ms | $(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }') |"
done
