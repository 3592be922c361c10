#!/usr/bin/env bash
# How soon `npm start` (the README's command, on a built tree) answers /healthz, and
# how soon it is gone after SIGTERM. Baseline in the same run, alternating: a bare node:http server
# started the same way (an npm start script that execs node), so what the service adds to Node's and
# npm's own start shows.
# Usage: bash bench/http/runs/start-time.sh   (ROUNDS=7)
set -euo pipefail
cd "$(dirname "$0")/../../.."
# shellcheck source=bench/lib/common.sh
. bench/lib/common.sh
ROUNDS=${ROUNDS:-7}
PORT=${PORT:-$(free_port)}
npm run build --silent
cat >"$work/bare.mjs" <<'JS'
import { createServer } from 'node:http'
const server = createServer((_req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => server.close())
JS
echo '{"name": "bare", "private": true, "scripts": {"start": "exec node bare.mjs"}}' >"$work/package.json"

ms() { date +%s%3N; }
# Prints "<ms to the first 200 from URL> <ms from SIGTERM to exit>" for the command in "$@".
measure() {
  local url=$1
  shift
  local begun
  begun=$(ms)
  "$@" >"$work/out.log" 2>&1 &
  local pid=$!
  until curl -sf -o /dev/null "$url"; do sleep 0.005; done
  local ready=$(($(ms) - begun))
  begun=$(ms)
  kill -TERM "$pid"
  wait "$pid" || true
  local stopped=$(($(ms) - begun))
  if curl -s -o /dev/null "$url"; then echo "still answering after SIGTERM: $*" >&2; exit 1; fi
  echo "$ready $stopped"
}

echo "## start to first /healthz 200, and SIGTERM to exit, ms; $ROUNDS alternating rounds, Node $(node --version)"
for round in $(seq 1 "$ROUNDS"); do
  rm -rf "$work/data"
  # No drain delay: the stop measured is the shutdown itself (the delay, 5 s by default, adds to it).
  service=$(ALGOSERVE_PORT=$PORT ALGOSERVE_DATA_DIR="$work/data" ALGOSERVE_LOG_LEVEL=warn ALGOSERVE_DRAIN_DELAY_MS=0 \
    measure "http://127.0.0.1:$PORT/healthz" npm start --silent)
  bare=$(PORT=$PORT measure "http://127.0.0.1:$PORT/" npm start --silent --prefix "$work")
  echo "round $round: npm start $service; bare node:http by npm start $bare"
  echo "$service" >>"$work/service"
  echo "$bare" >>"$work/bare"
done
service_ready=$(cut -d' ' -f1 "$work/service" | median) service_stopped=$(cut -d' ' -f2 "$work/service" | median)
bare_ready=$(cut -d' ' -f1 "$work/bare" | median) bare_stopped=$(cut -d' ' -f2 "$work/bare" | median)
echo "median: npm start ready $service_ready ms, stopped $service_stopped ms;" \
  "bare ready $bare_ready ms, stopped $bare_stopped ms"
node bench/lib/results.mjs start-time <<JSON
{
  "title": "start time",
  "script": "bench/http/runs/start-time.sh",
  "npm": "npm run bench:start",
  "history": "docs/benchmarks/start-time.md",
  "command": "ROUNDS=$ROUNDS bash bench/http/runs/start-time.sh",
  "tables": [{
    "caption": "Medians of $ROUNDS alternating rounds, ms:",
    "columns": ["started by npm start", "to the first /healthz 200", "SIGTERM to exit"],
    "rows": [["the service (built)", "$service_ready", "$service_stopped"],
             ["a bare node:http server (the baseline)", "$bare_ready", "$bare_stopped"]]
  }],
  "notes": ["Target: ready in under 1 s."]
}
JSON
