#!/usr/bin/env bash
# How soon a dead worker's job runs again in Redis mode: one API and two workers on a redis-server of
# its own; a long job starts on worker 1, which is SIGKILLed once worker 2 is ready; prints the time
# from the kill to the job's new started_at. Usage: LOCK_MS=30000 bash bench/http/runs/takeover.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
LOCK_MS=${LOCK_MS:-30000}
PORT=${PORT:-18490}
# shellcheck source=bench/lib/common.sh
. bench/lib/common.sh
results_on_exit takeover "how soon a dead worker's job runs again" \
  docs/benchmarks/jobs.md "" LOCK_MS
# A worker in the middle of a long job would take its time to stop: every process is killed at the end.
stop_signal=KILL
start_redis_server "$work/redis" --appendonly yes --maxmemory-policy noeviction
export ALGOSERVE_REDIS_URL=$redis_url ALGOSERVE_JOB_LOCK_MS=$LOCK_MS ALGOSERVE_JOB_FACTOR_BUDGET_MS=600000 ALGOSERVE_LOG_LEVEL=warn
start_algoserve serve . "$PORT" '' none
start_algoserve worker . $((PORT + 1)) ''
w1=$algoserve_pid
rsa100=1522605027922533360535618378132637429718068114961380688657908494580122963258952897654000350692006139
id=$(curl -s -H 'content-type: application/json' -d "{\"algorithm\":\"PrimeChecker\",\"params\":{\"number\":$rsa100}}" "http://127.0.0.1:$PORT/jobs" | sed 's/.*"job_id":"\([0-9a-f]*\)".*/\1/')
job() { curl -s "http://127.0.0.1:$PORT/jobs/$id"; }
until job | grep -q '"status":"running"'; do sleep 0.05; done
first=$(job | sed 's/.*"started_at":"\([^"]*\)".*/\1/')
start_algoserve worker . $((PORT + 2)) ''
kill -9 "$w1"
killed=$(date +%s%3N)
until job | grep -q '"status":"running"' && [ "$(job | sed 's/.*"started_at":"\([^"]*\)".*/\1/')" != "$first" ]; do sleep 0.05; done
again=$(date -d "$(job | sed 's/.*"started_at":"\([^"]*\)".*/\1/')" +%s%3N)
echo "ALGOSERVE_JOB_LOCK_MS=$LOCK_MS: taken over $((again - killed)) ms after the SIGKILL"
