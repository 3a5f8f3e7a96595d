"""Runs secretstorage's own test suite (tests/ from its source release) against whatever owns
org.freedesktop.secrets on the session bus, with one session algorithm:

    run_secretstorage_tests.py SOURCE_DIR dh|plain

SOURCE_DIR is the unpacked source release (it holds secretstorage/ and tests/); its package is
the one tested, as the suite's own tests/run_tests.py does.

- dh: secretstorage as it is (it asks for dh-ietf1024-sha256-aes128-cbc-pkcs7 first and falls
  back to plain when the server answers NotSupported). Here a fallback fails the run: every
  session must really be encrypted.
- plain: every session is opened with the plain algorithm (as go-keyring's clients do).

Prints unittest's report, then one line per skipped test with its reason, and a summary
line "N passed, N failed, N skipped". Exit status 0 when nothing failed.
"""

import os
import sys
import unittest


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[2] not in ("dh", "plain"):
        print(__doc__, file=sys.stderr)
        return 2
    source_dir, algorithm = os.path.abspath(sys.argv[1]), sys.argv[2]
    tests_dir = os.path.join(source_dir, "tests")
    sys.path.insert(0, source_dir)
    sys.path.insert(0, tests_dir)

    import secretstorage
    import secretstorage.collection
    import secretstorage.item
    import secretstorage.util
    from secretstorage.defines import ALGORITHM_PLAIN, SS_PATH
    from secretstorage.dhcrypto import Session

    original_open_session = secretstorage.util.open_session

    def encrypted_session(connection):
        session = original_open_session(connection)
        if not session.encrypted:
            raise AssertionError(
                "the server refused dh-ietf1024-sha256-aes128-cbc-pkcs7 (NotSupported): "
                "secretstorage fell back to plain"
            )
        return session

    def plain_session(connection):
        service = secretstorage.util.DBusAddressWrapper(
            SS_PATH, secretstorage.util.SERVICE_IFACE, connection
        )
        session = Session()
        output, result = service.call("OpenSession", "sv", ALGORITHM_PLAIN, ("s", ""))
        session.encrypted = False
        session.object_path = result
        return session

    chosen = encrypted_session if algorithm == "dh" else plain_session
    for module in (secretstorage.util, secretstorage.collection, secretstorage.item):
        module.open_session = chosen

    print(
        f"secretstorage from {os.path.dirname(secretstorage.__file__)}; session algorithm: {algorithm};"
        f" server: {os.environ.get('SECRET_SERVICE_UNDER_TEST', 'unknown')}"
    )
    suite = unittest.TestLoader().discover(tests_dir, top_level_dir=tests_dir)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    for test, reason in result.skipped:
        print(f"skipped: {test.id()}: {reason}")
    # A test whose body and tearDown both fail is reported twice: count tests, not reports.
    failing = {test.id() for test, _ in result.failures + result.errors} | {
        test.id() for test in result.unexpectedSuccesses}
    for test_id in sorted(failing):
        print(f"failed: {test_id}")
    failed = len(failing)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped - len(result.expectedFailures)
    print(f"secretstorage ({algorithm}): {passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
