"""keysmith_keyring through keyring's API, keyring's command line, and keysmith itself."""

import os
import subprocess
import sys
import uuid

import keyring
import keyring.backend
import pytest
from keyring.errors import KeyringError, PasswordDeleteError, PasswordSetError

from keysmith_keyring import KeysmithKeyring

BACKEND = "keysmith_keyring.KeysmithKeyring"


def secret(name="pw"):
    return f"{name}-{uuid.uuid4().hex[:12]}"


def run(command, stdin="", env=None):
    return subprocess.run(command, input=stdin.encode(), capture_output=True, env=env, check=False)


def python_keyring(*arguments, stdin="", backend=True):
    """The `keyring` command line of this environment."""
    env = dict(os.environ)
    if backend:
        env["PYTHON_KEYRING_BACKEND"] = BACKEND
    return run([sys.executable, "-m", "keyring", *arguments], stdin=stdin, env=env)


def test_set_get_delete_through_keyrings_api(home):
    keyring.set_keyring(KeysmithKeyring())
    password = secret()
    keyring.set_password("api.example.com", "deploy", password)
    assert keyring.get_password("api.example.com", "deploy") == password
    replacement = secret("new")
    keyring.set_password("api.example.com", "deploy", replacement)
    assert keyring.get_password("api.example.com", "deploy") == replacement
    keyring.delete_password("api.example.com", "deploy")
    assert keyring.get_password("api.example.com", "deploy") is None
    with pytest.raises(PasswordDeleteError):
        keyring.delete_password("api.example.com", "deploy")


def test_passwords_are_kept_byte_for_byte(home):
    backend = KeysmithKeyring()
    for password in ["pässwörd ✓", "ends with a newline\n", "two\nlines", " spaces ", "-w", "=", "x" * 4000]:
        backend.set_password("bytes.example.com", "u", password)
        assert backend.get_password("bytes.example.com", "u") == password


def test_get_credential_with_and_without_a_username(home):
    backend = KeysmithKeyring()
    password = secret()
    backend.set_password("cred.example.com", "alice", password)
    credential = backend.get_credential("cred.example.com", "alice")
    assert (credential.username, credential.password) == ("alice", password)
    anyone = backend.get_credential("cred.example.com", None)
    assert (anyone.username, anyone.password) == ("alice", password)
    assert backend.get_credential("cred.example.com", "bob") is None
    assert backend.get_credential("nothing.example.com", None) is None


def test_keyring_command_line_with_python_keyring_backend(home):
    password = secret()
    stored = python_keyring("set", "cli.example.com", "deploy", stdin=password + "\n")
    assert stored.returncode == 0, stored.stderr
    got = python_keyring("get", "cli.example.com", "deploy")
    assert got.returncode == 0, got.stderr
    assert got.stdout.decode() == password + "\n"
    deleted = python_keyring("del", "cli.example.com", "deploy")
    assert deleted.returncode == 0, deleted.stderr
    assert python_keyring("get", "cli.example.com", "deploy").returncode != 0


def test_keysmith_reads_what_python_wrote_and_the_other_way_round(home, keysmith):
    backend = KeysmithKeyring()
    password = secret()
    backend.set_password("interop.example.com", "deploy", password)
    found = run([keysmith, "find-generic-password", "-s", "interop.example.com", "-a", "deploy", "-w"])
    assert found.returncode == 0, found.stderr
    assert found.stdout.decode() == password + "\n"

    other = secret("cli")
    added = run([keysmith, "add-generic-password", "-s", "tool.example.com", "-a", "ci", "--stdin"], stdin=other)
    assert added.returncode == 0, added.stderr
    assert backend.get_password("tool.example.com", "ci") == other
    backend.delete_password("tool.example.com", "ci")
    gone = run([keysmith, "find-generic-password", "-s", "tool.example.com", "-a", "ci"])
    assert gone.returncode == 44


def test_chosen_automatically_without_a_secret_service(home):
    # A fresh interpreter with no backend configured and no D-Bus session: keyring picks
    # keysmith (alone, or first in its chain when a plaintext store is installed too).
    probe = (
        "import keyring, keyring.backends.chainer as c\n"
        "k = keyring.get_keyring()\n"
        "chain = k.backends if isinstance(k, c.ChainerBackend) else [k]\n"
        "print(type(chain[0]).__module__ + '.' + type(chain[0]).__name__)\n"
    )
    chosen = run([sys.executable, "-c", probe], env=dict(os.environ))
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout.decode().strip() == BACKEND
    # And it goes to the keychain: what the default keyring stores, keysmith reads.
    password = secret()
    stored = python_keyring("set", "auto.example.com", "deploy", stdin=password + "\n", backend=False)
    assert stored.returncode == 0, stored.stderr
    found = run([os.environ["KEYSMITH_EXECUTABLE"], "find-generic-password", "-s", "auto.example.com", "-a", "deploy", "-w"])
    assert found.stdout.decode() == password + "\n"


def test_a_failing_keychain_raises_and_never_falls_back_to_plaintext(home, monkeypatch):
    # No writable access group: every keysmith call fails, as on a locked keychain.
    monkeypatch.setenv("KEYSMITH_ACCESS_GROUPS", "com.apple.token")
    password = secret()
    with pytest.raises(PasswordSetError) as raised:
        KeysmithKeyring().set_password("fail.example.com", "u", password)
    assert password not in str(raised.value)
    assert "could not store the password" in str(raised.value)
    # Through the default keyring (a chain when keyrings.alt is installed): an error, and
    # no file store received the password.
    stored = python_keyring("set", "fail.example.com", "u", stdin=password + "\n", backend=False)
    assert stored.returncode != 0
    assert password.encode() not in stored.stdout + stored.stderr
    for root, _, files in os.walk(home):
        for name in files:
            with open(os.path.join(root, name), "rb") as handle:
                assert password.encode() not in handle.read(), os.path.join(root, name)


def test_read_failures_raise_keyring_errors_with_keysmiths_reason(home, monkeypatch, tmp_path):
    # A keychain directory other users can read: keysmith refuses it and says how to fix it.
    unsafe = tmp_path / "unsafe"
    monkeypatch.setenv("KEYSMITH_HOME", str(unsafe))
    KeysmithKeyring().set_password("any.example.com", "other", secret())
    unsafe.chmod(0o777)
    with pytest.raises(KeyringError) as raised:
        KeysmithKeyring().get_password("any.example.com", "u")
    assert "chmod 700" in str(raised.value)
    with pytest.raises(KeyringError):
        KeysmithKeyring().get_credential("any.example.com", None)


def test_secrets_never_reach_the_command_line(home, keysmith, tmp_path):
    log = tmp_path / "argv.log"
    wrapper = tmp_path / "keysmith-wrapper"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{keysmith}" "$@"\n')
    wrapper.chmod(0o700)
    backend = KeysmithKeyring()
    backend.executable = str(wrapper)
    password = secret()
    backend.set_password("argv.example.com", "u", password)
    assert backend.get_password("argv.example.com", "u") == password
    backend.delete_password("argv.example.com", "u")
    assert log.read_text().count("argv.example.com") == 3
    assert password not in log.read_text()


def test_priority_needs_the_executable(home, monkeypatch):
    assert KeysmithKeyring.priority == 4.5
    monkeypatch.setenv("KEYSMITH_EXECUTABLE", "/nonexistent/keysmith")
    with pytest.raises(RuntimeError) as raised:
        KeysmithKeyring.priority  # noqa: B018
    assert "/nonexistent/keysmith" in str(raised.value)


def test_not_viable_says_why_when_keysmith_is_not_on_the_path(home, monkeypatch, capsys):
    import keysmith_keyring

    monkeypatch.setattr(keysmith_keyring, "_warned_not_viable", False)
    monkeypatch.delenv("KEYSMITH_EXECUTABLE", raising=False)
    monkeypatch.setenv("PATH", str(home))
    with pytest.raises(RuntimeError) as raised:
        KeysmithKeyring.priority  # noqa: B018
    assert "not on the PATH" in str(raised.value)
    assert "$PREFIX/bin" in str(raised.value)
    # keyring drops a backend whose priority raises without a word: the reason is printed too.
    assert "keysmith_keyring is not viable" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:Empty usernames are deprecated")
def test_an_empty_username_is_refused_with_the_reason(home):
    with pytest.raises(PasswordSetError) as raised:
        KeysmithKeyring().set_password("empty.example.com", "", secret())
    assert "non-empty username" in str(raised.value)
    assert KeysmithKeyring().get_password("empty.example.com", None) is None


def test_an_empty_password_is_refused_with_a_reason_for_python_and_keeps_the_stored_one(home):
    backend = KeysmithKeyring()
    password = secret()
    backend.set_password("empty-pw.example.com", "deploy", password)
    with pytest.raises(PasswordSetError) as raised:
        backend.set_password("empty-pw.example.com", "deploy", "")
    # The reason speaks of the call Python made, not of keysmith's command line.
    assert "empty password" in str(raised.value)
    assert "--stdin" not in str(raised.value)
    assert backend.get_password("empty-pw.example.com", "deploy") == password


def test_passwords_ending_in_a_carriage_return_or_newlines_are_kept_exactly(home):
    backend = KeysmithKeyring()
    for password in ["abc\r", "abc\r\n", "\r", "\n", "abc\n\n", "\r\n\r\n", "line\r\nline\r"]:
        backend.set_password("cr.example.com", "u", password)
        assert backend.get_password("cr.example.com", "u") == password, repr(password)


OPTION_LIKE_NAMES = ["-s", "-w", "--json", "--", "-U", "-a", "-", "--stdin", "--stdin-exact", "-sx", "--keychain=x", "-w-", "-Uw"]


def test_names_that_look_like_options_reach_their_own_item(home, keysmith):
    backend = KeysmithKeyring()
    stored = {}
    for index, name in enumerate(OPTION_LIKE_NAMES):
        # As a service, as a username, and as both.
        for service, username in [(name, "plain-user"), ("option-names.example.com", name), (name, name)]:
            password = f"{index}-{secret()}"
            backend.set_password(service, username, password)
            stored[(service, username)] = password
    for (service, username), password in stored.items():
        assert backend.get_password(service, username) == password, (service, username)
        credential = backend.get_credential(service, username)
        assert (credential.username, credential.password) == (username, password)
    # Each name is one item of its own in keysmith too.
    for name in OPTION_LIKE_NAMES:
        found = run([keysmith, "find-generic-password", "-s", "option-names.example.com", "-a" + name, "-w"])
        assert found.stdout.decode() == stored[("option-names.example.com", name)] + "\n", name
    for service, username in stored:
        backend.delete_password(service, username)
        assert backend.get_password(service, username) is None, (service, username)
    for service, username in stored:
        with pytest.raises(PasswordDeleteError):
            backend.delete_password(service, username)


def test_a_service_named_like_an_option_without_a_username_finds_its_account(home):
    backend = KeysmithKeyring()
    password = secret()
    backend.set_password("--json", "-w", password)
    anyone = backend.get_credential("--json", None)
    assert (anyone.username, anyone.password) == ("-w", password)


def test_a_keychain_path_starting_with_a_dash_is_passed_as_a_path(home, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    backend = KeysmithKeyring()
    backend.keychain = "-keychain"
    password = secret()
    backend.set_password("dash-path.example.com", "u", password)
    assert backend.get_password("dash-path.example.com", "u") == password
    assert (tmp_path / "-keychain").is_dir()


def test_a_stored_secret_that_is_not_utf8_raises_a_keyring_error_holding_none_of_it(home, keysmith):
    stored = b"\xff\xfeNOT-TEXT-SECRET\x80"
    added = subprocess.run(
        [keysmith, "add-generic-password", "-s", "binary.example.com", "-a", "u", "--stdin"],
        input=stored, capture_output=True, check=False,
    )
    assert added.returncode == 0, added.stderr
    with pytest.raises(KeyringError) as raised:
        KeysmithKeyring().get_password("binary.example.com", "u")
    error = raised.value
    assert not isinstance(error, UnicodeDecodeError)
    assert error.__cause__ is None and error.__context__ is None
    text = str(error) + repr(error) + repr(error.args)
    for fragment in ["NOT-TEXT-SECRET", "\\xff", "0xff", "\\xfe", "0xfe", "\\x80", "0x80"]:
        assert fragment not in text, fragment
    assert "UTF-8" in str(error)
    assert all(not isinstance(argument, (bytes, bytearray)) for argument in error.args)
    with pytest.raises(KeyringError):
        KeysmithKeyring().get_credential("binary.example.com", "u")


@pytest.mark.parametrize("service, username", [("nul\0service", "u"), ("svc", "nul\0user"), ("lone\ud800surrogate", "u")])
def test_a_name_keysmith_cannot_take_raises_a_keyring_error_naming_neither_the_password(home, service, username):
    backend = KeysmithKeyring()
    password = secret()
    with pytest.raises(PasswordSetError) as raised:
        backend.set_password(service, username, password)
    assert password not in str(raised.value)
    for call in (lambda: backend.get_password(service, username), lambda: backend.delete_password(service, username)):
        with pytest.raises(KeyringError):
            call()


def test_a_password_that_cannot_be_utf8_raises_a_keyring_error_holding_none_of_it(home):
    backend = KeysmithKeyring()
    password = "SECRET-" + secret() + "\ud800"
    with pytest.raises(PasswordSetError) as raised:
        backend.set_password("surrogate.example.com", "u", password)
    error = raised.value
    assert "SECRET" not in str(error)
    assert error.__cause__ is None and error.__context__ is None
    assert backend.get_password("surrogate.example.com", "u") is None
