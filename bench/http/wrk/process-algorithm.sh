#!/usr/bin/env bash
# A process algorithm that echoes its params against the same algorithm as a module, through
# POST /algorithms/{name}/invoke on one service, in alternating wrk rounds: the Bash example
# (examples/algorithms/echo-bash, two instances), a Python echo with two instances (standard library,
# written here), and a module that returns its params (on a worker thread, as every user module).
# Latency: one connection, calls one after another, p50 of each; "added" is a process's p50 minus the
# module's. Throughput: CONNECTIONS connections, requests per second.
# Usage: bash bench/http/wrk/process-algorithm.sh   (DURATION=5s CONNECTIONS=32 ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/../../.."

DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18310}
BODY='{"text": "hello", "n": 12345}'
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit process-algorithm "a process algorithm against the same as a module" \
  docs/benchmarks/algorithms.md "npm run bench:processes" DURATION CONNECTIONS ROUNDS NODE

command -v python3 >/dev/null || { echo "bench/http/wrk/process-algorithm.sh needs python3" >&2; exit 1; }
npm run build --silent

# The same schemas for the three: an object of any members, answered as it came.
SCHEMAS='"params": { "type": "object", "additionalProperties": true, "properties": { "text": { "type": "string" } } },
  "result": { "type": "object" }'
cat >"$work/echo-module.mjs" <<JS
export default {
  name: 'EchoModule', version: '1.0.0', description: 'Answers with its params.',
  ${SCHEMAS},
  run: (params) => params,
}
JS
mkdir -p "$work/python-echo"
cat >"$work/python-echo/algorithm.json" <<JSON
{ "name": "PythonEcho", "version": "1.0.0", "description": "Answers with its params.",
  $SCHEMAS,
  "command": ["python3", "echo.py"], "instances": 2 }
JSON
cat >"$work/python-echo/echo.py" <<'PY'
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"id": request["id"], "result": request["params"]}) + "\n")
    sys.stdout.flush()
PY

start_algoserve serve . "$PORT" "$work/service.log" -- --data-dir "$work/data" --log-level warn \
  --algorithms "examples/algorithms/echo-bash,$work/echo-module.mjs,$work/python-echo"
for name in EchoModule Echo PythonEcho; do
  answer=$(curl -sf "http://127.0.0.1:$PORT/algorithms/$name/invoke" -H 'content-type: application/json' -d "$BODY")
  case $answer in *'"result":{"text":"hello","n":12345}'*) ;; *) echo "$name answered: $answer" >&2; exit 1 ;; esac
done

cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$BODY'
LUA

# Prints "<requests per second> <p50 in ms>" for one wrk run against NAME with C connections.
run_wrk() {
  local name=$1 connections=$2
  wrk -t1 -c"$connections" -d"$DURATION" --latency -s "$work/post.lua" \
    "http://127.0.0.1:$PORT/algorithms/$name/invoke" >"$work/wrk.out"
  if grep -q "Non-2xx" "$work/wrk.out"; then
    echo "non-2xx answers from $name" >&2
    cat "$work/wrk.out" >&2
    exit 1
  fi
  awk '
    /Requests\/sec:/ { rps = $2 }
    /^ +50%/ { v = $2; unit = v; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
               p50 = (unit == "us") ? v / 1000 : (unit == "s") ? v * 1000 : v }
    END { printf "%s %.3f\n", rps, p50 }' "$work/wrk.out"
}

for name in EchoModule Echo PythonEcho; do : >"$work/$name.latency"; : >"$work/$name.throughput"; done
for _ in $(seq 1 "$ROUNDS"); do
  for name in EchoModule Echo PythonEcho; do
    run_wrk "$name" 1 >>"$work/$name.latency"
    run_wrk "$name" "$CONNECTIONS" >>"$work/$name.throughput"
  done
done

module_p50=$(cut -d' ' -f2 "$work/EchoModule.latency" | median)
echo "## An echo as a process algorithm against the same as a module, median of $ROUNDS rounds of $DURATION"
echo
echo "| algorithm | p50 ms, 1 connection | added p50 ms | req/s, $CONNECTIONS connections | each round (req/s) |"
echo "|---|---|---|---|---|"
for name in EchoModule Echo PythonEcho; do
  p50=$(cut -d' ' -f2 "$work/$name.latency" | median)
  rps=$(cut -d' ' -f1 "$work/$name.throughput" | median)
  added=$(awk -v p="$p50" -v m="$module_p50" 'BEGIN { printf "%+.3f", p - m }')
  echo "| $name | $p50 | $added | $rps | $(cut -d' ' -f1 "$work/$name.throughput" | tr '\n' ' ')|"
done
