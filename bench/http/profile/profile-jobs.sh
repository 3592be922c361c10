#!/usr/bin/env bash
# The account of a small job's CPU, by one command: the service built from this checkout runs under V8's
# CPU profiler (100 µs interval) while wrk posts bench/http/wrk/jobs.sh's small-prime jobs, WARMUP first (not
# counted) then DURATION measured; then SIGTERM, and bench/http/profile/profile-job-parts.mjs gives each
# sample of the measured window to its part of the job path. Also prints the process's CPU µs per job over the
# measured window (from /proc; the profiler's own cost is in it). Embedded: wrk's closed loop (CONNECTIONS).
# With REDIS=1: a redis-server of its own, one `algoserve serve` and one `algoserve worker`, each profiled and
# accounted for separately, wrk paced at RATE jobs/s (as jobs.sh's REDIS=1 RATE=).
# Usage: bash bench/http/profile/profile-jobs.sh   (WARMUP=3s DURATION=10s CONNECTIONS=16; REDIS=1 RATE=1500)
set -euo pipefail
cd "$(dirname "$0")/../../.."

WARMUP=${WARMUP:-3s}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
PORT=${PORT:-18490}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit profile-jobs "where a small job's CPU goes: the account" \
  docs/benchmarks/jobs.md "" WARMUP DURATION CONNECTIONS REDIS RATE NODE

npm run build --silent
export THREADS=2 RATE=
if [ "${REDIS:-}" = "1" ]; then RATE=${RATE:-1500}; fi
hz=$(getconf CLK_TCK)
now() { date +%s.%N; }

declare -A started pid_of
# Starts `algoserve ROLE` on PORT with ARGS... under the profiler, its profile in $work/prof-ROLE; sets
# started[ROLE] and pid_of[ROLE].
profiled() {
  local role=$1 port=$2
  shift 2
  mkdir -p "$work/prof-$role"
  started[$role]=$(now)
  start_algoserve "$role" . "$port" "$work/$role.log" \
    "--max-semi-space-size=1 --cpu-prof --cpu-prof-dir=$work/prof-$role --cpu-prof-interval 100" -- \
    "$@" --log-level info --drain-delay-ms 0
  pid_of[$role]=$algoserve_pid
}

roles=(serve)
if [ "${REDIS:-}" = "1" ]; then
  start_redis_server "$work/redis" --appendonly yes --appendfsync everysec --maxmemory-policy noeviction
  export ALGOSERVE_REDIS_URL="redis://127.0.0.1:$redis_port"
  profiled serve "$PORT"
  profiled worker $((PORT + 1))
  roles+=(worker)
else
  profiled serve "$PORT" --data-dir "$work/data"
fi

mkdir -p "$work/warmup" "$work/ids"
IDS_DIR="$work/warmup" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s bench/http/wrk/post-jobs.lua "http://127.0.0.1:$PORT/jobs" >/dev/null
sleep 0.5
measured_at=$(now)
declare -A before
for role in "${roles[@]}"; do before[$role]=$(process_ticks "${pid_of[$role]}"); done
IDS_DIR="$work/ids" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s bench/http/wrk/post-jobs.lua "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
# The jobs posted last end within a few ms in a closed loop; paced, within the p99.
sleep 0.5
jobs=$(cat "$work"/ids/*.txt | wc -l)
keep=$(awk -v a="$measured_at" -v b="$(now)" 'BEGIN { print b - a }')
echo "## The job path's account: ${RATE:+$RATE/s paced, }wrk -t$THREADS -c$CONNECTIONS, $WARMUP warm-up then $DURATION; $jobs jobs (POST $(awk '/Requests\/sec/ {print $2}' "$work/wrk.out") req/s)${REDIS:+, distributed mode}"
for role in "${roles[@]}"; do
  after=$(process_ticks "${pid_of[$role]}")
  echo
  echo "### algoserve $role: $(awk -v t=$((after - before[$role])) -v hz="$hz" -v n="$jobs" 'BEGIN { printf "%.0f", t / hz * 1e6 / n }') CPU µs per job under the profiler"
done
for role in "${roles[@]}"; do kill "${pid_of[$role]}"; done
for role in "${roles[@]}"; do wait "${pid_of[$role]}" 2>/dev/null || true; done
for role in "${roles[@]}"; do
  echo
  echo "### algoserve $role's main thread"
  skip=$(awk -v a="${started[$role]}" -v b="$measured_at" 'BEGIN { print b - a }')
  node bench/http/profile/profile-job-parts.mjs "$(ls "$work/prof-$role"/CPU.*.0.001.cpuprofile)" "$skip" "$keep"
done
