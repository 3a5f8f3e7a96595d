#!/usr/bin/env bash
# keysmith secret-service's lock state on a keychain with a passphrase (python/test_lock_state.py),
# on private buses: once with the server started without KEYSMITH_ASKPASS (an Unlock prompt
# completes as dismissed), once with an askpass program (the prompt unlocks).
# Usage: lock-test.sh BIN_DIR   (BIN_DIR holds keysmith and keysmith-secret-service)
# Environment: SECRET_SERVICE_VENV as for run-outside-suites.sh.
set -uo pipefail

bin_dir=$(cd "${1:?usage: lock-test.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${SECRET_SERVICE_VENV:-$root/.build/secret-service-venv}/bin/python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$bin_dir:$PATH" KEYSMITH_HOME="$work/keychain"
# The test's own passphrase, made here; it is never printed.
export KEYSMITH_TEST_PASSPHRASE="harness-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$KEYSMITH_TEST_PASSPHRASE" | keysmith create --stdin >/dev/null \
    || { echo "lock test: keysmith create failed"; exit 1; }
printf '%s\n' "$KEYSMITH_TEST_PASSPHRASE" | keysmith unlock --stdin >/dev/null \
    || { echo "lock test: keysmith unlock failed"; exit 1; }
umask 077
printf '#!/bin/sh\nprintf "%%s\\n" "%s"\n' "$KEYSMITH_TEST_PASSPHRASE" >"$work/askpass"
chmod 0700 "$work/askpass"

status=0
echo "--- without KEYSMITH_ASKPASS"
"$here/with-private-bus.sh" --keep-home --server keysmith --bin "$bin_dir" -- \
    "$python" -m pytest -q -p no:cacheprovider -rs "$here/python/test_lock_state.py" || status=1
echo "--- with KEYSMITH_ASKPASS"
KEYSMITH_ASKPASS="$work/askpass" KEYSMITH_TEST_ASKPASS=1 "$here/with-private-bus.sh" --keep-home --server keysmith \
    --bin "$bin_dir" -- "$python" -m pytest -q -p no:cacheprovider -rs "$here/python/test_lock_state.py" \
    -k prompts || status=1
keysmith lock --all >/dev/null 2>&1
exit $status
