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
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../../lib/common.sh"
rows=()
for tree in "$@"; do
  start_redis_server "$work/redis" --appendonly no --maxmemory-policy noeviction
  api_port=$(free_port) worker_port=$(free_port)
  export ALGOSERVE_REDIS_URL=$redis_url ALGOSERVE_LOG_LEVEL=warn ALGOSERVE_WORKER_THREADS=1
  algoserve_from=src
  start_algoserve serve "$tree" "$api_port" /dev/null none
  start_algoserve worker "$tree" "$worker_port" /dev/null
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
  per_job=$(awk -v t="$total" -v j="$JOBS" 'BEGIN { printf "%.1f", t / j }')
  commit=$(git -C "$tree" rev-parse --short HEAD)
  echo "$commit ($tree): $completed/$JOBS completed; $total commands, $per_job per job"
  rows+=("[\"$commit ($tree)\", \"$completed/$JOBS\", \"$total\", \"$per_job\"]")
  stop_pids
  wait 2>/dev/null || true
done
node "$(dirname "$0")/../../lib/results.mjs" redis-commands <<JSON
{
  "title": "Redis commands per job in distributed mode",
  "script": "bench/http/runs/redis-commands.sh",
  "history": "docs/benchmarks/jobs.md",
  "command": "JOBS=$JOBS bash bench/http/runs/redis-commands.sh $*",
  "tables": [{
    "caption": "$JOBS small jobs posted one after another, run and read once, from each tree's sources:",
    "columns": ["tree", "completed", "Redis commands", "per job"],
    "rows": [$(IFS=,; echo "${rows[*]}")]
  }]
}
JSON
