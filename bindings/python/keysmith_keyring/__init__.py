"""A keyring backend over the Keysmith keychain.

Items are generic passwords keyed as keyring's macOS backend keys them (service and
username), so ``keysmith find-generic-password -s SERVICE -a USERNAME -w`` reads what
``keyring.set_password(SERVICE, USERNAME, ...)`` wrote, and the other way round.

The backend runs the ``keysmith`` executable: the password goes to it on standard input
(``--stdin-exact``: every byte kept, a trailing carriage return or newline included) and
comes back on standard output, never on a command line. Service and user names are passed
so that keysmith can never read them as options, whatever they look like (``-s``, ``--``).
Failures raise keyring's errors with keysmith's message (which never contains a secret);
nothing falls back to a plaintext store.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import List, Optional

from keyring.backend import KeyringBackend
from keyring.compat import properties
from keyring.credentials import SimpleCredential
from keyring.errors import KeyringError, KeyringLocked, PasswordDeleteError, PasswordSetError

__all__ = ["KeysmithKeyring"]

# keysmith's exit status when no item matches (as macOS `security`).
NOT_FOUND = 44
# errSecInteractionNotAllowed: the keychain is locked or cannot be used from this session.
LOCKED_STATUS = "-25308"


def _not_found_reason() -> str:
    """Why the keysmith executable cannot be used, and what to do (for errors and the warning)."""
    configured = os.environ.get("KEYSMITH_EXECUTABLE")
    if configured:
        return (
            f"KEYSMITH_EXECUTABLE names {configured}, which is not an executable file: point it at the "
            "keysmith tool (make install puts it in $PREFIX/bin)"
        )
    return (
        "the keysmith executable is not on the PATH: add the directory make install put it in to PATH "
        "(export PATH=\"$PREFIX/bin:$PATH\", for example $HOME/.local/bin), or set KEYSMITH_EXECUTABLE to its path"
    )


_warned_not_viable = False


def _find_executable() -> Optional[str]:
    configured = os.environ.get("KEYSMITH_EXECUTABLE")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("keysmith")


class KeysmithKeyring(KeyringBackend):
    """Keysmith keychain (generic passwords, as keyring's macOS backend stores them)."""

    executable: Optional[str] = None
    "Path of the keysmith executable (default: $KEYSMITH_EXECUTABLE, else keysmith on the PATH)."

    keychain: Optional[str] = None
    "Keychain directory passed as --keychain (default: keysmith's own, $KEYSMITH_HOME and so on)."

    @properties.classproperty
    def priority(cls) -> float:
        """Below the Secret Service and the macOS Keychain (5), above every file store.

        So it is the choice on a Linux machine without a Secret Service (no D-Bus, no
        desktop session), and never loses to keyrings.alt's plaintext or weakly
        encrypted files (below 1).
        """
        if _find_executable() is None:
            # keyring leaves a backend whose priority raises out without a word, and picks
            # another store (perhaps a plaintext file): say why, once per process.
            global _warned_not_viable
            reason = "keysmith_keyring is not viable: " + _not_found_reason()
            if not _warned_not_viable:
                _warned_not_viable = True
                print(f"warning: {reason}; keyring uses another backend.", file=sys.stderr)
            raise RuntimeError(reason)
        return 4.5

    # MARK: keyring API

    def set_password(self, service: str, username: str, password: str) -> None:
        """Stores ``password`` for ``service`` and ``username``, replacing any earlier one."""
        if not username:
            raise PasswordSetError("keysmith stores a password under a username: pass a non-empty username")
        if password == "":
            # keysmith keeps no empty secret; refused here, with the reason in this call's terms.
            raise PasswordSetError(
                "keysmith stores no empty password (nothing was changed): to remove the password, call delete_password"
            )
        secret = _utf8(password)  # --stdin-exact stores every byte, trailing newlines included
        if secret is None:
            # Raised outside any handler: the error holds no encoding error, so no part of the
            # password and no reference to it.
            raise PasswordSetError(
                f"could not store the password for service {service!r} and username {username!r}: the password "
                "holds a lone surrogate, which is not text and cannot be written as UTF-8 (nothing was changed)"
            )
        try:
            self._run(
                ["add-generic-password", *_names(service, _account(username)), "-U", "--stdin-exact"],
                stdin=secret,
                error=PasswordSetError,
                action="store the password",
            )
        finally:
            secret = b""

    def get_password(self, service: str, username: str) -> Optional[str]:
        """The password for ``service`` and ``username``, or None when there is none."""
        result = self._run(
            ["find-generic-password", *_names(service, _account(username)), "-w"],
            error=KeyringError,
            action="read the password",
            missing_ok=True,
        )
        if result is None:
            return None
        # keysmith ends the secret with one newline of its own.
        data = result[:-1] if result.endswith(b"\n") else result
        text = _text(data)
        data = result = b""
        if text is None:
            # Raised outside any handler: the error holds no decoding error, so no byte of the
            # secret and no reference to it.
            raise KeyringError(
                f"could not read the password for service {service!r} and username {username!r}: the stored "
                "secret is not UTF-8 text, so it cannot be returned as a Python string; read its bytes with "
                "keysmith find-generic-password -w"
            )
        return text

    def delete_password(self, service: str, username: str) -> None:
        """Deletes the password for ``service`` and ``username``.

        Raises PasswordDeleteError when there is none, as keyring's backends do.
        """
        result = self._run(
            ["delete-generic-password", *_names(service, _account(username))],
            error=PasswordDeleteError,
            action="delete the password",
            missing_ok=True,
        )
        if result is None:
            raise PasswordDeleteError(f"no password for service {service!r} and username {username!r}")

    def get_credential(self, service: str, username: Optional[str]) -> Optional[SimpleCredential]:
        """The username and password for ``service``: for ``username`` when given, else
        for the first account stored for the service."""
        if username is None:
            found = self._run(
                ["--json", "find-generic-password", *_option("-s", service)],
                error=KeyringError,
                action="find the service's account",
                missing_ok=True,
            )
            if found is None:
                return None
            username = json.loads(found.decode("utf-8")).get("account", "")
        password = self.get_password(service, username)
        if password is None:
            return None
        return SimpleCredential(username, password)

    # MARK: the keysmith process

    def _command(self, arguments: List[str]) -> List[str]:
        executable = self.executable or _find_executable()
        if executable is None:
            raise KeyringError("keysmith_keyring cannot run keysmith: " + _not_found_reason())
        command = [executable]
        if self.keychain:
            command += _option("--keychain", self.keychain)
        return command + arguments

    def _run(self, arguments, *, error, action, stdin=b"", missing_ok=False) -> Optional[bytes]:
        try:
            completed = subprocess.run(
                self._command(arguments),
                input=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                check=False,
            )
        except OSError as exc:
            raise error(f"could not run keysmith to {action}: {exc.strerror}") from None
        except ValueError:
            # A name with a NUL (no command-line argument can hold one) or a lone surrogate
            # (not text, so not UTF-8): keysmith never sees it, and nothing is changed.
            raise error(
                f"could not {action}: a service or user name holds a NUL character or a lone surrogate, which keysmith "
                "names cannot hold (nothing was changed)"
            ) from None
        if completed.returncode == 0:
            return completed.stdout
        if completed.returncode == NOT_FOUND and missing_ok:
            return None
        message = completed.stderr.decode("utf-8", "replace").strip() or f"keysmith exited with status {completed.returncode}"
        if LOCKED_STATUS in message:
            raise KeyringLocked(f"could not {action}: {message}")
        raise error(f"could not {action}: {message}")


def _option(flag: str, value: str) -> List[str]:
    """``flag`` with ``value``, in a form keysmith can never read as another option.

    A value that starts with a dash (``-U``, ``--json``, ``--``) is joined to a one-letter flag
    (``-s--json``): keysmith takes everything after the letter as the value. Any other value
    is the next argument (``-s`` ``VALUE``), which keysmith takes as it is, since only words
    starting with a dash are options; so is the empty value.
    """
    if value.startswith("-"):
        if flag.startswith("--"):
            return [f"{flag}={value}"]
        return [flag + value]
    return [flag, value]


def _names(service: str, account: str) -> List[str]:
    """The ``-s`` and ``-a`` arguments that select one generic password."""
    return _option("-s", service) + _option("-a", account)


def _utf8(text: str) -> Optional[bytes]:
    """``text`` as UTF-8, or None when it cannot be (without keeping the encoding error)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _text(data: bytes) -> Optional[str]:
    """``data`` as UTF-8 text, or None when it is not (without keeping the decoding error)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _account(username: Optional[str]) -> str:
    # keyring's macOS backend stores a missing username as the empty account.
    return "" if username is None else username
