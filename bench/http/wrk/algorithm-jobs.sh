#!/usr/bin/env bash
# Jobs of a user's algorithm end to end against PrimeChecker's small-prime jobs, in the same run on the same
# processes: POST /jobs to completed for the trivial module examples/algorithms/collatz.mjs (n = 27,
# microseconds of work on a worker thread) and for PrimeChecker with 1000003 (answered inline), one after the
# other in each round, each kind first in every other round. Closed loop, as bench/http/wrk/jobs.sh: wrk posts
# for DURATION with CONNECTIONS connections, and bench/http/wrk/job-stats.mjs reads the jobs back (jobs per
# second from the jobs' own created_at and completed_at). First on the embedded store (one `serve` per round),
# then, with redis-server installed, in distributed mode: a redis-server of its own on a free port (never
# 6379), one `serve` and one `worker` per round.
# Usage: bash bench/http/wrk/algorithm-jobs.sh   (DURATION=10s CONNECTIONS=16 ROUNDS=4 REDIS=0 to skip Redis)
set -euo pipefail
cd "$(dirname "$0")/../../.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
ROUNDS=${ROUNDS:-4}
PORT=${PORT:-18500}
MODULE=examples/algorithms/collatz.mjs
PRIME_BODY='{"algorithm":"PrimeChecker","params":{"number":1000003}}'
MODULE_BODY='{"algorithm":"Collatz","params":{"n":27}}'
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit algorithm-jobs "jobs of a module algorithm against PrimeChecker's" \
  docs/benchmarks/algorithms.md "npm run bench:algorithm-jobs" DURATION CONNECTIONS ROUNDS REDIS NODE
redis_pid=
on_exit() { if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null || true; fi; }

npm run build --silent
# A closed loop, whatever RATE the caller's environment holds (bench/http/wrk/pace.lua).
export RATE=

# Posts jobs of BODY for DURATION, waits for them and prints job-stats' figures (JSON).
measure() {
  local name=$1 body=$2 ids="$work/ids-$1-$3"
  mkdir -p "$ids"
  JOB_BODY=$body IDS_DIR=$ids wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s bench/http/wrk/post-jobs.lua "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
  node bench/http/wrk/job-stats.mjs "http://127.0.0.1:$PORT" "$ids"
}
rate() { sed -E 's/.*"jobs_per_s":([0-9]+).*/\1/'; }

# Runs ROUNDS rounds of both kinds of job on processes started by START and stopped by STOP, and prints
# each round and the medians.
compare() {
  local label=$1 start=$2 stop=$3
  : >"$work/prime.rates"
  : >"$work/module.rates"
  echo "## $label: wrk -t2 -c$CONNECTIONS -d$DURATION per kind of job, $ROUNDS rounds"
  echo
  for round in $(seq 1 "$ROUNDS"); do
    "$start" "$round"
    local prime module
    # Each kind first in every other round: the first posts meet processes still warming up.
    if [ $((round % 2)) -eq 1 ]; then
      prime=$(measure prime "$PRIME_BODY" "$label-$round")
      module=$(measure module "$MODULE_BODY" "$label-$round")
    else
      module=$(measure module "$MODULE_BODY" "$label-$round")
      prime=$(measure prime "$PRIME_BODY" "$label-$round")
    fi
    "$stop"
    echo "round $round: PrimeChecker 1000003 $prime"
    echo "round $round: Collatz n=27      $module"
    rate <<<"$prime" >>"$work/prime.rates"
    rate <<<"$module" >>"$work/module.rates"
  done
  local p m
  p=$(median <"$work/prime.rates")
  m=$(median <"$work/module.rates")
  echo
  echo "median jobs/s: PrimeChecker $p, Collatz $m; Collatz / PrimeChecker $(awk -v m="$m" -v p="$p" 'BEGIN { printf "%.2f", m / p }')"
  echo
}

service_pid=
worker_pid=
start_embedded() {
  rm -rf "$work/data"
  start_algoserve serve . "$PORT" "$work/service.log" -- --data-dir "$work/data" --algorithms "$MODULE"
  service_pid=$algoserve_pid
}
stop_processes() {
  kill "$service_pid" ${worker_pid:+"$worker_pid"} 2>/dev/null || true
  wait "$service_pid" ${worker_pid:+"$worker_pid"} 2>/dev/null || true
  service_pid=
  worker_pid=
  pids=()
}
compare embedded start_embedded stop_processes

if [ "${REDIS:-1}" = "0" ] || ! command -v redis-server >/dev/null; then exit 0; fi
start_redis_server "$work/redis" --appendonly yes --appendfsync everysec --maxmemory-policy noeviction
start_redis() {
  redis-cli -p "$redis_port" flushall >/dev/null
  local env=(ALGOSERVE_REDIS_URL="redis://127.0.0.1:$redis_port" ALGOSERVE_REDIS_PREFIX="bench$1" ALGOSERVE_ALGORITHMS="$MODULE")
  start_algoserve "${env[@]}" serve . "$PORT" "$work/service.log"
  service_pid=$algoserve_pid
  start_algoserve "${env[@]}" worker . $((PORT + 1)) "$work/worker.log"
  worker_pid=$algoserve_pid
}
compare "Redis, one serve and one worker" start_redis stop_processes
