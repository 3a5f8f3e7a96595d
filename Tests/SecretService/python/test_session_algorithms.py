"""Both session algorithms, through secretstorage and jeepney, against whatever owns
org.freedesktop.secrets on the session bus (run-outside-suites.sh starts this on a private bus
with keysmith secret-service or gnome-keyring there).

A secret stored through one algorithm is read through the other; sessions that are closed, or
belong to a client that left the bus, are refused; an unknown algorithm is NotSupported; the
default alias answers as a collection.
"""

import os
import secrets

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

import secretstorage
from secretstorage.defines import ALGORITHM_DH, ALGORITHM_PLAIN, SS_PATH
from secretstorage.dhcrypto import Session

SERVICE = DBusAddress(SS_PATH, bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")
NOT_SUPPORTED = "org.freedesktop.DBus.Error.NotSupported"
NO_SESSION = "org.freedesktop.Secret.Error.NoSession"


def call(connection, address, method, signature=None, *body, interface=None):
    message = new_method_call(address if interface is None else address.with_interface(interface),
                              method, signature, body)
    reply = connection.send_and_get_reply(message)
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


def open_session(connection, algorithm):
    session = Session()
    if algorithm == ALGORITHM_DH:
        output, path = call(connection, SERVICE, "OpenSession", "sv", ALGORITHM_DH,
                            ("ay", session.my_public_key.to_bytes(128, "big")))
        assert output[0] == "ay"
        session.set_server_public_key(int.from_bytes(output[1], "big"))
    else:
        output, path = call(connection, SERVICE, "OpenSession", "sv", ALGORITHM_PLAIN, ("s", ""))
        session.encrypted = False
    session.object_path = path
    return session


@pytest.fixture
def connection():
    connection = open_dbus_connection("SESSION")
    yield connection
    connection.close()


@pytest.fixture
def attributes():
    return {"service": "keysmith-harness-" + secrets.token_hex(6), "account": "algorithm-test"}


def default_collection(connection, session):
    return secretstorage.Collection(connection, secretstorage.collection.DEFAULT_COLLECTION, session=session)


@pytest.mark.parametrize(
    "store_algorithm,read_algorithm",
    [(ALGORITHM_PLAIN, ALGORITHM_DH), (ALGORITHM_DH, ALGORITHM_PLAIN),
     (ALGORITHM_DH, ALGORITHM_DH), (ALGORITHM_PLAIN, ALGORITHM_PLAIN)],
    ids=["plain-then-dh", "dh-then-plain", "dh-then-dh", "plain-then-plain"],
)
def test_secret_crosses_session_algorithms(connection, attributes, store_algorithm, read_algorithm):
    secret = os.urandom(48)
    store = open_session(connection, store_algorithm)
    item = default_collection(connection, store).create_item("harness " + store_algorithm, attributes, secret,
                                                             replace=True, content_type="application/octet-stream")
    try:
        read = open_session(connection, read_algorithm)
        again = secretstorage.Item(connection, item.item_path, session=read)
        assert again.get_secret() == secret
        # Service.GetSecrets, the call libsecret's lookup makes.
        (found,) = [path for path in call(connection, SERVICE, "SearchItems", "a{ss}", attributes)[0]]
        secrets_by_path = call(connection, SERVICE, "GetSecrets", "aoo", [found], read.object_path)[0]
        assert list(secrets_by_path) == [item.item_path]
        session_path, parameters, value, content_type = secrets_by_path[item.item_path]
        assert session_path == read.object_path
        if read.encrypted:
            assert len(parameters) == 16 and value != secret
        else:
            assert parameters == b"" and value == secret
    finally:
        item.delete()


def test_unknown_algorithm_is_not_supported(connection):
    with pytest.raises(DBusErrorResponse) as raised:
        call(connection, SERVICE, "OpenSession", "sv", "rot13", ("s", ""))
    assert raised.value.name == NOT_SUPPORTED


def test_closed_session_is_refused(connection, attributes):
    session = open_session(connection, ALGORITHM_PLAIN)
    item = default_collection(connection, session).create_item("harness closed", attributes, b"value", replace=True)
    try:
        closed = open_session(connection, ALGORITHM_DH)
        call(connection, DBusAddress(closed.object_path, bus_name="org.freedesktop.secrets"), "Close",
             interface="org.freedesktop.Secret.Session")
        with pytest.raises(DBusErrorResponse) as raised:
            call(connection, SERVICE, "GetSecrets", "aoo", [item.item_path], closed.object_path)
        assert raised.value.name == NO_SESSION
        with pytest.raises(DBusErrorResponse) as raised:
            call(connection, DBusAddress(item.item_path, bus_name="org.freedesktop.secrets"), "GetSecret", "o",
                 closed.object_path, interface="org.freedesktop.Secret.Item")
        assert raised.value.name == NO_SESSION
    finally:
        item.delete()


def test_session_of_a_client_that_left_is_refused(connection, attributes):
    session = open_session(connection, ALGORITHM_PLAIN)
    item = default_collection(connection, session).create_item("harness left", attributes, b"value", replace=True)
    try:
        other = open_dbus_connection("SESSION")
        gone = open_session(other, ALGORITHM_PLAIN)
        other.close()
        # The server hears of the departure through the bus; a later call from us is ordered after it.
        call(connection, SERVICE, "ReadAlias", "s", "default")
        with pytest.raises(DBusErrorResponse) as raised:
            call(connection, DBusAddress(item.item_path, bus_name="org.freedesktop.secrets"), "GetSecret", "o",
                 gone.object_path, interface="org.freedesktop.Secret.Item")
        assert raised.value.name == NO_SESSION
    finally:
        item.delete()


def test_default_alias_answers_as_a_collection(connection, attributes):
    (collection_path,) = call(connection, SERVICE, "ReadAlias", "s", "default")
    assert collection_path.startswith("/org/freedesktop/secrets/collection/")
    session = open_session(connection, ALGORITHM_DH)
    alias = secretstorage.Collection(connection, "/org/freedesktop/secrets/aliases/default", session=session)
    item = alias.create_item("harness alias", attributes, b"through the alias", replace=True)
    try:
        found = list(alias.search_items(attributes))
        assert len(found) == 1 and found[0].get_secret() == b"through the alias"
        real = secretstorage.Collection(connection, collection_path, session=session)
        (in_real,) = list(real.search_items(attributes))
        assert in_real.get_label() == "harness alias"
        # The item is also reachable under the alias path (Evolution and virt-manager call it there).
        under_alias = "/org/freedesktop/secrets/aliases/default/" + in_real.item_path.rsplit("/", 1)[1]
        assert secretstorage.Item(connection, under_alias, session=session).get_secret() == b"through the alias"
    finally:
        item.delete()
