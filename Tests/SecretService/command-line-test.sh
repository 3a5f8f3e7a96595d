#!/usr/bin/env bash
# keysmith secret-service's command line, as a user meets it, on private buses:
#   - the ready line on standard error, once the name is owned
#   - a second `keysmith secret-service` while one serves: exit 1, a message that names --replace,
#     and the first one still owns the name
#   - against gnome-keyring holding the name: exit 1 naming --replace; with --replace it takes
#     the name when gnome-keyring lets it go (reported, not counted, when gnome-keyring keeps it)
#   - SIGTERM: exit 0; the bus going away: it exits by itself
#   - keysmith-secret-service run directly, with and without the word secret-service
# Usage: command-line-test.sh BIN_DIR   (BIN_DIR holds keysmith and keysmith-secret-service)
# Prints "ok NAME" / "not ok NAME: why", then "command line: N passed, N failed".
set -uo pipefail

bin_dir=$(cd "${1:?usage: command-line-test.sh BIN_DIR}" && pwd -P)
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$bin_dir:$PATH"
ready="keysmith secret-service: serving org.freedesktop.secrets on the session bus"

checks() {
    set -uo pipefail
    local out=$PRIVATE_BUS_WORK
    owner_pid() {
        dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '{print $2}'
    }
    # wait_exit PID SECONDS: true when PID ends within SECONDS; sets exit_status.
    wait_exit() {
        local i
        for ((i = 0; i < $2 * 10; i++)); do
            if ! kill -0 "$1" 2>/dev/null; then wait "$1"; exit_status=$?; return 0; fi
            sleep 0.1
        done
        return 1
    }
    case $SECRET_SERVICE_UNDER_TEST in
    keysmith)
        local first
        first=$(owner_pid)
        timeout 20 keysmith secret-service >"$out/second.out" 2>"$out/second.err"; status=$?
        if [ "$status" = 1 ] && grep -q -- "--replace" "$out/second.err"; then
            echo "ok a second keysmith secret-service exits 1 and names --replace"
        else
            echo "not ok a second keysmith secret-service exits 1 and names --replace: exit $status, said: $(head -c 300 "$out/second.err")"
        fi
        [ "$(owner_pid)" = "$first" ] && echo "ok the first one still owns the name" \
            || echo "not ok the first one still owns the name: owner is now $(owner_pid)"
        ;;
    gnome-keyring)
        timeout 20 keysmith secret-service >"$out/refused.out" 2>"$out/refused.err"; status=$?
        if [ "$status" = 1 ] && grep -q -- "--replace" "$out/refused.err"; then
            echo "ok with gnome-keyring holding the name, keysmith secret-service exits 1 and names --replace"
        else
            echo "not ok with gnome-keyring holding the name, keysmith secret-service exits 1 and names --replace: exit $status, said: $(head -c 300 "$out/refused.err")"
        fi
        : >"$out/replace.err"
        keysmith secret-service --replace >"$out/replace.out" 2>"$out/replace.err" &
        local replacing=$! i
        for ((i = 0; i < 100; i++)); do
            grep -qF "$ready" "$out/replace.err" && break
            kill -0 "$replacing" 2>/dev/null || break
            sleep 0.1
        done
        local exe
        exe=$(readlink "/proc/$(owner_pid)/exe" 2>/dev/null)
        if [ "$exe" = "$bin_dir/keysmith-secret-service" ]; then
            echo "ok keysmith secret-service --replace takes the name from gnome-keyring"
        elif kill -0 "$replacing" 2>/dev/null; then
            echo "# keysmith secret-service --replace is waiting: gnome-keyring ($exe) keeps the name (it does not allow replacement)"
            # When gnome-keyring goes, the waiting server gets the name.
            kill -TERM "$(owner_pid)" 2>/dev/null
            for ((i = 0; i < 100; i++)); do
                [ "$(readlink "/proc/$(owner_pid)/exe" 2>/dev/null)" = "$bin_dir/keysmith-secret-service" ] \
                    && grep -qF "$ready" "$out/replace.err" && break
                sleep 0.1
            done
            exe=$(readlink "/proc/$(owner_pid)/exe" 2>/dev/null)
            [ "$exe" = "$bin_dir/keysmith-secret-service" ] && grep -qF "$ready" "$out/replace.err" \
                && echo "ok keysmith secret-service --replace gets the name when gnome-keyring exits, and says it is ready" \
                || echo "not ok keysmith secret-service --replace gets the name when gnome-keyring exits, and says it is ready: owner ${exe:-none}, said: $(head -c 300 "$out/replace.err")"
        else
            echo "not ok keysmith secret-service --replace takes the name or waits for it: it exited, said: $(head -c 300 "$out/replace.err")"
        fi
        kill -TERM "$replacing" 2>/dev/null; wait_exit "$replacing" 10 || kill -KILL "$replacing" 2>/dev/null
        ;;
    none)
        : >"$out/server.err"
        keysmith secret-service >"$out/server.out" 2>"$out/server.err" &
        local server=$! i
        for ((i = 0; i < 300; i++)); do grep -qF "$ready" "$out/server.err" && break; kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
        if grep -qxF "$ready" "$out/server.err" && [ -n "$(owner_pid)" ]; then
            echo "ok the ready line on standard error, with the name owned"
        else
            echo "not ok the ready line on standard error, with the name owned: said: $(head -c 300 "$out/server.err")"
        fi
        kill -TERM "$server"
        if wait_exit "$server" 10 && [ "$exit_status" = 0 ]; then echo "ok SIGTERM: exit 0"; else
            echo "not ok SIGTERM: exit 0: ${exit_status:-still running}"; kill -KILL "$server" 2>/dev/null; fi
        for form in "keysmith-secret-service secret-service" "keysmith-secret-service"; do
            : >"$out/direct.err"
            $form >"$out/direct.out" 2>"$out/direct.err" &
            server=$!
            for ((i = 0; i < 300; i++)); do grep -qF "$ready" "$out/direct.err" && break; kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
            grep -qxF "$ready" "$out/direct.err" && echo "ok $form serves" \
                || echo "not ok $form serves: said: $(head -c 300 "$out/direct.err")"
            kill -TERM "$server" 2>/dev/null; wait_exit "$server" 10 || kill -KILL "$server" 2>/dev/null
        done
        ;;
    esac
}
export -f checks
export bin_dir ready

log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0
failed=0
tally() {
    while IFS= read -r line; do
        echo "$line"
        case $line in "ok "*) passed=$((passed + 1)) ;; "not ok "*) failed=$((failed + 1)) ;; esac
    done
}
for server in none keysmith gnome-keyring; do
    if [ "$server" = gnome-keyring ] && ! command -v gnome-keyring-daemon >/dev/null; then
        echo "# gnome-keyring checks skipped: gnome-keyring-daemon is not installed"; continue
    fi
    PRIVATE_BUS_QUIET=1 "$here/with-private-bus.sh" --server "$server" --bin "$bin_dir" -- bash -c checks >"$log" 2>&1
    status=$?
    tally <"$log"
    if [ "$status" != 0 ]; then
        echo "not ok the private bus with $server started: exit $status"; failed=$((failed + 1))
    fi
done

# The bus going away: the server exits by itself (the bus is stopped under it).
bus_gone() {
    : >"$PRIVATE_BUS_WORK/gone.err"
    keysmith secret-service >/dev/null 2>"$PRIVATE_BUS_WORK/gone.err" &
    echo "server $!"
    for ((i = 0; i < 300; i++)); do
        if grep -qF "$ready" "$PRIVATE_BUS_WORK/gone.err"; then echo ready; break; fi
        sleep 0.1
    done
}
export -f bus_gone
gone=$(PRIVATE_BUS_QUIET=1 "$here/with-private-bus.sh" --server none --bin "$bin_dir" -- bash -c bus_gone 2>/dev/null)
pid=$(sed -n 's/^server //p' <<<"$gone")
if ! grep -qx ready <<<"$gone"; then
    echo "not ok the server exits when the bus goes away: it never said it was ready"; failed=$((failed + 1))
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
elif [ -n "$pid" ]; then
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        echo "not ok the server exits when the bus goes away: still running 10 s later"; failed=$((failed + 1))
        kill -KILL "$pid" 2>/dev/null
    else
        echo "ok the server exits when the bus goes away"; passed=$((passed + 1))
    fi
fi

echo "command line: $passed passed, $failed failed"
[ "$failed" = 0 ]
