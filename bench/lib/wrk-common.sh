# Sourced first by the wrk benchmarks (invoke.sh, invoke-ladder.sh, invoke-ab.sh, jobs.sh, jobs-api-ab.sh),
# from the repository's root: checks for wrk, makes the scratch folder $work, and on exit kills every process
# listed in the array pids, runs the script's own on_exit function if it has one, removes the worktrees of
# revision_tree and removes $work.

# NODE=<path to a node binary> runs the script's servers and clients on that Node instead of PATH's.
# Call the script with bash, not npm run: npm sets NODE to its own node for the scripts it runs.
if [ -n "${NODE:-}" ]; then PATH="$(dirname "$NODE"):$PATH"; fi
script="bench/http/$(basename "$(dirname "$0")")/$(basename "$0")"
echo "$script on Node $(node --version)" >&2

command -v wrk >/dev/null || { echo "$script needs wrk (apt-get install wrk)" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if declare -F on_exit >/dev/null; then on_exit; fi
  for tree in "$work"/tree-*; do [ -d "$tree" ] && git worktree remove --force "$tree"; done
  rm -rf "$work"
}
trap cleanup EXIT

# Waits up to 5 s for a 2xx from URL; otherwise prints LOG (when given) and stops the script.
wait_ready() {
  local url=$1 log=${2:-}
  for _ in $(seq 1 500); do curl -sf -o /dev/null "$url" && return 0; sleep 0.01; done
  echo "no answer from $url" >&2
  if [ -n "$log" ]; then cat "$log" >&2; fi
  exit 1
}

# Waits up to 5 s for a server to accept connections on PORT (for servers that answer only POSTs).
wait_listening() {
  local port=$1
  for _ in $(seq 1 500); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0; sleep 0.01; done
  echo "nothing listening on port $port" >&2
  exit 1
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Prints "<requests per second> <p99 in ms> <requests>" from the output of `wrk --latency`.
wrk_summary() {
  awk '
    /requests in/ { n = $1 }
    /Requests\/sec:/ { rps = $2 }
    /^ +99%/ { v = $2; unit = v; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
               p99 = (unit == "us") ? v / 1000 : (unit == "s") ? v * 1000 : v }
    END { printf "%s %.3f %s\n", rps, p99, n }' "$1"
}

# Prints the folder of git revision REV built in a worktree of its own under $work (once per commit), with
# this checkout's node_modules. REV may also be WORKTREE, this checkout as it is on disk, uncommitted changes
# included (built here, once), or the path of a folder that holds a built checkout (its dist/main.js).
revision_tree() {
  local commit tree
  if [ "$1" = WORKTREE ]; then
    if [ ! -e "$work/worktree-built" ]; then npm run build --silent >/dev/null && touch "$work/worktree-built"; fi
    pwd
    return
  fi
  if [ -f "$1/dist/main.js" ]; then
    (cd "$1" && pwd)
    return
  fi
  commit=$(git rev-parse --verify "$1^{commit}")
  tree="$work/tree-$commit"
  if [ ! -d "$tree" ]; then
    git worktree add --quiet --detach "$tree" "$commit"
    ln -s "$(pwd)/node_modules" "$tree/node_modules"
    (cd "$tree" && npm run build --silent >/dev/null)
  fi
  echo "$tree"
}
