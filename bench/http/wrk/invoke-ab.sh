#!/usr/bin/env bash
# Same-run A/B of service builds and settings on the small-prime POST /invoke load: each variant is a git
# revision started with its own node and service flags; wrk runs alternate between the variants and the bare
# node:http server (bench/http/reference/bare-server.mjs), and the script reports each one's median req/s, its
# ratio to the bare server, median p99, and median CPU time per request (user + system of the whole process,
# from /proc).
#
# Usage: bash bench/http/wrk/invoke-ab.sh 'NAME|REV|NODE_FLAGS|SERVICE_FLAGS[|ENV]' ...
#        (REV: a git revision, WORKTREE for this checkout with its uncommitted changes, or the folder of a
#        built checkout)
#        (DURATION=5s CONNECTIONS=32 ROUNDS=7; RATE= paces every run, bench/http/wrk/alternating-rounds.sh)
#   e.g. bash bench/http/wrk/invoke-ab.sh 'before|HEAD~2||' 'now|HEAD||' 'now-warn|HEAD||--log-level warn'
# NODE_FLAGS default to npm start's (--max-semi-space-size=1); SERVICE_FLAGS to `--log-level info`; ENV is
# NAME=VALUE words the variant's service is started with (OTEL_* for tracing, docs/tracing.md).
set -euo pipefail
cd "$(dirname "$0")/../../.."

[ $# -gt 0 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-7}
# shellcheck source=bench/lib/wrk-common.sh
. bench/lib/wrk-common.sh
results_on_exit invoke-ab "revisions and flags side by side on the small-prime /invoke load" \
  docs/benchmarks/invoke.md "npm run bench:ab" DURATION CONNECTIONS ROUNDS RATE NODE

names=(bare)
ports=(18200)
server_pids=()
port=18200
for spec in "$@"; do
  IFS='|' read -r name rev node_flags service_flags env_vars <<<"$spec"
  tree=$(revision_tree "$rev")
  port=$((port + 1))
  # shellcheck disable=SC2086 # the environment and service flags are word lists
  start_algoserve ${env_vars:-} serve "$tree" "$port" "$work/service-$port.log" "$node_flags" -- \
    --data-dir "$work/data-$port" ${service_flags:---log-level info}
  server_pids+=("$algoserve_pid")
  names+=("$name")
  ports+=("$port")
done
answer=$(curl -sf -H 'content-type: application/json' -d '{"number": 97}' "http://127.0.0.1:${ports[1]}/invoke")
node bench/http/reference/bare-server.mjs "${ports[0]}" "$answer" &
pids+=($!)
server_pids=($! "${server_pids[@]}")
wait_listening "${ports[0]}"

# shellcheck source=bench/http/wrk/alternating-rounds.sh
. bench/http/wrk/alternating-rounds.sh
alternating_rounds
echo "## Small-prime POST /invoke A/B: $CONNECTIONS connections${RATE:+ paced at $RATE/s}, $DURATION per run, median of $ROUNDS rounds"
echo
rounds_table
