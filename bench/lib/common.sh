# Sourced by the shell benchmarks, from the repository's root, for what they all do around their measure:
# makes the scratch folder $work, and on exit stops every process listed in the array pids, runs the script's
# own on_exit function if it has one, removes the worktrees of revision_tree and removes $work; writes the
# script's results file from what it printed (results_on_exit). Also: a free port, waiting for readiness, a
# private redis-server, and another checkout built for a same-run A/B.

work=$(mktemp -d)
pids=()
# Stops every process listed in pids, the last started first (a service before the Redis it uses), with
# signal stop_signal (TERM unless the script sets another), and empties the list.
stop_signal=TERM
stop_pids() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -s "$stop_signal" "${pids[i]}" 2>/dev/null || true; done
  pids=()
}
cleanup() {
  local status=$?
  stop_pids
  if [ "$status" = 0 ] && [ "${#results[@]}" -gt 0 ]; then
    results_write "${results[@]}" || echo "no results file written" >&2
  fi
  if declare -F on_exit >/dev/null; then on_exit; fi
  for tree in "$work"/tree-*; do [ -d "$tree" ] && git worktree remove --force "$tree"; done
  rm -rf "$work"
}
trap cleanup EXIT
# Stopped by a signal, the script ends with its status (bash would otherwise end with the last command's, 0,
# and keep the report of a cut run); it does so once the command in the foreground has ended.
trap 'exit 130' INT
trap 'exit 143' TERM

# Whether process PID has ended (gone, or a child of the script's not waited for yet).
ended() {
  local state
  read -r _ _ state _ 2>/dev/null <"/proc/$1/stat" || return 0
  [ "$state" = Z ]
}

# Waits up to SECONDS (5 by default) for a 2xx from URL, and no longer than process PID (when given) lives;
# otherwise prints LOG (when given) and stops the script.
wait_ready() {
  local url=$1 log=${2:-} seconds=${3:-5} pid=${4:-}
  for _ in $(seq 1 $((seconds * 100))); do
    curl -sf -o /dev/null "$url" && return 0
    if [ -n "$pid" ] && ended "$pid"; then break; fi
    sleep 0.01
  done
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

# Prints a free TCP port of the loopback interface (closed again: the caller binds it next).
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

# Starts a redis-server of the script's own on a free port (never 6379), its files and log in DIR, with the
# redis-server options that follow DIR (persistence, eviction); waits until it answers PING. Sets redis_port,
# redis_url and redis_pid, and lists the process in pids.
start_redis_server() {
  local dir=$1
  shift
  mkdir -p "$dir"
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir" --save '' "$@" >"$dir/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis_url="redis://127.0.0.1:$redis_port"
}

# start_algoserve [NAME=VALUE...] ROLE TREE PORT LOG [NODE_FLAGS] [-- SERVICE_ARG...]
# Starts `algoserve ROLE` (serve or worker) of the checkout in folder TREE (. for this one), in that
# folder (as bench/lib/service.mjs's startService), with the environment NAME=VALUE..., on PORT (serve's
# --port, a worker's --worker-port for its /readyz), then SERVICE_ARGs; its output to file LOG ('' for the
# script's own). NODE_FLAGS is a word list: empty for npm start's (--max-semi-space-size=1) with serve and
# npm run worker's (none) with worker, `none` for none. Runs the build, dist/main.js, or the sources
# through tsx when the script sets algoserve_from=src. Lists the process in pids, sets algoserve_pid, and
# waits up to 60 s for its /readyz.
algoserve_from=dist
start_algoserve() {
  local env=() role tree port log flags='' main=(dist/main.js) port_flag=--port
  while [[ ${1:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do env+=("$1"); shift; done
  role=$1 tree=${2:-.} port=$3 log=$4
  shift 4
  if [ $# -gt 0 ] && [ "$1" != -- ]; then flags=$1; shift; fi
  if [ "${1:-}" = -- ]; then shift; fi
  if [ -z "$flags" ] && [ "$role" = serve ]; then flags=--max-semi-space-size=1; fi
  if [ "$flags" = none ]; then flags=''; fi
  if [ "$algoserve_from" = src ]; then main=(--import tsx src/main.ts); fi
  if [ "$role" = worker ]; then port_flag=--worker-port; fi
  (
    if [ -n "$log" ]; then exec >"$log" 2>&1; fi
    cd "$tree"
    if [ ${#env[@]} -gt 0 ]; then export "${env[@]}"; fi
    # shellcheck disable=SC2086 # the flags are a word list
    exec node $flags "${main[@]}" "$role" "$port_flag" "$port" "$@"
  ) &
  algoserve_pid=$!
  pids+=("$algoserve_pid")
  wait_ready "http://127.0.0.1:$port/readyz" "$log" 60 "$algoserve_pid"
}

# The CPU ticks (user + system) of process PID, all its threads.
process_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# The CPU ticks (user + system) of process PID and its children alive now: a service with several HTTP
# processes, its primary and each of them.
tree_ticks() {
  local pid=$1
  # shellcheck disable=SC2046 # one pid a word
  cat /proc/"$pid"/stat $(pgrep -P "$pid" | sed 's|.*|/proc/&/stat|') 2>/dev/null | awk '{ s += $14 + $15 } END { print s }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

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

# WORD as a shell reads it back: as it is when it is plain, else in single quotes.
shell_word() {
  if [[ $1 =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}

# What the script prints goes to $work/report.md, and from there to where its output was going (tail follows
# the file until the script ends), so that results_write can read the whole report at any moment.
results_script="bench/${0##*bench/}"
results_args=""
for arg in "$@"; do
  results_args+=" $(shell_word "$arg")"
done
: >"$work/report.md"
exec {results_stdout}>&1 >"$work/report.md"
# Started from a subshell, tail is no child of the script's: a bare `wait` of the script does not wait for it.
(tail -f -n +1 -s 0.1 --pid=$$ "$work/report.md" >&"$results_stdout" &)

# results_on_exit NAME TITLE HISTORY NPM SETTING...: when the script ends with status 0, cleanup writes
# bench/results/NAME.json (RESULTS_DIR= elsewhere for a trial run) from the report it printed
# (bench/lib/markdown-results.mjs); a failed run leaves the last one's file. Its command gives each SETTING
# (a variable the script reads from the environment) the value the run used, the empty ones left out, then
# the script's arguments. NPM is the npm script that runs it, or ''.
# RESULTS_NAME and RESULTS_TITLE give a run of a general script a results file of its own (the tracing A/B is
# a run of invoke-ab.sh).
results=()
results_on_exit() { results=("$@"); }
results_write() {
  local name=${RESULTS_NAME:-$1} title=${RESULTS_TITLE:-$2} history=$3 setting command="" npm=()
  if [ -n "$4" ]; then npm=(--npm "$4"); fi
  shift 4
  for setting in RESULTS_NAME RESULTS_TITLE "$@"; do
    if [ -n "${!setting:-}" ]; then command+="$setting=$(shell_word "${!setting}") "; fi
  done
  node "$(dirname "${BASH_SOURCE[0]}")/markdown-results.mjs" "$name" --title "$title" --history "$history" \
    "${npm[@]}" --script "$results_script" --command "${command}bash $results_script$results_args" \
    <"$work/report.md" >&"$results_stdout"
}
