#!/usr/bin/env bash
# Redis commands per job in distributed mode: a redis-server of its own on a free port, one
# `algoserve serve` and one `algoserve worker` from each tree given (run from its sources), JOBS small
# PrimeChecker jobs posted one after another, run, then each read once; Redis's own command counts
# (INFO commandstats, reset before the posts) divided by the jobs. Unlike a rate, the count does not
# depend on the machine's load, so trees compare on a busy machine too. The counts include what the
# processes send while idle during the run (blocking reads, stalled checks), a few per second.
# Usage: bash bench/http/runs/redis-commands.sh TREE...   (JOBS=300)
set -euo pipefail
JOBS=${JOBS:-300}
[ "$#" -gt 0 ] || { echo "usage: bash bench/http/runs/redis-commands.sh TREE..." >&2; exit 2; }
free_port() { node -e "const s=require('net').createServer().listen(0,()=>{console.log(s.address().port);s.close()})"; }
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
for tree in "$@"; do
  redis_port=$(free_port) api_port=$(free_port) worker_port=$(free_port)
  redis-server --port "$redis_port" --save '' --appendonly no --maxmemory-policy noeviction >/dev/null &
  pids+=($!)
  for _ in $(seq 1 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  export ALGOSERVE_REDIS_URL="redis://127.0.0.1:$redis_port" ALGOSERVE_LOG_LEVEL=warn ALGOSERVE_WORKER_THREADS=1
  (cd "$tree" && exec node --import tsx src/main.ts serve --port "$api_port") >/dev/null 2>&1 &
  pids+=($!)
  (cd "$tree" && exec node --import tsx src/main.ts worker --worker-port "$worker_port") >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do
    curl -sf "localhost:$api_port/readyz" >/dev/null && curl -sf "localhost:$worker_port/readyz" >/dev/null && break
    sleep 0.2
  done
  redis-cli -p "$redis_port" config resetstat >/dev/null
  ids=()
  for i in $(seq 1 "$JOBS"); do
    ids+=("$(curl -s -X POST "localhost:$api_port/jobs" -H 'content-type: application/json' \
      -d "{\"algorithm\":\"PrimeChecker\",\"params\":{\"number\":$((1000 + i))}}" | sed 's/.*"job_id":"\([^"]*\)".*/\1/')")
  done
  completed=0
  for id in "${ids[@]}"; do
    for _ in $(seq 1 100); do
      curl -s "localhost:$api_port/jobs/$id" | grep -q '"status":"completed"' && { completed=$((completed + 1)); break; }
      sleep 0.1
    done
  done
  total=$(redis-cli -p "$redis_port" info commandstats | awk -F'[=,:]' '/^cmdstat_/ { s += $3 } END { print s }')
  echo "$(git -C "$tree" rev-parse --short HEAD) ($tree): $completed/$JOBS completed; $total commands, $(awk -v t="$total" -v j="$JOBS" 'BEGIN { printf "%.1f", t / j }') per job"
  cleanup
  pids=()
  wait 2>/dev/null || true
done
