"""A locked keychain: the backend raises keyring's KeyringLocked (not a plain KeyringError,
and never None), so callers can tell "unlock first" from "broken"; unlocked again, the same
call returns the password."""

import os
import subprocess
import uuid

import pytest
from keyring.errors import KeyringLocked

from keysmith_keyring import KeysmithKeyring


def keysmith_command(keysmith, *arguments, stdin=""):
    # The tests' cheap Argon2id for the passphrase (read by debug builds only).
    env = dict(os.environ, KEYSMITH_KDF_PROFILE="fast")
    return subprocess.run([keysmith, *arguments], input=stdin.encode(), capture_output=True, env=env, check=False)


@pytest.fixture
def locked_item(home, keysmith):
    """A keychain with a passphrase and one item accessible only while it is unlocked; locked."""
    created = keysmith_command(keysmith, "create", "--stdin", stdin="open sesame\n")
    assert created.returncode == 0, created.stderr
    service = f"com.example.python.locked.{uuid.uuid4().hex[:8]}"
    password = f"pw-{uuid.uuid4().hex[:12]}"
    added = keysmith_command(
        keysmith, "add-generic-password", "-s", service, "-a", "alice", "--accessible", "whenUnlocked", "--stdin",
        stdin=password,
    )
    assert added.returncode == 0, added.stderr
    locked = keysmith_command(keysmith, "lock")
    assert locked.returncode == 0, locked.stderr
    yield service, password
    keysmith_command(keysmith, "lock", "--all")


def test_reading_from_a_locked_keychain_raises_keyring_locked(locked_item, keysmith):
    service, password = locked_item
    backend = KeysmithKeyring()
    with pytest.raises(KeyringLocked) as raised:
        backend.get_password(service, "alice")
    assert "-25308" in str(raised.value)
    assert password not in str(raised.value)

    unlocked = keysmith_command(keysmith, "unlock", "--stdin", stdin="open sesame\n")
    assert unlocked.returncode == 0, unlocked.stderr
    assert backend.get_password(service, "alice") == password
