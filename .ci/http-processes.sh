#!/usr/bin/env bash
# The matrix entry of several HTTP processes: the contract and job tests once more, each service they
# reach through HTTP only started as `algoserve serve --http-processes 2` in a child process, on either
# backend, so that every request may land on either process. The tests
# that need a service's internals, or count a bound each process keeps, run as in the first pass or
# skip, saying why (test/helpers/served.ts). Not a second copy of the tests: the same files, one setting.
#
# Usage: bash .ci/http-processes.sh [PROCESSES]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=(
  test/routes/invoke.test.ts
  test/routes/jobs.test.ts
  test/routes/job-control/cancel.test.ts
  test/routes/job-control/events.test.ts
  test/routes/job-control/idempotency-key.test.ts
  test/routes/job-control/list.test.ts
  test/routes/job-control/summary.test.ts
  test/routes/job-control/wait.test.ts
  test/http/api-keys.test.ts
)
started=$(date +%s)
ALGOSERVE_TEST_HTTP_PROCESSES=${1:-2} node test/run.mjs "${FILES[@]}"
echo "the tests with ${1:-2} HTTP processes took $(($(date +%s) - started)) s"
