#!/usr/bin/env bash
# Counts, not times, of the small-prime POST /invoke load, for each variant: the bytes allocated per request
# (V8's sampling heap profiler, bench/http/profile/heap-sampler.mjs), the young-generation collections
# (scavenges) and mark-compacts per 1000 requests (node --trace-gc), and the system calls per request (strace
# -f -c, all threads). Counts move little with the machine's load, where CPU time moves by a quarter or more,
# so they show a small change that an A/B of times cannot. Each variant: a 3 s warm-up, then 5 s measured,
# once per measure. Variants as bench/http/wrk/invoke-ab.sh takes them.
#
# Usage: bash bench/http/wrk/invoke-counts.sh 'NAME|REV|NODE_FLAGS|SERVICE_FLAGS' ...   (CONNECTIONS=32)
#   e.g. bash bench/http/wrk/invoke-counts.sh 'before|HEAD~1||' 'now|WORKTREE||' \
#          'now warn|WORKTREE||--log-level warn'
set -euo pipefail
cd "$(dirname "$0")/../../.."

[ $# -gt 0 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
CONNECTIONS=${CONNECTIONS:-32}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit invoke-counts "allocations, collections and system calls per small /invoke" \
  docs/benchmarks/invoke.md "" CONNECTIONS NODE
command -v strace >/dev/null || { echo "bench/http/wrk/invoke-counts.sh needs strace (apt-get install strace)" >&2; exit 1; }

cat >"$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"number": 97}'
LUA
load() { wrk -t1 -c"$CONNECTIONS" -d"$1" -s "$work/post.lua" "http://127.0.0.1:18300/invoke"; }
requests() { awk '/requests in/ { print $1 }' "$1"; }

# Starts variant $1's service on port 18300 with extra node flags $2 (and environment $3); sets $service.
start_service() {
  local tree=$1 extra=$2
  # shellcheck disable=SC2086 # the environment and service flags are word lists
  start_algoserve ${3:-} serve "$tree" 18300 "$work/service.log" "${node_flags:---max-semi-space-size=1} $extra" -- \
    --data-dir "$work/data" --drain-delay-ms 0 ${service_flags:---log-level info}
  service=$algoserve_pid
  load 3s >/dev/null
}
stop_service() {
  kill "$service"
  wait "$service" || true
  rm -rf "$work/data"
}

echo "| variant | bytes allocated per request | scavenges per 1000 requests | mark-compacts | system calls per request: all | writev | read | write | futex | epoll |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for spec in "$@"; do
  IFS='|' read -r name rev node_flags service_flags <<<"$spec"
  tree=$(revision_tree "$rev")

  start_service "$tree" "--import $(pwd)/bench/http/profile/heap-sampler.mjs" "HEAP_PROFILE=$work/heap.json"
  kill -USR2 "$service"
  load 5s >"$work/wrk.out"
  kill -USR2 "$service"
  for _ in $(seq 1 100); do [ -s "$work/heap.json" ] && break; sleep 0.1; done
  bytes=$(node -e '
    const sum = (node) => node.selfSize + node.children.reduce((total, child) => total + sum(child), 0)
    const profile = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))
    console.log(Math.round(sum(profile.head) / Number(process.argv[2])))' "$work/heap.json" "$(requests "$work/wrk.out")")
  stop_service
  rm -f "$work/heap.json"

  start_service "$tree" --trace-gc
  scavenges=$(grep -c Scavenge "$work/service.log" || true)
  compacts=$(grep -c Mark-Compact "$work/service.log" || true)
  load 5s >"$work/wrk.out"
  gc=$(awk -v s0="$scavenges" -v m0="$compacts" -v n="$(requests "$work/wrk.out")" \
    '/Scavenge/ { s++ } /Mark-Compact/ { m++ } END { printf "%.1f | %d", (s - s0) * 1000 / n, m - m0 }' "$work/service.log")
  stop_service

  start_service "$tree" ""
  strace -f -c -o "$work/strace.out" -p "$service" 2>/dev/null &
  tracer=$!
  sleep 0.5
  load 5s >"$work/wrk.out"
  kill -INT "$tracer"
  wait "$tracer" || true
  calls=$(awk -v n="$(requests "$work/wrk.out")" '
    $NF == "total" { all = $4 }
    $NF ~ /^(writev|read|write|futex|epoll_pwait|epoll_wait)$/ { c[$NF == "epoll_wait" ? "epoll_pwait" : $NF] += $4 }
    END { printf "%.3f | %.3f | %.3f | %.3f | %.3f | %.3f", all / n, c["writev"] / n, c["read"] / n, c["write"] / n, c["futex"] / n, c["epoll_pwait"] / n }' "$work/strace.out")
  stop_service

  echo "| $name | $bytes | $gc | $calls |"
done
