#!/usr/bin/env bash
# Jobs end to end on the embedded store, for several builds side by side: the small-prime load of
# bench/http/wrk/jobs.sh (wrk POSTs jobs as fast as the service answers, closed loop), with rounds that
# alternate between the builds, each on a fresh data directory. Reports each build's jobs per second and
# p99 creation to end (bench/http/wrk/job-stats.mjs, from the jobs' own timestamps) and its CPU time per job
# (user + system of the service and its HTTP processes, from /proc, from the first post until its jobs have
# ended, before they are read back), each round and the median, and the part of it in the process it
# started (with several HTTP processes, the primary, which keeps the store and runs the jobs). With
# REDIS=1, distributed mode: a redis-server of the script's own (AOF everysec, as jobs.sh's), flushed
# before each round, one `algoserve serve` and one `algoserve worker` of the build, wrk paced at RATE
# jobs/s (bench/http/wrk/pace.lua) after WARMUP of the same load; then the CPU per job is the API's and
# the worker's, each.
# On the embedded store RATE and WARMUP (both unset by default) pace the posts too and warm each build up
# first, so that builds of different rates compare their p99 at one offered rate, once warm.
# Usage: bash bench/http/wrk/jobs-ab.sh 'NAME|REV|NODE_FLAGS|JOB_BODY|SERVICE_ARGS' ...   (DURATION=10s
#        CONNECTIONS=16 ROUNDS=5; REDIS=1 RATE=1500 WARMUP=2s; REV: a git revision, WORKTREE for this
#        checkout with its uncommitted changes, or the folder of a built checkout)
#   e.g. bash bench/http/wrk/jobs-ab.sh 'parent|HEAD~1|' 'change|WORKTREE|'
# NODE_FLAGS (for both processes) default to npm start's (--max-semi-space-size=1) for `serve` and npm run
# worker's (none) for `worker`. JOB_BODY (default the small prime's) and
# SERVICE_ARGS (added to `serve` and `worker`) let a build post other jobs, e.g. a module algorithm's:
#   'collatz|HEAD||{"algorithm":"Collatz","params":{"n":27}}|--algorithms examples/algorithms/collatz.mjs'
set -euo pipefail
cd "$(dirname "$0")/../../.."

[ $# -gt 0 ] || { sed -n '2,22p' "$0" >&2; exit 2; }
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-18390}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit jobs-ab "jobs end to end, revisions side by side" \
  docs/benchmarks/jobs.md "" DURATION CONNECTIONS ROUNDS REDIS RATE WARMUP NODE

export THREADS=2
if [ "${REDIS:-}" = "1" ]; then
  export RATE=${RATE:-1500}
  WARMUP=${WARMUP:-2s}
  start_redis_server "$work/redis" --appendonly yes --appendfsync everysec --maxmemory-policy noeviction
else
  export RATE=${RATE:-}
  WARMUP=${WARMUP:-}
fi

names=()
trees=()
flags=()
bodies=()
service_args=()
for spec in "$@"; do
  IFS='|' read -r name rev node_flags body args <<<"$spec"
  tree=$(revision_tree "$rev")
  names+=("$name")
  trees+=("$tree")
  flags+=("$node_flags")
  bodies+=("$body")
  service_args+=("$args")
done

hz=$(getconf CLK_TCK)
# Waits until job `id` has ended (the last one posted: jobs start in creation order).
until_ended() {
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$PORT/jobs/$1" | grep -q '"status":"\(completed\|failed\)"' && return 0
    sleep 0.05
  done
}
# Appends "<jobs/s> <p99 ms> <API CPU µs per job> <worker CPU µs per job>" to $work/<i>.rounds.
measure_redis() {
  local i=$1 api worker api_ticks worker_ticks jobs stats
  redis-cli -p "$redis_port" flushall >/dev/null
  rm -rf "$work/ids" "$work/warmup"
  mkdir -p "$work/ids" "$work/warmup"
  export ALGOSERVE_REDIS_URL="redis://127.0.0.1:$redis_port"
  # shellcheck disable=SC2086 # the service's arguments are a word list
  start_algoserve serve "${trees[$i]}" "$PORT" "$work/service.log" "${flags[$i]}" -- --log-level info ${service_args[$i]}
  api=$algoserve_pid
  # shellcheck disable=SC2086
  start_algoserve worker "${trees[$i]}" $((PORT + 1)) "$work/worker.log" "${flags[$i]}" -- --log-level info \
    ${service_args[$i]}
  worker=$algoserve_pid
  JOB_BODY=${bodies[$i]:-} IDS_DIR="$work/warmup" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s bench/http/wrk/post-jobs.lua \
    "http://127.0.0.1:$PORT/jobs" >/dev/null
  until_ended "$(tail -qn1 "$work"/warmup/*.txt | tail -n1)"
  api_ticks=$(process_ticks "$api")
  worker_ticks=$(process_ticks "$worker")
  JOB_BODY=${bodies[$i]:-} IDS_DIR="$work/ids" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s bench/http/wrk/post-jobs.lua \
    "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
  until_ended "$(tail -qn1 "$work"/ids/*.txt | tail -n1)"
  jobs=$(cat "$work"/ids/*.txt | wc -l)
  api_ticks=$(($(process_ticks "$api") - api_ticks))
  worker_ticks=$(($(process_ticks "$worker") - worker_ticks))
  stats=$(node bench/http/wrk/job-stats.mjs "http://127.0.0.1:$PORT" "$work/ids")
  echo "$stats" | node -e '
    const s = JSON.parse(require("fs").readFileSync(0, "utf8"))
    const [api, worker, hz, jobs] = process.argv.slice(1).map(Number)
    if (s.failed > 0) console.error(`${s.failed} jobs failed`)
    console.log(s.jobs_per_s, s.p99_ms, Math.round(api / hz * 1e6 / jobs), Math.round(worker / hz * 1e6 / jobs))
  ' "$api_ticks" "$worker_ticks" "$hz" "$jobs" >>"$work/$i.rounds"
  kill "$api" "$worker"
  wait "$api" "$worker" 2>/dev/null || true
}
# Appends "<jobs/s> <p99 ms> <CPU µs per job> <POST req/s> <of it, the started process's>" to
# $work/<i>.rounds.
measure() {
  local i=$1 pid before after own jobs stats
  rm -rf "$work/data" "$work/ids" "$work/warmup"
  mkdir -p "$work/ids" "$work/warmup"
  # shellcheck disable=SC2086 # the service's arguments are a word list
  start_algoserve serve "${trees[$i]}" "$PORT" "$work/service.log" "${flags[$i]}" -- --data-dir "$work/data" \
    --log-level info ${service_args[$i]}
  pid=$algoserve_pid
  if [ -n "$WARMUP" ]; then
    JOB_BODY=${bodies[$i]:-} IDS_DIR="$work/warmup" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s bench/http/wrk/post-jobs.lua \
      "http://127.0.0.1:$PORT/jobs" >/dev/null
    until_ended "$(tail -qn1 "$work"/warmup/*.txt | tail -n1)"
  fi
  before=$(tree_ticks "$pid")
  own=$(process_ticks "$pid")
  JOB_BODY=${bodies[$i]:-} IDS_DIR="$work/ids" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s bench/http/wrk/post-jobs.lua \
    "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
  until_ended "$(tail -qn1 "$work"/ids/*.txt | tail -n1)"
  after=$(tree_ticks "$pid")
  own=$(($(process_ticks "$pid") - own))
  jobs=$(cat "$work"/ids/*.txt | wc -l)
  stats=$(node bench/http/wrk/job-stats.mjs "http://127.0.0.1:$PORT" "$work/ids")
  echo "$stats" | node -e '
    const s = JSON.parse(require("fs").readFileSync(0, "utf8"))
    const [ticks, hz, jobs, posted, own] = process.argv.slice(1).map(Number)
    if (s.failed > 0) console.error(`${s.failed} jobs failed`)
    const perJob = (t) => Math.round(t / hz * 1e6 / jobs)
    console.log(s.jobs_per_s, s.p99_ms, perJob(ticks), posted, perJob(own))
  ' $((after - before)) "$hz" "$jobs" "$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")" "$own" >>"$work/$i.rounds"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
for _ in $(seq 1 "$ROUNDS"); do
  for ((i = 0; i < ${#names[@]}; i++)); do
    if [ "${REDIS:-}" = "1" ]; then measure_redis "$i"; else measure "$i"; fi
  done
done

if [ "${REDIS:-}" = "1" ]; then
  echo "## Small-prime jobs in distributed mode (1 API, 1 worker): $RATE/s paced, $CONNECTIONS connections, $DURATION after $WARMUP of warm-up, $ROUNDS alternating rounds"
  echo
  echo "| build | API CPU µs per job, median | each round | worker CPU µs per job, median | each round | jobs/s | p99 ms, median |"
  echo "|---|---|---|---|---|---|---|"
  for ((i = 0; i < ${#names[@]}; i++)); do
    echo "| ${names[$i]} | $(cut -d' ' -f3 "$work/$i.rounds" | median) | $(cut -d' ' -f3 "$work/$i.rounds" | tr '\n' ' ')|" \
      "$(cut -d' ' -f4 "$work/$i.rounds" | median) | $(cut -d' ' -f4 "$work/$i.rounds" | tr '\n' ' ')|" \
      "$(cut -d' ' -f1 "$work/$i.rounds" | median) | $(cut -d' ' -f2 "$work/$i.rounds" | median) |"
  done
  exit 0
fi

load="closed loop"
if [ -n "$RATE" ]; then load="paced at $RATE/s"; fi
echo "## Small-prime jobs on the embedded store: wrk -t$THREADS -c$CONNECTIONS -d$DURATION $load${WARMUP:+ after $WARMUP of warm-up}, $ROUNDS alternating rounds"
echo
echo "| build | jobs/s, median | of the first | each round | p99 ms, median | CPU µs per job, median | each round | of it, the started process's, median |"
echo "|---|---|---|---|---|---|---|---|"
first=$(cut -d' ' -f1 "$work/0.rounds" | median)
for ((i = 0; i < ${#names[@]}; i++)); do
  rate=$(cut -d' ' -f1 "$work/$i.rounds" | median)
  echo "| ${names[$i]} | $rate | $(awk -v a="$rate" -v b="$first" 'BEGIN { printf "%.2f", a / b }') |" \
    "$(cut -d' ' -f1 "$work/$i.rounds" | tr '\n' ' ')| $(cut -d' ' -f2 "$work/$i.rounds" | median) |" \
    "$(cut -d' ' -f3 "$work/$i.rounds" | median) | $(cut -d' ' -f3 "$work/$i.rounds" | tr '\n' ' ')|" \
    "$(cut -d' ' -f5 "$work/$i.rounds" | median) |"
done
