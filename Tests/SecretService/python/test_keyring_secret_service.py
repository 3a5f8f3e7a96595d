"""keyring's own backend tests (keyring.testing.backend.BackendBasicTests) aimed at its
SecretService backend, which talks to whatever owns org.freedesktop.secrets on the session
bus: run-outside-suites.sh starts this on a private bus with keysmith secret-service or
gnome-keyring there.

Two runs of the same tests: one in the default collection (what an application's
keyring.set_password uses) and one in the session collection, as keyring's own
tests/backends/test_SecretService.py does.
"""

import pytest

from keyring.backends import SecretService
from keyring.testing.backend import BackendBasicTests


@pytest.mark.skipif(
    not SecretService.Keyring.viable,
    reason="keyring's SecretService backend is not viable (secretstorage missing or no bus)",
)
class TestDefaultCollection(BackendBasicTests):
    def init_keyring(self):
        return SecretService.Keyring()


@pytest.mark.skipif(
    not SecretService.Keyring.viable,
    reason="keyring's SecretService backend is not viable (secretstorage missing or no bus)",
)
class TestSessionCollection(BackendBasicTests):
    def init_keyring(self):
        keyring = SecretService.Keyring()
        keyring.preferred_collection = "/org/freedesktop/secrets/collection/session"
        return keyring
