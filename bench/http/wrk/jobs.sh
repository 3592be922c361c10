#!/usr/bin/env bash
# Jobs end to end: POST /jobs to completed, on the embedded store. Small primes are posted by wrk for
# DURATION with CONNECTIONS connections (closed loop: as fast as the service takes them); 600-digit
# primes are posted COUNT at a time by bench/http/wrk/job-stats.mjs. Each job's created_at and completed_at
# give the creation-to-completion time; jobs per second is jobs / (last completion - first creation).
# Baseline in the same run: POST /invoke with the same number, same connections and duration.
# With REDIS=1, distributed mode instead: a redis-server of its own (AOF everysec, noeviction) on a
# free port, one `algoserve serve` and WORKERS_LIST (1 and 2) `algoserve worker` processes; the
# baseline in the same run is raw BullMQ on the same Redis (bench/http/reference/bullmq-raw.mjs: add and
# process an empty job, no HTTP), with the worker's concurrency.
# RATE=<jobs per second> paces the posts instead of a closed loop: each wrk thread sends on a fixed
# schedule (wrk's delay hook), so the service is offered RATE jobs/s whatever its latency, as long as
# one of the CONNECTIONS is free; the raw BullMQ baseline adds at RATE on the same kind of schedule. p99
# at a rate is what the Redis mode's target names (docs/benchmarks/README.md). WARMUP=<duration> (Redis
# mode; default 0) first runs the same load for that long, its jobs not counted, so that the figures are of
# warm processes.
# Usage: bash bench/http/wrk/jobs.sh   (DURATION=10s CONNECTIONS=16 ROUNDS=3 COUNT=200 LOG_LEVEL=info
#        REDIS=1 RATE=1500 WARMUP=3s)
set -euo pipefail
cd "$(dirname "$0")/../../.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=2
export THREADS RATE=${RATE:-}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-0}
COUNT=${COUNT:-200}
LOG_LEVEL=${LOG_LEVEL:-info}
PORT=${PORT:-18090}
# nextprime(10^599) by PARI/GP: a 600-digit prime.
PRIME_600="1$(printf '0%.0s' $(seq 1 595))2161"
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit jobs "jobs end to end" \
  docs/benchmarks/jobs.md "npm run bench:jobs" DURATION CONNECTIONS ROUNDS COUNT LOG_LEVEL REDIS RATE WARMUP WORKERS_LIST NODE
service_pid=
worker_pids=()
redis_pid=
on_exit() {
  if [ -n "$service_pid" ]; then kill "$service_pid" 2>/dev/null || true; fi
  for pid in "${worker_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$redis_pid" ]; then kill -9 "$redis_pid" 2>/dev/null || true; fi
}

npm run build --silent

start_service() {
  rm -rf "$work/data"
  start_algoserve serve . "$PORT" "$work/service.log" -- --data-dir "$work/data" --log-level "$LOG_LEVEL"
  service_pid=$algoserve_pid
}

stop_service() {
  kill "$service_pid"
  wait "$service_pid" || true
  service_pid=
}


cat >"$work/invoke.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"number":1000003}'
LUA

# CPU ticks (user + system) of each process given, space-separated.
cpu_ticks() { for pid in "$@"; do printf '%d ' "$(process_ticks "$pid")"; done; }
# Per process, the CPU time between two cpu_ticks readings divided by the jobs, in µs.
cpu_per_job() {
  local jobs=$1 ticks
  ticks=$(getconf CLK_TCK)
  paste -d' ' <(tr ' ' '\n' <<<"$2" | grep .) <(tr ' ' '\n' <<<"$3" | grep .) |
    awk -v jobs="$jobs" -v hz="$ticks" '{ printf "%s%d", (NR > 1 ? ", " : ""), ($2 - $1) * 1e6 / hz / jobs }'
}
# Waits until BullMQ's wait and active lists of PrimeChecker's queue are empty (the jobs are done), up
# to 120 s. Builds before 2026-11-26 kept every job in one queue, `jobs`: both are counted.
until_done() {
  for _ in $(seq 1 1200); do
    local left=0 queue
    for queue in jobs.PrimeChecker jobs; do
      left=$((left + $(redis-cli -p "$redis_port" llen "$prefix:$queue:wait") + $(redis-cli -p "$redis_port" llen "$prefix:$queue:active")))
    done
    [ "$left" -eq 0 ] && return 0
    sleep 0.1
  done
}

if [ "${REDIS:-}" = "1" ]; then
  WORKERS_LIST=${WORKERS_LIST:-1 2}
  start_redis_server "$work/redis" --appendonly yes --appendfsync everysec --maxmemory-policy noeviction
  export ALGOSERVE_REDIS_URL=$redis_url
  warmed=
  [ "$WARMUP" != "0" ] && warmed=", each after $WARMUP of the same load not counted"
  echo "## Redis mode, small primes (1000003): wrk -t$THREADS -c$CONNECTIONS -d$DURATION${RATE:+ paced at $RATE/s}, $ROUNDS rounds$warmed; raw BullMQ baseline"
  for round in $(seq 1 "$ROUNDS"); do
    for workers in $WORKERS_LIST; do
      prefix="bench$round$workers"
      redis-cli -p "$redis_port" flushall >/dev/null
      start_algoserve ALGOSERVE_REDIS_PREFIX="$prefix" serve . "$PORT" "$work/service.log" -- --log-level "$LOG_LEVEL"
      service_pid=$algoserve_pid
      worker_pids=()
      for w in $(seq 1 "$workers"); do
        start_algoserve ALGOSERVE_REDIS_PREFIX="$prefix" worker . $((PORT + w)) "$work/worker-$w.log" -- \
          --log-level "$LOG_LEVEL"
        worker_pids+=("$algoserve_pid")
      done
      if [ "$WARMUP" != "0" ]; then
        # The same load first, its jobs not counted: V8 compiles the hot paths in the first seconds.
        mkdir -p "$work/warmup"
        IDS_DIR="$work/warmup" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s bench/http/wrk/post-jobs.lua "http://127.0.0.1:$PORT/jobs" >/dev/null
        until_done
        rm -rf "$work/warmup"
      fi
      ids="$work/ids-redis-$round-$workers"
      mkdir -p "$ids"
      cpu_before=$(cpu_ticks "$service_pid" "${worker_pids[@]}" "$redis_pid")
      IDS_DIR="$ids" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s bench/http/wrk/post-jobs.lua "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
      posted=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
      jobs=$(cat "$ids"/*.txt | wc -l)
      # Read before job-stats, whose GETs would count as the API's work.
      until_done
      cpu=$(cpu_per_job "$jobs" "$cpu_before" "$(cpu_ticks "$service_pid" "${worker_pids[@]}" "$redis_pid")")
      stats=$(node bench/http/wrk/job-stats.mjs "http://127.0.0.1:$PORT" "$ids")
      used=$(redis-cli -p "$redis_port" info memory | awk -F: '/^used_memory:/ {print $2}' | tr -d '\r')
      echo "round $round, $workers worker(s): POST /jobs $posted req/s; $stats; CPU µs per job (API, worker(s), Redis): $cpu; redis used_memory $used B for $jobs finished jobs"
      kill "$service_pid" "${worker_pids[@]}"
      wait "$service_pid" "${worker_pids[@]}" 2>/dev/null || true
      service_pid=
      worker_pids=()
    done
    redis-cli -p "$redis_port" flushall >/dev/null
    echo "round $round: raw BullMQ, 16 adders${RATE:+ at $RATE/s}, worker concurrency 1: $(node bench/http/reference/bullmq-raw.mjs "$redis_url" "${DURATION%s}" 16 1 "$RATE")"
  done
  exit 0
fi

echo "## small primes (1000003): wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  start_service
  ids="$work/ids-small-$round"
  mkdir -p "$ids"
  IDS_DIR="$ids" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s bench/http/wrk/post-jobs.lua "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
  posted=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  stats=$(node bench/http/wrk/job-stats.mjs "http://127.0.0.1:$PORT" "$ids")
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$work/invoke.lua" "http://127.0.0.1:$PORT/invoke" >"$work/wrk.out"
  invoked=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  echo "round $round: POST /jobs $posted req/s; $stats; baseline POST /invoke $invoked req/s"
  stop_service
done

echo "## 600-digit primes: $COUNT jobs posted by 16 clients, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  start_service
  echo "round $round: $(node bench/http/wrk/job-stats.mjs "http://127.0.0.1:$PORT" "$work/ids-600-$round.txt" --post "$COUNT" --number "$PRIME_600")"
  stop_service
done
