"""Bad input from a client, against whatever owns org.freedesktop.secrets on the session bus
(run-outside-suites.sh starts this on a private bus with keysmith secret-service or
gnome-keyring there): unknown object paths, wrong signatures, huge attributes, a secret sent
in another client's session. Each is answered with an error, and what was stored before is
still there afterwards, unchanged.
"""

import os
import secrets

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

import secretstorage
from secretstorage.defines import ALGORITHM_PLAIN, SS_PATH
from secretstorage.dhcrypto import Session

BUS_NAME = "org.freedesktop.secrets"
SERVICE = DBusAddress(SS_PATH, bus_name=BUS_NAME, interface="org.freedesktop.Secret.Service")
DEFAULT = "/org/freedesktop/secrets/aliases/default"
NO_SUCH_OBJECT = {"org.freedesktop.Secret.Error.NoSuchObject", "org.freedesktop.DBus.Error.UnknownObject",
                  "org.freedesktop.DBus.Error.UnknownMethod"}
INVALID_ARGS = {"org.freedesktop.DBus.Error.InvalidArgs", "org.freedesktop.DBus.Error.UnknownMethod"}


def call(connection, path, interface, method, signature=None, *body):
    message = new_method_call(DBusAddress(path, bus_name=BUS_NAME, interface=interface), method, signature, body)
    reply = connection.send_and_get_reply(message)
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


def plain_session(connection):
    output, path = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "OpenSession", "sv",
                        ALGORITHM_PLAIN, ("s", ""))
    session = Session()
    session.encrypted = False
    session.object_path = path
    return session


@pytest.fixture
def connection():
    connection = open_dbus_connection("SESSION")
    yield connection
    connection.close()


@pytest.fixture
def stored(connection):
    """An item stored before the bad input; checked unchanged after it."""
    attributes = {"service": "keysmith-harness-" + secrets.token_hex(6), "account": "kept"}
    value = os.urandom(32)
    collection = secretstorage.Collection(connection, DEFAULT, session=plain_session(connection))
    item = collection.create_item("kept through bad input", attributes, value, replace=True)
    yield attributes
    again = list(collection.search_items(attributes))
    assert len(again) == 1, "the item stored before the bad input is gone or doubled"
    assert again[0].get_secret() == value and again[0].get_label() == "kept through bad input"
    item.delete()


@pytest.mark.parametrize("path,interface,method,signature,body", [
    ("/org/freedesktop/secrets/collection/no_such_collection", "org.freedesktop.Secret.Collection",
     "SearchItems", "a{ss}", ({"a": "b"},)),
    ("/org/freedesktop/secrets/collection/login/99999999", "org.freedesktop.Secret.Item", "Delete", None, ()),
    ("/org/freedesktop/secrets/aliases/no_such_alias", "org.freedesktop.Secret.Collection", "Delete", None, ()),
    ("/org/freedesktop/secrets/session/no_such_session", "org.freedesktop.Secret.Session", "Close", None, ()),
], ids=["collection", "item", "alias", "session"])
def test_unknown_object_paths_are_errors(connection, stored, path, interface, method, signature, body):
    with pytest.raises(DBusErrorResponse) as raised:
        call(connection, path, interface, method, signature, *body)
    assert raised.value.name in NO_SUCH_OBJECT


def test_an_unknown_item_in_get_secrets_is_left_out_or_refused(connection, stored):
    session = plain_session(connection)
    try:
        (found,) = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "GetSecrets", "aoo",
                        ["/org/freedesktop/secrets/collection/login/99999999"], session.object_path)
        assert found == {}
    except DBusErrorResponse as error:
        assert error.name in NO_SUCH_OBJECT


@pytest.mark.parametrize("method,signature,body", [
    ("SearchItems", "s", ("service",)),
    ("OpenSession", "ss", ("plain", "")),
    ("GetSecrets", "ao", (["/org/freedesktop/secrets/collection/login/1"],)),
    ("ReadAlias", "u", (7,)),
], ids=["SearchItems-s", "OpenSession-ss", "GetSecrets-ao", "ReadAlias-u"])
def test_wrong_signatures_are_invalid_arguments(connection, stored, method, signature, body):
    with pytest.raises(DBusErrorResponse) as raised:
        call(connection, SS_PATH, "org.freedesktop.Secret.Service", method, signature, *body)
    assert raised.value.name in INVALID_ARGS


def test_a_huge_attribute_is_stored_whole_or_refused(connection, stored):
    huge = {"service": "keysmith-harness-huge-" + secrets.token_hex(4), "blob": "x" * (1 << 20)}
    collection = secretstorage.Collection(connection, DEFAULT, session=plain_session(connection))
    try:
        item = collection.create_item("huge attribute", huge, b"value", replace=True)
    except DBusErrorResponse:
        return  # refused: the fixture checks nothing else changed
    try:
        found = list(collection.search_items(huge))
        assert [i.item_path for i in found] == [item.item_path]
        assert found[0].get_attributes()["blob"] == huge["blob"]
    finally:
        item.delete()


def test_a_secret_in_another_clients_session_is_refused(connection, stored):
    other = open_dbus_connection("SESSION")
    try:
        foreign = plain_session(other)
        with pytest.raises(DBusErrorResponse):
            call(connection, DEFAULT, "org.freedesktop.Secret.Collection", "CreateItem", "a{sv}(oayays)b",
                 {"org.freedesktop.Secret.Item.Label": ("s", "foreign session"),
                  "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"service": "foreign-" + secrets.token_hex(4)})},
                 (foreign.object_path, b"", b"value", "text/plain"), True)
        (unlocked, locked) = call(connection, SS_PATH, "org.freedesktop.Secret.Service", "SearchItems", "a{ss}", stored)
        with pytest.raises(DBusErrorResponse):
            call(connection, unlocked[0], "org.freedesktop.Secret.Item", "GetSecret", "o", foreign.object_path)
    finally:
        other.close()
