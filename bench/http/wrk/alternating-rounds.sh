# Sourced by bench/http/wrk/invoke-ladder.sh and bench/http/wrk/invoke-ab.sh after bench/lib/wrk-common.sh:
# the small-prime POST /invoke load in alternating wrk rounds against several servers, and the table of their
# medians. The caller sets CONNECTIONS, DURATION, ROUNDS and the arrays names, ports and server_pids, the bare
# server first.

# Appends "<req/s> <p99 ms> <CPU µs per request>" to $work/<i>.rounds for each server, round by round. With
# RATE=<requests per second> set, every run offers that rate (bench/http/wrk/pace.lua) instead of a closed
# loop (its warm-up too), so that each server's CPU per request is read at the same load: in a closed loop a
# slower server also pays for waking an idle client on every answer, which the bare server does not.
alternating_rounds() {
  cat >"$work/post.lua" <<'LUA'
dofile("bench/http/wrk/pace.lua")
function init(args)
  pace_start()
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"number": 97}'
LUA
  export THREADS=1 RATE=${RATE:-}
  local ticks_per_second count i before after
  ticks_per_second=$(getconf CLK_TCK)
  count=${#ports[@]}
  # Warm-up: every server gets the JIT's attention before it is measured.
  for ((i = 0; i < count; i++)); do
    wrk -t1 -c"$CONNECTIONS" -d3s -s "$work/post.lua" "http://127.0.0.1:${ports[$i]}/invoke" >/dev/null
  done
  for _ in $(seq 1 "$ROUNDS"); do
    for ((i = 0; i < count; i++)); do
      before=$(process_ticks "${server_pids[$i]}")
      wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/post.lua" "http://127.0.0.1:${ports[$i]}/invoke" >"$work/wrk.out"
      after=$(process_ticks "${server_pids[$i]}")
      wrk_summary "$work/wrk.out" | awk -v ticks=$((after - before)) -v hz="$ticks_per_second" \
        '{ printf "%s %s %.1f\n", $1, $2, ticks / hz * 1e6 / $3 }' >>"$work/$i.rounds"
    done
  done
}

# The table: median req/s, its ratio to the bare server's, median p99, median CPU time per request, and the
# CPU time of each round (the bare server's shows how much the machine moved during the run).
rounds_table() {
  local bare_rps rps i
  bare_rps=$(cut -d' ' -f1 "$work/0.rounds" | median)
  echo "| server | req/s | of bare | p99 ms | CPU µs per request | CPU µs per request, each round |"
  echo "|---|---|---|---|---|---|"
  for ((i = 0; i < ${#ports[@]}; i++)); do
    rps=$(cut -d' ' -f1 "$work/$i.rounds" | median)
    echo "| ${names[$i]} | $rps | $(awk -v s="$rps" -v b="$bare_rps" 'BEGIN { printf "%.0f%%", 100 * s / b }') |" \
      "$(cut -d' ' -f2 "$work/$i.rounds" | median) | $(cut -d' ' -f3 "$work/$i.rounds" | median) |" \
      "$(cut -d' ' -f3 "$work/$i.rounds" | tr '\n' ' ')|"
  done
}
