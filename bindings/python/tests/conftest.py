"""Fixtures: a temporary keychain for every test, and the built keysmith executable."""

import os
import shutil
import tempfile

import pytest


@pytest.fixture
def keysmith():
    """The keysmith executable the tests use ($KEYSMITH_EXECUTABLE, set by `make test`)."""
    path = os.environ.get("KEYSMITH_EXECUTABLE") or shutil.which("keysmith")
    if not path:
        pytest.fail("set KEYSMITH_EXECUTABLE to the built keysmith (make test does)")
    return path


@pytest.fixture
def home(monkeypatch, keysmith):
    """A temporary HOME and keychain; no D-Bus (so no Secret Service), no keyring config."""
    directory = tempfile.mkdtemp(prefix="keysmith-keyring-test-")
    monkeypatch.setenv("HOME", directory)
    monkeypatch.setenv("KEYSMITH_HOME", os.path.join(directory, "keychain"))
    monkeypatch.setenv("XDG_CONFIG_HOME", os.path.join(directory, "config"))
    monkeypatch.setenv("XDG_DATA_HOME", os.path.join(directory, "data"))
    monkeypatch.setenv("KEYSMITH_EXECUTABLE", keysmith)
    for variable in ("KEYSMITH_ACCESS_GROUPS", "KEYSMITH_ENTITLEMENTS", "PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(variable, raising=False)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
