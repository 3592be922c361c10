#!/usr/bin/env bash
# ALGOSERVE_HTTP_PROCESSES=1 against 2, same run: two `algoserve serve` of this checkout (built once) on a
# redis-server of this script's own, one with one HTTP process, one with two; no process runs jobs, so
# POST /jobs measures the API alone. Beside them, the ceiling of this machine: the bare node:http server
# (bench/http/reference/bare-cluster.mjs) in one process and in two sharing the port the same way, giving
# the service's answer to the same request. Rounds alternate between them: wrk on the small-prime
# POST /invoke, then on POST /jobs (bench/http/wrk/post-jobs.lua, the services only), each a closed loop of
# CONNECTIONS connections. Reports the median req/s and p99 of each, the ratio of two processes to one, the
# share of the machine's CPU time that was busy during the runs (from /proc/stat: wrk, the servers and
# anything else), and the idle resident memory of each service (the primary and its processes summed),
# before any load.
# Usage: bash bench/http/wrk/http-processes.sh   (DURATION=5s CONNECTIONS=32 ROUNDS=5 PORT=18300)
# wrk shares the machine with the servers: on 2 cores its thread takes a core's share from them.
set -euo pipefail
cd "$(dirname "$0")/../../.."

command -v redis-server >/dev/null || { echo "bench/http/wrk/http-processes.sh needs redis-server" >&2; exit 1; }
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-18300}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit http-processes "one HTTP process against two (ALGOSERVE_HTTP_PROCESSES), Redis mode" \
  docs/benchmarks/http-processes.md bench:http-processes DURATION CONNECTIONS ROUNDS

start_redis_server "$work/redis" --appendonly no --maxmemory-policy noeviction
tree=$(revision_tree WORKTREE)

counts=(1 2)
services=()
for i in 0 1; do
  start_algoserve serve "$tree" $((PORT + i)) "$work/service-$i.log" -- --data-dir "$work/data-$i" \
    --redis-url "$redis_url" --redis-prefix "bench$i" --http-processes "${counts[$i]}" \
    --max-pending-jobs 100000000 --log-level info
  services+=("$algoserve_pid")
done
sleep 2
# Resident memory of a process and its children, in MB.
tree_rss() {
  local pid=$1
  ps -o rss= -p "$pid" --ppid "$pid" | awk '{ s += $1 } END { printf "%.1f", s / 1024 }'
}
rss=("$(tree_rss "${services[0]}")" "$(tree_rss "${services[1]}")")
answer=$(curl -sf -H 'content-type: application/json' -d '{"number": 97}' "http://127.0.0.1:$PORT/invoke")
for i in 2 3; do
  node bench/http/reference/bare-cluster.mjs "${counts[$((i - 2))]}" $((PORT + i)) "$answer" &
  pids+=($!)
  wait_listening $((PORT + i))
done
names=(algoserve algoserve 'bare node:http' 'bare node:http')
counts+=(1 2)
# The machine's busy and total CPU ticks so far (every CPU: user, nice, system, irq, softirq, steal).
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

cat >"$work/invoke.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"number": 97}'
LUA
mkdir -p "$work/ids"
# Runs wrk on server I with load KIND for DURATION; with a fourth argument, appends
# "<req/s> <p99 ms> <requests> <busy %>" to $work/KIND-I.rounds.
run() {
  local i=$1 kind=$2 script before after
  if [ "$kind" = invoke ]; then script="$work/invoke.lua"; else script=bench/http/wrk/post-jobs.lua; fi
  before=$(cpu_ticks)
  IDS_DIR="$work/ids" wrk -t1 -c"$CONNECTIONS" -d"$3" --latency -s "$script" \
    "http://127.0.0.1:$((PORT + i))/$kind" >"$work/wrk.out" 2>/dev/null
  after=$(cpu_ticks)
  [ -z "${4:-}" ] || echo "$(wrk_summary "$work/wrk.out") $(echo "$before $after" |
    awk '{ printf "%.0f", 100 * ($3 - $1) / ($4 - $2) }')" >>"$work/$kind-$i.rounds"
}
servers_of() { if [ "$1" = invoke ]; then echo 0 1 2 3; else echo 0 1; fi; }
# Warm-up: each server's JIT gets its loads before they are measured.
for kind in invoke jobs; do for i in $(servers_of "$kind"); do run "$i" "$kind" 3s; done; done
for _ in $(seq 1 "$ROUNDS"); do
  for kind in invoke jobs; do
    for i in $(servers_of "$kind"); do run "$i" "$kind" "$DURATION" measure; done
  done
done

echo "## ALGOSERVE_HTTP_PROCESSES 1 and 2 (Redis mode), $CONNECTIONS connections, $DURATION per run, median of $ROUNDS rounds"
echo
echo "| load | server | processes | req/s | of 1 process | p99 ms | machine busy % | req/s, each round |"
echo "|---|---|---|---|---|---|---|---|"
for kind in invoke jobs; do
  for i in $(servers_of "$kind"); do
    one=$(cut -d' ' -f1 "$work/$kind-$((i / 2 * 2)).rounds" | median)
    rps=$(cut -d' ' -f1 "$work/$kind-$i.rounds" | median)
    echo "| POST /$kind | ${names[$i]} | ${counts[$i]} | $rps |" \
      "$(awk -v s="$rps" -v b="$one" 'BEGIN { printf "%.2fx", s / b }') |" \
      "$(cut -d' ' -f2 "$work/$kind-$i.rounds" | median) | $(cut -d' ' -f4 "$work/$kind-$i.rounds" | median) |" \
      "$(cut -d' ' -f1 "$work/$kind-$i.rounds" | tr '\n' ' ')|"
  done
done
echo
echo "Idle resident memory: 1 process ${rss[0]} MB; 2 processes ${rss[1]} MB (primary and both processes)."
