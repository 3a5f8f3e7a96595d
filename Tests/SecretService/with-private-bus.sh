#!/usr/bin/env bash
# Runs a command on a private D-Bus session bus with a Secret Service on it, then stops
# everything. Never the machine's session bus: the bus is a dbus-daemon of our own, on a
# socket in a temporary directory, and HOME, the XDG directories and KEYSMITH_HOME point into
# that directory too, so no real keyring or keychain is read or written.
#
# Usage: with-private-bus.sh [options] [--] COMMAND [ARG...]
#   --server keysmith        keysmith secret-service (default), from --bin DIR
#   --server gnome-keyring   gnome-keyring-daemon (secrets component), with a login keyring
#                            created and unlocked non-interactively
#   --server none            no server: only the bus (with --service-dir, for D-Bus activation)
#   --bin DIR                directory holding keysmith (default: KEYSMITH_TEST_TOOLS, else
#                            the directory of `keysmith` on PATH)
#   --service-dir DIR        add DIR as a <servicedir> of the bus (D-Bus activation; repeat it
#                            for several, the first given first, as the session bus lists
#                            /usr/local/share before /usr/share); without it the bus activates
#                            nothing, so it never starts gnome-keyring (or anything else)
#                            behind our back
#   --keep-home              use the caller's KEYSMITH_HOME instead of a temporary one
#
# The command runs with DBUS_SESSION_BUS_ADDRESS set to the private bus, KEYSMITH_HOME (the
# keychain the server uses), SECRET_SERVICE_UNDER_TEST (keysmith, gnome-keyring or none),
# PRIVATE_BUS_WORK (the temporary directory, removed afterwards) and PATH with --bin first.
# Exit status: the command's, or 2 when the bus or the server could not be started (its log
# is printed).
set -euo pipefail

server=keysmith
bin_dir=${KEYSMITH_TEST_TOOLS:-}
service_dirs=()
keep_home=0
while [ $# -gt 0 ]; do
    case $1 in
        --server) server=${2:?--server needs keysmith, gnome-keyring or none}; shift 2 ;;
        --bin) bin_dir=${2:?--bin needs a directory}; shift 2 ;;
        --service-dir) service_dirs+=("$(cd "${2:?--service-dir needs a directory}" && pwd)"); shift 2 ;;
        --keep-home) keep_home=1; shift ;;
        --) shift; break ;;
        -*) echo "with-private-bus.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: with-private-bus.sh [--server keysmith|gnome-keyring|none] [--bin DIR] [--service-dir DIR] -- COMMAND" >&2; exit 2; }
case $server in keysmith|gnome-keyring|none) ;; *) echo "with-private-bus.sh: unknown server $server" >&2; exit 2 ;; esac
command -v dbus-daemon >/dev/null || { echo "with-private-bus.sh: dbus-daemon is missing (apt-get install dbus-daemon)" >&2; exit 2; }
command -v dbus-send >/dev/null || { echo "with-private-bus.sh: dbus-send is missing (apt-get install dbus-bin)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/keysmith-bus.XXXXXX")
bus_pid=""
server_pid=""
cleanup() {
    local status=$?
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    if [ -n "$bus_pid" ]; then kill -TERM "$bus_pid" 2>/dev/null || true; fi
    wait 2>/dev/null || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A throwaway home: gnome-keyring writes its keyrings under XDG_DATA_HOME, keysmith under KEYSMITH_HOME.
export HOME="$work/home" XDG_DATA_HOME="$work/home/.local/share" XDG_CONFIG_HOME="$work/home/.config" \
    XDG_CACHE_HOME="$work/home/.cache" XDG_RUNTIME_DIR="$work/runtime"
mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME"
mkdir -m 0700 -p "$XDG_RUNTIME_DIR"
if [ "$keep_home" = 0 ] || [ -z "${KEYSMITH_HOME:-}" ]; then
    export KEYSMITH_HOME="$work/keychain"
fi
unset DISPLAY WAYLAND_DISPLAY GNOME_KEYRING_CONTROL SSH_AUTH_SOCK DBUS_STARTER_ADDRESS DBUS_STARTER_BUS_TYPE
export PRIVATE_BUS_WORK="$work" SECRET_SERVICE_UNDER_TEST="$server"
if [ -n "$bin_dir" ]; then
    bin_dir=$(cd "$bin_dir" && pwd)
    export PATH="$bin_dir:$PATH"
fi

# The bus: a session bus configuration of our own (no <servicedir> unless asked for one).
servicedir_line=""
for dir in "${service_dirs[@]}"; do
    servicedir_line+="  <servicedir>$dir</servicedir>"$'\n'
done
cat >"$work/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
$servicedir_line
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile --print-address=3 3>"$work/bus.address" \
    >"$work/bus.log" 2>&1 &
bus_pid=$!
for _ in $(seq 100); do
    [ -s "$work/bus.address" ] && break
    kill -0 "$bus_pid" 2>/dev/null || break
    sleep 0.05
done
if [ ! -s "$work/bus.address" ]; then
    echo "with-private-bus.sh: the private dbus-daemon did not start:" >&2
    cat "$work/bus.log" >&2
    exit 2
fi
DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$work/bus.address")
export DBUS_SESSION_BUS_ADDRESS

# name_owned: true when org.freedesktop.secrets has an owner on the private bus.
name_owned() {
    dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q true
}

# wait_for_owner LOG: waits up to 30 s for the name, while the server lives.
wait_for_owner() {
    local log=$1
    for _ in $(seq 300); do
        if name_owned; then return 0; fi
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "with-private-bus.sh: the $server server exited before owning org.freedesktop.secrets:" >&2
            cat "$log" >&2
            exit 2
        fi
        sleep 0.1
    done
    echo "with-private-bus.sh: the $server server did not own org.freedesktop.secrets within 30 s:" >&2
    cat "$log" >&2
    exit 2
}

case $server in
    keysmith)
        keysmith=$(command -v keysmith || true)
        [ -n "$keysmith" ] || { echo "with-private-bus.sh: keysmith not found (pass --bin DIR)" >&2; exit 2; }
        "$keysmith" secret-service >"$work/server.log" 2>&1 &
        server_pid=$!
        wait_for_owner "$work/server.log"
        ;;
    gnome-keyring)
        command -v gnome-keyring-daemon >/dev/null \
            || { echo "with-private-bus.sh: gnome-keyring-daemon is missing (apt-get install gnome-keyring)" >&2; exit 2; }
        # --unlock reads the password from standard input and creates the login keyring with
        # it when there is none (with --start it would not); --foreground keeps it our child, so the
        # trap stops it.
        printf '%s' "private-bus-login" \
            | gnome-keyring-daemon --foreground --unlock --components=secrets >"$work/server.log" 2>&1 &
        server_pid=$!
        wait_for_owner "$work/server.log"
        # The login keyring is written when the daemon first needs it: wait until the default
        # alias answers, so the command never races its creation.
        for _ in $(seq 100); do
            dbus-send --session --print-reply=literal --dest=org.freedesktop.secrets /org/freedesktop/secrets \
                org.freedesktop.Secret.Service.ReadAlias string:default 2>/dev/null | grep -q /collection/ && break
            sleep 0.1
        done
        ;;
    none) ;;
esac

set +e
"$@"
status=$?
set -e
if [ "$status" != 0 ] && [ -s "$work/server.log" ] && [ "${PRIVATE_BUS_QUIET:-0}" != 1 ]; then
    echo "with-private-bus.sh: the command exited $status; the $server server's log (last 20 lines):" >&2
    tail -n 20 "$work/server.log" >&2
fi
exit "$status"
