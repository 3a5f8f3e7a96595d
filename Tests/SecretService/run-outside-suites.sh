#!/usr/bin/env bash
# The Secret Service suites, each on a private bus of its own with a fresh server:
#   secretstorage's own tests (its source release's tests/), once with the dh session
#     algorithm (a fallback to plain fails) and once with plain
#   keyring's BackendBasicTests on its SecretService backend (default and session collections)
#   both session algorithms crossed, closed and departed sessions, the default alias (pytest)
#   bad input: unknown object paths, wrong signatures, a huge attribute, another client's session (pytest)
#   secret-tool store/lookup/search/clear, and with keysmith the keysmith tool both ways
#
# Usage: run-outside-suites.sh SERVER [BIN_DIR]
#   SERVER   keysmith (keysmith secret-service from BIN_DIR) or gnome-keyring (the mark)
#   BIN_DIR  directory holding keysmith (and keysmith-secret-service)
# Environment: SECRET_SERVICE_VENV (default .build/secret-service-venv: a virtual environment with
# Tests/SecretService/requirements.txt installed), SECRETSTORAGE_SOURCE (the unpacked source
# release; default .build/secretstorage-src/secretstorage-<version>), SUITES (default: all of
# "secretstorage-dh secretstorage-plain keyring algorithms bad-input secret-tool").
#
# Prints each suite's output, then a summary with one line per suite and every skipped test with
# its reason. Exit status 0 when no suite failed.
set -uo pipefail

server=${1:?usage: run-outside-suites.sh keysmith|gnome-keyring [BIN_DIR]}
bin_dir=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${SECRET_SERVICE_VENV:-$root/.build/secret-service-venv}
version=$(sed -n 's/^secretstorage==//p' "$here/requirements.txt")
source_dir=${SECRETSTORAGE_SOURCE:-$root/.build/secretstorage-src/secretstorage-$version}
suites=${SUITES:-secretstorage-dh secretstorage-plain keyring algorithms bad-input secret-tool}
python=$venv/bin/python

[ -x "$python" ] || { echo "run-outside-suites.sh: no virtual environment at $venv (make test-secret-service makes it)" >&2; exit 2; }
[ -d "$source_dir/tests" ] || { echo "run-outside-suites.sh: secretstorage's source release is not at $source_dir" >&2; exit 2; }
bus_args=(--server "$server")
[ -n "$bin_dir" ] && bus_args+=(--bin "$bin_dir")

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
summary=()
skips=()
failed_tests=()
failures=0

# run_suite NAME COMMAND...: runs COMMAND on its own private bus; its output goes to the terminal
# and to a log, whose last summary line (N passed, N failed...) is kept.
run_suite() {
    local name=$1 status line
    shift
    echo "=== $name against $server"
    "$here/with-private-bus.sh" "${bus_args[@]}" -- "$@" 2>&1 | tee "$log/$name"
    status=${PIPESTATUS[0]}
    line=$(grep -E '[0-9]+ passed|[0-9]+ failed|[0-9]+ error' "$log/$name" | tail -n 1 | sed 's/^=* *//; s/ *=*$//')
    if [ "$status" = 0 ]; then
        summary+=("ok      $name: ${line:-passed}")
    else
        summary+=("FAILED  $name (exit $status): ${line:-see its output above}")
        failures=$((failures + 1))
    fi
    while IFS= read -r test; do failed_tests+=("$name: $test"); done \
        < <(grep -E '^failed: |^FAILED .*::|^not ok ' "$log/$name" | sed 's/^failed: //; s/^FAILED //; s/^not ok //')
    while IFS= read -r skipped; do skips+=("$name: $skipped"); done \
        < <(grep -E '^skipped: |^SKIPPED ' "$log/$name" | sed 's/^skipped: //; s/^SKIPPED //')
}

pytest_args=(-q -p no:cacheprovider -rs)
for suite in $suites; do
    case $suite in
        secretstorage-dh|secretstorage-plain)
            run_suite "$suite" "$python" "$here/python/run_secretstorage_tests.py" "$source_dir" "${suite#secretstorage-}" ;;
        keyring)
            run_suite keyring "$python" -m pytest "${pytest_args[@]}" "$here/python/test_keyring_secret_service.py" ;;
        algorithms)
            run_suite algorithms "$python" -m pytest "${pytest_args[@]}" "$here/python/test_session_algorithms.py" ;;
        bad-input)
            run_suite bad-input "$python" -m pytest "${pytest_args[@]}" "$here/python/test_bad_input.py" ;;
        secret-tool)
            if command -v secret-tool >/dev/null; then
                run_suite secret-tool "$here/secret-tool-interop.sh"
            else
                summary+=("FAILED  secret-tool: secret-tool is missing (apt-get install libsecret-tools)")
                failures=$((failures + 1))
            fi ;;
        *) echo "run-outside-suites.sh: unknown suite $suite" >&2; exit 2 ;;
    esac
done

echo
echo "=== Secret Service suites against $server"
printf '%s\n' "${summary[@]}"
if [ ${#failed_tests[@]} -gt 0 ]; then
    echo "failed tests:"
    printf '  %s\n' "${failed_tests[@]}"
fi
if [ ${#skips[@]} -gt 0 ]; then
    echo "skipped tests (with the reason their suite gives):"
    printf '  %s\n' "${skips[@]}"
    if printf '%s\n' "${skips[@]}" | grep -q 'mocked server'; then
        echo "  (secretstorage runs its MockCollectionTest and LockingUnlockingTest only against libsecret's mock"
        echo "  service under another bus name: they create and delete collections and lock and unlock through"
        echo "  prompts that a real server shows to a person; they are skipped against any real server)"
    fi
fi
[ "$failures" = 0 ]
