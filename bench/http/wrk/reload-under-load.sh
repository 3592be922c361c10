#!/usr/bin/env bash
# Reloading the algorithms under load, against the same load without reloads, on one `algoserve serve` of
# this checkout (embedded store): wrk paced at INVOKE_RATE on POST /algorithms/Sum/invoke (a module that
# adds two integers) while bench/http/wrk/reload-jobs.mjs posts Sum jobs at JOB_RATE and reads each back.
# In the second phase a SIGHUP every second for PHASE_SECONDS alternately adds Sum 1.1.0 (a file put in
# the listed folder) and removes it. Reports the invoke rate reached, its p99 and the ratio of the two
# p99s, failed requests (non-2xx and socket errors), and the jobs lost or run on another version than the
# one pinned (the 202's Algorithm-Version, or a version never loaded when the 202 has none).
# Usage: bash bench/http/wrk/reload-under-load.sh
#        (PHASE_SECONDS=30 INVOKE_RATE=2000 JOB_RATE=500 CONNECTIONS=32 PORT=18400; NO_BUILD=1: dist/ as is)
# wrk, the job client and the service share the machine: on 2 cores each takes a share from the others.
set -euo pipefail
cd "$(dirname "$0")/../../.."

SECONDS_EACH=${PHASE_SECONDS:-30}
INVOKE_RATE=${INVOKE_RATE:-2000}
JOB_RATE=${JOB_RATE:-500}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18400}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit reload-under-load "reloading the algorithms every second under load" \
  docs/benchmarks/reload.md "" PHASE_SECONDS INVOKE_RATE JOB_RATE CONNECTIONS NODE

if [ -z "${NO_BUILD:-}" ]; then npm run build --silent; fi

mkdir -p "$work/modules" "$work/aside"
module() {
  cat <<JS
export default {
  name: 'Sum',
  version: '$1',
  description: 'Adds two integers.',
  params: { type: 'object', required: ['a', 'b'], additionalProperties: false, properties: { a: { type: 'integer' }, b: { type: 'integer' } } },
  result: { type: 'object', required: ['sum'], properties: { sum: { type: 'integer' } } },
  run: ({ a, b }) => ({ sum: a + b }),
}
JS
}
module 1.0.0 >"$work/modules/sum-1.0.0.mjs"
module 1.1.0 >"$work/aside/sum-1.1.0.mjs"

start_algoserve serve . "$PORT" "$work/service.log" -- --data-dir "$work/data" --algorithms "$work/modules" \
  --max-pending-jobs 1000000 --log-level info
service=$algoserve_pid

cat >"$work/invoke.lua" <<'LUA'
dofile("bench/http/wrk/pace.lua")
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"a": 1, "b": 2}'
  pace_start()
end
LUA

# Alternately puts Sum 1.1.0 in the listed folder and takes it out, then signals, once a second.
reload_every_second() {
  local i
  for ((i = 1; i <= SECONDS_EACH; i++)); do
    sleep 1
    if ((i % 2)); then
      mv "$work/aside/sum-1.1.0.mjs" "$work/modules/"
    else
      mv "$work/modules/sum-1.1.0.mjs" "$work/aside/"
    fi
    kill -HUP "$service"
  done
}

# One phase: "<req/s> <p99 ms> <requests> <failed requests>" then the job client's JSON, on two lines.
phase() {
  local reloads=$1 reloader=''
  node bench/http/wrk/reload-jobs.mjs "http://127.0.0.1:$PORT" >"$work/jobs.json" &
  local jobs=$!
  if [ "$reloads" = yes ]; then
    reload_every_second &
    reloader=$!
  fi
  RATE=$INVOKE_RATE THREADS=2 wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" --latency -s "$work/invoke.lua" \
    "http://127.0.0.1:$PORT/algorithms/Sum/invoke" >"$work/wrk.out"
  if [ -n "$reloader" ]; then wait "$reloader"; fi
  wait "$jobs"
  local non2xx timeouts
  non2xx=$(awk '/Non-2xx/ { n += $NF } END { print n + 0 }' "$work/wrk.out")
  # wrk's own errors: connect, read, write, timeout (no answer within its 2 s).
  timeouts=$(awk '/Socket errors/ { gsub(/[^0-9 ]/, " "); for (i = 1; i <= NF; i++) n += $i } END { print n + 0 }' \
    "$work/wrk.out")
  echo "$(wrk_summary "$work/wrk.out") $non2xx $timeouts"
  cat "$work/jobs.json"
}

# Warm-up: the JIT and the store see the load once before it is measured.
JOB_SECONDS=5 RATE=$JOB_RATE node bench/http/wrk/reload-jobs.mjs "http://127.0.0.1:$PORT" >/dev/null &
warm=$!
RATE=$INVOKE_RATE THREADS=2 wrk -t2 -c"$CONNECTIONS" -d5s -s "$work/invoke.lua" \
  "http://127.0.0.1:$PORT/algorithms/Sum/invoke" >/dev/null
wait "$warm"

export JOB_SECONDS=$SECONDS_EACH RATE=$JOB_RATE
phase no >"$work/quiet.out"
before=$(grep -c '"algorithms reloaded"' "$work/service.log" || true)
phase yes >"$work/reloads.out"
reloaded=$(($(grep -c '"algorithms reloaded"' "$work/service.log" || true) - before))
refused=$(grep -c 'reload refused' "$work/service.log" || true)

row() {
  local name=$1 file=$2 rps p99 requests non2xx timeouts jobs
  read -r rps p99 requests non2xx timeouts <"$file"
  jobs=$(sed -n 2p "$file")
  node -e '
    const [name, rps, p99, requests, non2xx, timeouts] = process.argv.slice(1, 7)
    const j = JSON.parse(process.argv[7])
    const refused = Object.entries(j.refused).map(([status, n]) => `${n}× ${status}`).join(", ") || "none"
    console.log(`| ${name} | ${Math.round(rps)} | ${Number(p99).toFixed(2)} | ${requests} | ${non2xx} | ${timeouts} | ${j.posted} | ${j.accepted} | ${refused} | ${j.completed} | ${j.failed} | ${j.lost} | ${j.misversioned} |`)
  ' "$name" "$rps" "$p99" "$requests" "$non2xx" "$timeouts" "$jobs"
}
echo "## Reloads every second under load: POST /algorithms/Sum/invoke offered $INVOKE_RATE/s, jobs $JOB_RATE/s, $SECONDS_EACH s each"
echo
echo "| phase | invoke req/s | invoke p99 ms | requests | non-2xx | wrk errors | jobs posted | 202 | not accepted | completed | failed | lost | other version |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
row "no reloads" "$work/quiet.out"
row "a SIGHUP a second" "$work/reloads.out"
echo
p99_quiet=$(cut -d' ' -f2 <(head -1 "$work/quiet.out"))
p99_reloads=$(cut -d' ' -f2 <(head -1 "$work/reloads.out"))
awk -v a="$p99_reloads" -v b="$p99_quiet" -v n="$reloaded" -v r="$refused" 'BEGIN {
  printf "invoke p99 with reloads / without: %.2f; reloads done: %d, refused: %d\n", a / b, n, r }'
