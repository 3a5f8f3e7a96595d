#!/usr/bin/env bash
# Whole-process time of `git credential fill` answered by a credential helper:
#   git-credential-keysmith        (this package; encrypted keychain, no daemon)
#   git's own `store` helper       (plaintext ~/.git-credentials)
#   git-credential-libsecret       (gnome-keyring over D-Bus, in a private dbus-run-session)
# Each row times RUNS fills of one stored credential, after WARMUP untimed fills, and
# prints the median and 90th percentile per fill. Rows whose helper cannot be built or
# started here say so instead.
#
# Usage: credential-fill-bench.sh BIN_DIR [OUTPUT.md]
#   BIN_DIR    directory holding git-credential-keysmith (a release build)
#   OUTPUT.md  where to write the table (default: standard output only)
# Environment: RUNS (default 200), WARMUP (default 10), LIBSECRET_SOURCE (default: the
# copy Debian's git package ships in /usr/share/doc/git/contrib/credential/libsecret).
set -euo pipefail

bin_dir=${1:?usage: credential-fill-bench.sh BIN_DIR [OUTPUT.md]}
output=${2:-}
runs=${RUNS:-200}
warmup=${WARMUP:-10}
libsecret_source=${LIBSECRET_SOURCE:-/usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" KEYSMITH_HOME="$work/keychain" GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
export PATH="$bin_dir:$work/bin:$PATH"
mkdir -p "$work/bin"
password="bench-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
request=$'protocol=https\nhost=bench.example.com'

# time_fills HELPER: prints "median p90" in milliseconds for RUNS fills with HELPER.
time_fills() {
    local helper=$1 i start end
    printf '%s\nusername=bench\npassword=%s\n' "$request" "$password" \
        | git -c credential.helper= -c "credential.helper=$helper" credential approve
    for ((i = 0; i < warmup; i++)); do
        printf '%s\n' "$request" | git -c credential.helper= -c "credential.helper=$helper" credential fill >/dev/null
    done
    : >"$work/times"
    for ((i = 0; i < runs; i++)); do
        start=$(date +%s%N)
        printf '%s\n' "$request" | git -c credential.helper= -c "credential.helper=$helper" credential fill >"$work/fill"
        end=$(date +%s%N)
        echo $(((end - start) / 1000)) >>"$work/times"
    done
    grep -q "^password=$password\$" "$work/fill" || { echo "helper $helper did not return the password" >&2; return 1; }
    sort -n "$work/times" | awk '{ t[NR] = $1 } END {
        m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        p = t[int(NR * 0.9 + 0.999)]
        printf "%.2f %.2f\n", m / 1000, p / 1000 }'
}

rows=()
row() { rows+=("| $1 | $2 | $3 | $4 |"); }

# git-credential-keysmith
if [ -x "$bin_dir/git-credential-keysmith" ]; then
    read -r median p90 < <(time_fills keysmith)
    row "git-credential-keysmith" "$median" "$p90" "encrypted keychain file, in process"
else
    row "git-credential-keysmith" "–" "–" "not built (swift build -c release --product git-credential-keysmith)"
fi

# git's store helper (plaintext)
read -r median p90 < <(time_fills "store --file=$work/git-credentials")
row "git credential-store" "$median" "$p90" "plaintext file"

# git-credential-libsecret on gnome-keyring
libsecret_note=""
if [ ! -f "$libsecret_source" ]; then
    libsecret_note="source not found ($libsecret_source)"
elif ! gcc -O2 -o "$work/bin/git-credential-libsecret" "$libsecret_source" \
    $(pkg-config --cflags --libs libsecret-1 glib-2.0 2>/dev/null) 2>"$work/gcc.log"; then
    libsecret_note="did not build (needs gcc and libsecret-1-dev)"
elif ! command -v dbus-run-session >/dev/null || ! command -v gnome-keyring-daemon >/dev/null; then
    libsecret_note="needs dbus-run-session and gnome-keyring"
fi
if [ -z "$libsecret_note" ]; then
    export -f time_fills
    export work runs warmup password request
    if result=$(dbus-run-session -- bash -c '
            eval "$(printf "bench-keyring" | gnome-keyring-daemon --unlock --components=secrets)"
            export GNOME_KEYRING_CONTROL
            time_fills libsecret' 2>"$work/libsecret.log"); then
        # gnome-keyring-daemon may print its environment on the same output: the figures
        # are the last line.
        read -r median p90 < <(grep -E '^[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$' <<<"$result" | tail -n 1)
        row "git-credential-libsecret" "${median:-–}" "${p90:-–}" "gnome-keyring over D-Bus (private session)"
    else
        row "git-credential-libsecret" "–" "–" "gnome-keyring did not answer: $(tail -n 1 "$work/libsecret.log")"
    fi
else
    row "git-credential-libsecret" "–" "–" "$libsecret_note"
fi

table=$(
    echo "| helper | median ms per fill | p90 ms | store |"
    echo "|---|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
)
echo "$table"
if [ -n "$output" ]; then
    {
        echo "# git credential fill: whole-process time per helper"
        echo
        echo "Written by \`make bench\` ($(date -u +%Y-%m-%d), $(nproc) cores, git $(git --version | cut -d' ' -f3))."
        echo "Each row: $runs runs of \`git credential fill\` (the git process and the helper it starts),"
        echo "one stored credential, after $warmup untimed runs."
        echo
        echo "$table"
    } >"$output"
fi
