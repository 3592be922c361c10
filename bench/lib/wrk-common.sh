# Sourced first by the wrk benchmarks (bench/http/wrk/ and profile-jobs.sh), from the repository's root:
# names the script and its Node, checks for wrk, then sources common.sh (the scratch folder, the clean-up on
# exit, readiness, Redis, other checkouts); adds the reading of wrk's output.

# NODE=<path to a node binary> runs the script's servers and clients on that Node instead of PATH's.
# Call the script with bash, not npm run: npm sets NODE to its own node for the scripts it runs.
if [ -n "${NODE:-}" ]; then PATH="$(dirname "$NODE"):$PATH"; fi
script="bench/http/$(basename "$(dirname "$0")")/$(basename "$0")"
echo "$script on Node $(node --version)" >&2

command -v wrk >/dev/null || { echo "$script needs wrk (apt-get install wrk)" >&2; exit 1; }
# shellcheck source=bench/lib/common.sh
. bench/lib/common.sh

# Prints "<requests per second> <p99 in ms> <requests>" from the output of `wrk --latency`.
wrk_summary() {
  awk '
    /requests in/ { n = $1 }
    /Requests\/sec:/ { rps = $2 }
    /^ +99%/ { v = $2; unit = v; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
               p99 = (unit == "us") ? v / 1000 : (unit == "s") ? v * 1000 : v }
    END { printf "%s %.3f %s\n", rps, p99, n }' "$1"
}

