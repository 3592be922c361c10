#!/usr/bin/env bash
# Where the small-prime /invoke's throughput goes: the same wrk load, in alternating rounds, against
#   bare      bench/bare-server.mjs (node:http, JSON.parse, a fixed answer): the issue's baseline
#   fastify   bench/fastify-server.mjs LEVEL=1: Fastify alone, one route, a fixed answer
#   +logging  LEVEL=2: plus pino's access line per request and a UUID request id
#   minimum   LEVEL=3: less than the contract asks of every request, each part in its cheapest form (the
#             file says what); a ceiling for any server of the contract on this stack
#   service   node --max-semi-space-size=1 dist/main.js serve (as npm start), log level info
# and for each: median req/s, its ratio to bare, median p99, and the server's CPU time per request (user +
# system, from /proc). Usage: bash bench/invoke-ladder.sh   (DURATION=5s CONNECTIONS=32 ROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v wrk >/dev/null || { echo "bench/invoke-ladder.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-5}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

npm run build --silent

names=(bare fastify +logging minimum service)
ports=(18091 18092 18093 18095 18094)
node --max-semi-space-size=1 dist/main.js serve --port 18094 --data-dir "$work/data" --log-level info >"$work/service.log" 2>&1 &
pids+=($!)
service_pid=$!
for _ in $(seq 1 500); do curl -sf -o /dev/null http://127.0.0.1:18094/readyz && break; sleep 0.01; done
answer=$(curl -sf -H 'content-type: application/json' -d '{"number": 97}' http://127.0.0.1:18094/invoke)
node bench/bare-server.mjs 18091 "$answer" &
bare_pid=$!
LEVEL=1 node bench/fastify-server.mjs 18092 >/dev/null &
fastify_pid=$!
LEVEL=2 node bench/fastify-server.mjs 18093 >"$work/fastify.log" &
logging_pid=$!
LEVEL=3 node bench/fastify-server.mjs 18095 >/dev/null &
minimum_pid=$!
pids+=("$bare_pid" "$fastify_pid" "$logging_pid" "$minimum_pid")
server_pids=("$bare_pid" "$fastify_pid" "$logging_pid" "$minimum_pid" "$service_pid")
sleep 1

cat >"$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"number": 97}'
LUA
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
ticks_per_second=$(getconf CLK_TCK)

# Warm-up: every server gets the JIT's attention before it is measured.
for i in 0 1 2 3 4; do wrk -t1 -c"$CONNECTIONS" -d3s -s "$work/post.lua" "http://127.0.0.1:${ports[$i]}/invoke" >/dev/null; done
for _ in $(seq 1 "$ROUNDS"); do
  for i in 0 1 2 3 4; do
    before=$(cpu_ticks "${server_pids[$i]}")
    wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/post.lua" "http://127.0.0.1:${ports[$i]}/invoke" >"$work/wrk.out"
    after=$(cpu_ticks "${server_pids[$i]}")
    awk -v ticks=$((after - before)) -v hz="$ticks_per_second" '
      /requests in/ { n = $1 }
      /Requests\/sec:/ { rps = $2 }
      /^ +99%/ { v = $2; unit = v; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
                 p99 = (unit == "us") ? v / 1000 : (unit == "s") ? v * 1000 : v }
      END { printf "%s %.3f %.1f\n", rps, p99, ticks / hz * 1e6 / n }' "$work/wrk.out" >>"$work/$i.rounds"
  done
done

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
bare_rps=$(cut -d' ' -f1 "$work/0.rounds" | median)
echo "## Small-prime POST /invoke ladder: $CONNECTIONS connections, $DURATION per run, median of $ROUNDS rounds"
echo
echo "| server | req/s | of bare | p99 ms | CPU µs per request |"
echo "|---|---|---|---|---|"
for i in 0 1 2 3 4; do
  rps=$(cut -d' ' -f1 "$work/$i.rounds" | median)
  echo "| ${names[$i]} | $rps | $(awk -v s="$rps" -v b="$bare_rps" 'BEGIN { printf "%.0f%%", 100 * s / b }') |" \
    "$(cut -d' ' -f2 "$work/$i.rounds" | median) | $(cut -d' ' -f3 "$work/$i.rounds" | median) |"
done
