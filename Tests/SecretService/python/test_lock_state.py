"""Lock state through the bus, against keysmith secret-service on a keychain with a passphrase
(lock-test.sh creates it, unlocks it and starts the server on a private bus):

- `keysmith lock` locks the login collection: PropertiesChanged says Locked=true, a secret is
  refused with IsLocked, SearchItems lists the item as locked; `keysmith unlock` reverses it.
- Service.Unlock while locked returns a prompt. Without KEYSMITH_ASKPASS in the server's
  environment the prompt completes as dismissed and the collection stays locked; with it (an
  askpass program that prints the passphrase) it completes with the collection unlocked.

KEYSMITH_TEST_PASSPHRASE holds the passphrase (the test's own, never a user's);
KEYSMITH_TEST_ASKPASS=1 says the server was started with KEYSMITH_ASKPASS.
"""

import os
import secrets
import subprocess
import time

import pytest
from jeepney import DBusAddress, MatchRule, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

import secretstorage
from secretstorage.defines import ALGORITHM_PLAIN, SS_PATH
from secretstorage.dhcrypto import Session

pytestmark = pytest.mark.skipif(os.environ.get("SECRET_SERVICE_UNDER_TEST") != "keysmith",
                                reason="keysmith's lock state (keysmith lock/unlock) only exists with keysmith")

BUS_NAME = "org.freedesktop.secrets"
IS_LOCKED = "org.freedesktop.Secret.Error.IsLocked"
PASSPHRASE = os.environ.get("KEYSMITH_TEST_PASSPHRASE", "")
ASKPASS = os.environ.get("KEYSMITH_TEST_ASKPASS") == "1"


def call(connection, path, interface, method, signature=None, *body):
    message = new_method_call(DBusAddress(path, bus_name=BUS_NAME, interface=interface), method, signature, body)
    reply = connection.send_and_get_reply(message, timeout=30)
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


def add_match(connection, rule):
    bus = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")
    connection.send_and_get_reply(new_method_call(bus, "AddMatch", "s", (rule.serialise(),)))


def locked(connection, path):
    (variant,) = call(connection, path, "org.freedesktop.DBus.Properties", "Get", "ss",
                      "org.freedesktop.Secret.Collection", "Locked")
    return variant[1]


def keysmith(*arguments, stdin=None):
    return subprocess.run(["keysmith", *arguments], input=stdin, capture_output=True, text=True, timeout=60)


def wait_for_locked_signal(connection, queue, path, expected, timeout=15):
    """Waits for PropertiesChanged on PATH saying Locked=EXPECTED."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = connection.recv_until_filtered(queue, timeout=max(0.1, deadline - time.monotonic()))
        except TimeoutError:
            break
        interface, changed, _invalidated = message.body
        if message.header.fields.get(1) == path and "Locked" in changed and changed["Locked"][1] == expected:
            return True
    return False


@pytest.fixture
def connection():
    connection = open_dbus_connection("SESSION")
    yield connection
    connection.close()


@pytest.fixture
def login(connection):
    (path,) = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "ReadAlias", "s", "default")
    assert path.startswith("/org/freedesktop/secrets/collection/")
    yield path
    # Leave the keychain unlocked for the next test.
    keysmith("unlock", "--stdin", stdin=PASSPHRASE + "\n")


@pytest.fixture
def item(connection, login):
    output, session_path = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "OpenSession", "sv",
                                ALGORITHM_PLAIN, ("s", ""))
    session = Session()
    session.encrypted = False
    session.object_path = session_path
    attributes = {"service": "keysmith-harness-lock-" + secrets.token_hex(4), "account": "A"}
    created = secretstorage.Collection(connection, login, session=session).create_item(
        "lock test", attributes, b"locked away", replace=True)
    yield created, attributes, session_path
    keysmith("unlock", "--stdin", stdin=PASSPHRASE + "\n")
    created.delete()


def test_keysmith_lock_and_unlock_reach_the_bus(connection, login, item):
    created, attributes, session_path = item
    assert locked(connection, login) is False
    rule = MatchRule(type="signal", interface="org.freedesktop.DBus.Properties", member="PropertiesChanged",
                     path=login)
    add_match(connection, rule)
    with connection.filter(rule) as queue:
        result = keysmith("lock")
        assert result.returncode == 0, result.stderr
        assert wait_for_locked_signal(connection, queue, login, True), "no PropertiesChanged with Locked=true"
        assert locked(connection, login) is True
        with pytest.raises(DBusErrorResponse) as raised:
            call(connection, created.item_path, "org.freedesktop.Secret.Item", "GetSecret", "o", session_path)
        assert raised.value.name == IS_LOCKED
        secrets_by_path = None
        try:
            (secrets_by_path,) = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "GetSecrets", "aoo",
                                      [created.item_path], session_path)
        except DBusErrorResponse as error:
            assert error.name == IS_LOCKED
        assert not secrets_by_path, "a locked collection returned a secret through GetSecrets"
        unlocked, locked_items = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "SearchItems",
                                      "a{ss}", attributes)
        assert created.item_path in locked_items and created.item_path not in unlocked

        result = keysmith("unlock", "--stdin", stdin=PASSPHRASE + "\n")
        assert result.returncode == 0, result.stderr
        assert wait_for_locked_signal(connection, queue, login, False), "no PropertiesChanged with Locked=false"
    assert locked(connection, login) is False
    assert secretstorage.Item(connection, created.item_path).get_secret() == b"locked away"


def test_unlock_through_the_bus_prompts(connection, login, item):
    created, _attributes, _session = item
    assert keysmith("lock").returncode == 0
    for _ in range(150):
        if locked(connection, login):
            break
        time.sleep(0.1)
    assert locked(connection, login) is True
    unlocked, prompt = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "Unlock", "ao", [login])
    assert unlocked == [] and prompt != "/"
    rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Prompt", member="Completed", path=prompt)
    add_match(connection, rule)
    with connection.filter(rule) as queue:
        call(connection, prompt, "org.freedesktop.Secret.Prompt", "Prompt", "s", "")
        completed = connection.recv_until_filtered(queue, timeout=30)
    dismissed, result = completed.body
    if ASKPASS:
        assert dismissed is False
        assert login in result[1]
        assert locked(connection, login) is False
        assert secretstorage.Item(connection, created.item_path).get_secret() == b"locked away"
    else:
        assert dismissed is True
        assert locked(connection, login) is True
