#!/usr/bin/env bash
# The Secret Service's packaging, end to end:
#   `make install PREFIX=<temporary>` puts org.freedesktop.secrets.service in
#   PREFIX/share/dbus-1/services and keysmith-secret-service.service in PREFIX/lib/systemd/user,
#   with PREFIX's paths and nothing left of the templates' @PREFIX@; the unit passes
#   systemd-analyze verify (when systemd-analyze is there); then D-Bus activation: on a private
#   bus whose only service directory is the installed one, nothing owns org.freedesktop.secrets
#   until a client calls it, the call starts PREFIX/bin/keysmith secret-service and is answered,
#   and secret-tool stores and finds through it; `make uninstall` removes both files.
#
# Environment: KEYSMITH_PACKAGING_TOOLS=DIR installs only the two files (make
# install-secret-service-files) and copies keysmith and keysmith-secret-service from DIR,
# instead of the full `make install` (its release build), for quick runs.
# Prints "ok NAME" / "not ok NAME: why", then "packaging: N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=$(mktemp -d "${TMPDIR:-/tmp}/keysmith-prefix.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok $1: $2"; failed=$((failed + 1)); }
finish() { echo "packaging: $passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

activation="$prefix/share/dbus-1/services/org.freedesktop.secrets.service"
unit="$prefix/lib/systemd/user/keysmith-secret-service.service"

if [ -n "${KEYSMITH_PACKAGING_TOOLS:-}" ]; then
    make -C "$root" --no-print-directory install-secret-service-files PREFIX="$prefix" >"$prefix.log" 2>&1 \
        && install -d "$prefix/bin" \
        && install -m 0755 "$KEYSMITH_PACKAGING_TOOLS/keysmith" "$KEYSMITH_PACKAGING_TOOLS/keysmith-secret-service" "$prefix/bin/"
else
    make -C "$root" --no-print-directory install PREFIX="$prefix" >"$prefix.log" 2>&1
fi
status=$?
if [ "$status" != 0 ]; then
    not_ok "make install PREFIX=$prefix" "exit $status: $(tail -n 5 "$prefix.log")"
    rm -f "$prefix.log"
    finish
fi
rm -f "$prefix.log"
ok "make install PREFIX=<temporary>"

for file in "$activation" "$unit"; do
    [ -f "$file" ] && ok "installed ${file#"$prefix"/}" || not_ok "installed ${file#"$prefix"/}" "missing"
done
[ -x "$prefix/bin/keysmith-secret-service" ] && ok "installed bin/keysmith-secret-service" \
    || not_ok "installed bin/keysmith-secret-service" "missing"

if [ -f "$activation" ]; then
    grep -qx "Name=org.freedesktop.secrets" "$activation" && grep -qx "Exec=$prefix/bin/keysmith secret-service" "$activation" \
        && grep -qx "SystemdService=keysmith-secret-service.service" "$activation" \
        && ok "activation file: name, Exec under PREFIX, SystemdService" \
        || not_ok "activation file: name, Exec under PREFIX, SystemdService" "$(grep -v '^#' "$activation")"
fi
if [ -f "$unit" ]; then
    grep -qx "Type=dbus" "$unit" && grep -qx "BusName=org.freedesktop.secrets" "$unit" \
        && grep -qx "ExecStart=$prefix/bin/keysmith secret-service" "$unit" \
        && ok "user unit: Type=dbus, BusName, ExecStart under PREFIX" \
        || not_ok "user unit: Type=dbus, BusName, ExecStart under PREFIX" "$(grep -v '^#' "$unit")"
    if command -v systemd-analyze >/dev/null; then
        # verify checks the unit's settings and that ExecStart's program exists (an unknown setting
        # or value is only a warning naming the unit); --user needs a runtime directory.
        runtime=$(mktemp -d); chmod 0700 "$runtime"
        verify=$(XDG_RUNTIME_DIR=$runtime systemd-analyze verify --user "$unit" 2>&1); verified=$?
        rm -rf "$runtime"
        complaints=$(grep -F "keysmith-secret-service.service" <<<"$verify" || true)
        [ "$verified" = 0 ] && [ -z "$complaints" ] && ok "systemd-analyze verify accepts the unit" \
            || not_ok "systemd-analyze verify accepts the unit" "exit $verified: $verify"
    fi
fi
grep -l '@PREFIX@' "$activation" "$unit" >/dev/null 2>&1 && not_ok "no @PREFIX@ left" "a template was copied unfilled" \
    || ok "no @PREFIX@ left"

# D-Bus activation on a private bus whose service directory is the installed one.
activation_check() {
    owned() {
        dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q true
    }
    if owned; then echo "not ok nothing owns org.freedesktop.secrets before a client calls: already owned"; return 1; fi
    echo "ok nothing owns org.freedesktop.secrets before a client calls"
    local answer status=0
    answer=$(dbus-send --session --print-reply=literal --reply-timeout=30000 --dest=org.freedesktop.secrets \
        /org/freedesktop/secrets org.freedesktop.Secret.Service.ReadAlias string:default 2>&1)
    case $answer in
        */org/freedesktop/secrets/collection/*) echo "ok a client's call starts the service and is answered (ReadAlias default: $(echo $answer))" ;;
        *) echo "not ok a client's call starts the service and is answered: $answer"; status=1 ;;
    esac
    local pid exe
    pid=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '{print $2}')
    if [ -n "$pid" ]; then
        exe=$(readlink "/proc/$pid/exe" 2>/dev/null)
        if [ "$exe" = "$PACKAGING_PREFIX/bin/keysmith-secret-service" ]; then
            echo "ok the owner is the installed keysmith-secret-service"
        else
            echo "not ok the owner is the installed keysmith-secret-service: process $pid runs ${exe:-unknown}"; status=1
        fi
        local secret="activated-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
        if printf '%s' "$secret" | secret-tool store --label=activated service activation account A 2>/dev/null \
            && [ "$(secret-tool lookup service activation account A 2>/dev/null)" = "$secret" ]; then
            echo "ok secret-tool stores and finds through the activated service"
        else
            echo "not ok secret-tool stores and finds through the activated service"; status=1
        fi
        # The bus started it; stop it before the bus goes, so nothing outlives the test.
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && { echo "not ok the activated service stops on SIGTERM"; kill -KILL "$pid"; status=1; } \
            || echo "ok the activated service stops on SIGTERM"
    else
        echo "not ok the owner is the installed keysmith-secret-service: no owner after the call"; status=1
    fi
    return $status
}
export -f activation_check
export PACKAGING_PREFIX="$prefix"
# With gnome-keyring installed, its activation file for the same name is in /usr/share: listed after
# the installed one, as the session bus lists /usr/local/share before /usr/share, keysmith's wins.
service_dirs=(--service-dir "$prefix/share/dbus-1/services")
if [ -f /usr/share/dbus-1/services/org.freedesktop.secrets.service ]; then
    service_dirs+=(--service-dir /usr/share/dbus-1/services)
    echo "# the bus also lists /usr/share/dbus-1/services, with $(sed -n 's/^Exec=//p' /usr/share/dbus-1/services/org.freedesktop.secrets.service)"
fi
while IFS= read -r line; do
    case $line in
        "ok "*) ok "${line#ok }" ;;
        "not ok "*) rest=${line#not ok }; not_ok "${rest%%: *}" "${rest#*: }" ;;
        *) echo "$line" ;;
    esac
done < <(PRIVATE_BUS_QUIET=1 "$here/with-private-bus.sh" --server none "${service_dirs[@]}" \
    -- bash -c activation_check 2>&1)

make -C "$root" --no-print-directory uninstall PREFIX="$prefix" >/dev/null 2>&1 \
    || make -C "$root" --no-print-directory uninstall-secret-service-files PREFIX="$prefix" >/dev/null 2>&1
[ ! -e "$activation" ] && [ ! -e "$unit" ] && ok "make uninstall removes the activation file and the unit" \
    || not_ok "make uninstall removes the activation file and the unit" "still there"
finish
