#!/usr/bin/env bash
# What one POST /jobs costs the API process in distributed mode, for several builds side by side: each
# revision is built in a temporary worktree and started as `algoserve serve` on a redis-server of this
# script's own (no worker: the jobs wait, so only the API's work is counted). wrk posts small-prime jobs at
# RATE on a fixed schedule (bench/http/wrk/pace.lua, as bench/http/wrk/jobs.sh); rounds alternate between the
# builds, each after a warm-up of the same load. Reports the API's CPU time per post (user + system, from
# /proc) and wrk's p99, each round and the median.
# Usage: bash bench/http/wrk/jobs-api-ab.sh 'NAME|REV|NODE_FLAGS' ...   (RATE=1500 DURATION=5s ROUNDS=5;
#        REV: a git revision, WORKTREE for this checkout with its uncommitted changes, or the folder of a
#        built checkout)
#   e.g. bash bench/http/wrk/jobs-api-ab.sh 'before|HEAD~1|' 'now|HEAD|' \
#          'now, 8 MB|HEAD|--max-semi-space-size=8'
# NODE_FLAGS default to npm start's (--max-semi-space-size=1).
set -euo pipefail
cd "$(dirname "$0")/../../.."

[ $# -gt 0 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "bench/http/wrk/jobs-api-ab.sh needs redis-server" >&2; exit 1; }
RATE=${RATE:-1500}
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-18290}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit jobs-api-ab "what one POST /jobs costs the API in distributed mode, revisions side by side" \
  docs/benchmarks/jobs.md "" RATE DURATION ROUNDS NODE

start_redis_server "$work/redis" --appendonly no --maxmemory-policy noeviction
export THREADS=2 RATE

names=()
trees=()
flags=()
for spec in "$@"; do
  IFS='|' read -r name rev node_flags <<<"$spec"
  tree=$(revision_tree "$rev")
  names+=("$name")
  trees+=("$tree")
  flags+=("$node_flags")
done

hz=$(getconf CLK_TCK)
# Appends "<CPU µs per post> <p99 ms>" to $work/<i>.rounds.
measure() {
  local i=$1 pid before after posts
  redis-cli -p "$redis_port" flushall >/dev/null
  start_algoserve ALGOSERVE_REDIS_URL="redis://127.0.0.1:$redis_port" ALGOSERVE_MAX_PENDING_JOBS=1000000 \
    serve "${trees[$i]}" "$PORT" "$work/service.log" "${flags[$i]}" -- --log-level info
  pid=$algoserve_pid
  mkdir -p "$work/ids"
  IDS_DIR="$work/ids" wrk -t"$THREADS" -c64 -d2s -s bench/http/wrk/post-jobs.lua "http://127.0.0.1:$PORT/jobs" >/dev/null
  rm -rf "$work/ids" && mkdir -p "$work/ids"
  before=$(process_ticks "$pid")
  IDS_DIR="$work/ids" wrk -t"$THREADS" -c64 -d"$DURATION" --latency -s bench/http/wrk/post-jobs.lua \
    "http://127.0.0.1:$PORT/jobs" >"$work/wrk.out"
  after=$(process_ticks "$pid")
  posts=$(cat "$work"/ids/*.txt | wc -l)
  echo "$(awk -v t=$((after - before)) -v hz="$hz" -v n="$posts" 'BEGIN { printf "%.0f", t / hz * 1e6 / n }')" \
    "$(wrk_summary "$work/wrk.out" | cut -d' ' -f2)" >>"$work/$i.rounds"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
for _ in $(seq 1 "$ROUNDS"); do
  for ((i = 0; i < ${#names[@]}; i++)); do measure "$i"; done
done

echo "## POST /jobs in distributed mode, the API alone: $RATE/s for $DURATION after 2 s of warm-up, $ROUNDS alternating rounds"
echo
echo "| build | API CPU µs per post, median | each round | p99 ms, median |"
echo "|---|---|---|---|"
for ((i = 0; i < ${#names[@]}; i++)); do
  echo "| ${names[$i]} | $(cut -d' ' -f1 "$work/$i.rounds" | median) | $(cut -d' ' -f1 "$work/$i.rounds" | tr '\n' ' ')|" \
    "$(cut -d' ' -f2 "$work/$i.rounds" | median) |"
done
