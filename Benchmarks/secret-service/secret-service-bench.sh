#!/usr/bin/env bash
# keysmith secret-service against gnome-keyring, same run, each on a private bus of its own
# (Tests/SecretService/with-private-bus.sh; never the machine's session bus), one stored item:
#   secret-tool lookup      whole process: libsecret connects, opens a dh session, searches,
#                           reads the secret, prints it
#   SearchItems+GetSecrets  the two calls through the bus on an open connection and dh session
#                           (Python, jeepney), decryption included
# Each row: the median and 90th percentile of RUNS timed runs after WARMUP untimed ones, and
# the ratio gnome-keyring / keysmith (above 1: keysmith is faster).
#
# Usage: secret-service-bench.sh BIN_DIR [OUTPUT.md]
#   BIN_DIR    directory holding keysmith and keysmith-secret-service (make install's build)
#   OUTPUT.md  where to write the table (default: standard output only)
# Environment: RUNS (default 200), WARMUP (default 10), SECRET_SERVICE_VENV (a virtual
# environment with Tests/SecretService/requirements.txt; default .build/secret-service-venv).
set -euo pipefail

bin_dir=$(cd "${1:?usage: secret-service-bench.sh BIN_DIR [OUTPUT.md]}" && pwd)
output=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export RUNS=${RUNS:-200} WARMUP=${WARMUP:-10}
export BENCH_PYTHON=${SECRET_SERVICE_VENV:-$root/.build/secret-service-venv}/bin/python
export BENCH_HERE=$here

# measure: runs on the private bus; prints "lookup MEDIAN P90" and "bus MEDIAN P90" (ms).
measure() {
    set -euo pipefail
    local secret i start end
    secret="bench-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
    printf '%s' "$secret" | secret-tool store --label="Secret Service benchmark" service bench.example.com account bench
    [ "$(secret-tool lookup service bench.example.com account bench)" = "$secret" ] \
        || { echo "secret-tool lookup did not return the stored secret" >&2; return 1; }
    for ((i = 0; i < WARMUP; i++)); do secret-tool lookup service bench.example.com account bench >/dev/null; done
    : >"$PRIVATE_BUS_WORK/times"
    for ((i = 0; i < RUNS; i++)); do
        start=$(date +%s%N)
        secret-tool lookup service bench.example.com account bench >/dev/null
        end=$(date +%s%N)
        echo $(((end - start) / 1000)) >>"$PRIVATE_BUS_WORK/times"
    done
    sort -n "$PRIVATE_BUS_WORK/times" | awk '{ t[NR] = $1 } END {
        m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        p = t[int(NR * 0.9 + 0.999)]
        printf "lookup %.2f %.2f\n", m / 1000, p / 1000 }'
    echo "bus $("$BENCH_PYTHON" "$BENCH_HERE/search_get_bench.py" bench.example.com bench "$RUNS" "$WARMUP")"
}
export -f measure

declare -A median p90 note
for server in keysmith gnome-keyring; do
    if result=$(PRIVATE_BUS_QUIET=1 "$root/Tests/SecretService/with-private-bus.sh" --server "$server" --bin "$bin_dir" \
            -- bash -c measure 2>"$root/.build/secret-service-bench-$server.log"); then
        while read -r kind m p; do
            median[$server.$kind]=$m; p90[$server.$kind]=$p
        done <<<"$result"
        rm -f "$root/.build/secret-service-bench-$server.log"
    else
        note[$server]="did not run: $(tail -n 1 "$root/.build/secret-service-bench-$server.log")"
        echo "$server: ${note[$server]} (log: .build/secret-service-bench-$server.log)" >&2
    fi
done

ratio() {
    local k=${median[keysmith.$1]:-} g=${median[gnome-keyring.$1]:-}
    [ -n "$k" ] && [ -n "$g" ] && awk -v k="$k" -v g="$g" 'BEGIN {
        if (g >= k) printf "%.2fx faster", g / k; else printf "%.2fx slower", k / g }' || echo "–"
}
cell() { [ -n "${median[$1.$2]:-}" ] && echo "${median[$1.$2]} ms (p90 ${p90[$1.$2]})" || echo "– ${note[$1]:-}"; }

table=$(
    echo "| operation | keysmith secret-service | gnome-keyring (same run) | keysmith vs gnome-keyring |"
    echo "|---|---:|---:|---|"
    echo "| \`secret-tool lookup\`, whole process | $(cell keysmith lookup) | $(cell gnome-keyring lookup) | $(ratio lookup) |"
    echo "| SearchItems + GetSecrets (dh session open), one item | $(cell keysmith bus) | $(cell gnome-keyring bus) | $(ratio bus) |"
)
echo "$table"
if [ -n "$output" ]; then
    {
        echo "# The Secret Service: keysmith secret-service against gnome-keyring"
        echo
        echo "Written by \`make bench\` (\`make bench-secret-service\`; $(date -u +%Y-%m-%d), $(nproc) cores,"
        echo "gnome-keyring $(gnome-keyring-daemon --version 2>/dev/null | head -n 1 | awk '{print $2}'),"
        echo "libsecret $(dpkg-query -W -f='${Version}' libsecret-1-0 2>/dev/null || echo unknown))."
        echo "Each server on a private bus of its own, one stored item; each figure the median of $RUNS runs"
        echo "after $WARMUP untimed ones. Figures from a busy machine are noisy; the ratios, measured in"
        echo "the same run, less so."
        echo
        echo "$table"
    } >"$output"
fi
