"""SearchItems + GetSecrets for one item through the bus, as libsecret's lookup does it, against
whatever owns org.freedesktop.secrets on the session bus. One connection and one session
(dh-ietf1024-sha256-aes128-cbc-pkcs7, decrypted with secretstorage's client code) are opened
first; each timed iteration is the two calls and the decryption.

    search_get_bench.py SERVICE ACCOUNT RUNS WARMUP

Prints "median p90" in milliseconds per iteration.
"""

import sys
import time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

from secretstorage.defines import ALGORITHM_DH
from secretstorage.dhcrypto import Session

SERVICE = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                      interface="org.freedesktop.Secret.Service")


def call(connection, method, signature, *body):
    reply = connection.send_and_get_reply(new_method_call(SERVICE, method, signature, body))
    if reply.header.message_type.name == "error":
        raise RuntimeError(f"{method}: {reply.header.fields}")
    return reply.body


def main():
    service, account, runs, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    connection = open_dbus_connection("SESSION")
    session = Session()
    output, session_path = call(connection, "OpenSession", "sv", ALGORITHM_DH,
                                ("ay", session.my_public_key.to_bytes(128, "big")))
    session.set_server_public_key(int.from_bytes(output[1], "big"))
    session.object_path = session_path
    attributes = {"service": service, "account": account}

    def once():
        unlocked, _locked = call(connection, "SearchItems", "a{ss}", attributes)
        secrets = call(connection, "GetSecrets", "aoo", unlocked[:1], session_path)[0]
        (_path, parameters, value, _type) = secrets[unlocked[0]]
        decryptor = Cipher(algorithms.AES(session.aes_key), modes.CBC(parameters)).decryptor()
        padded = decryptor.update(value) + decryptor.finalize()
        return padded[:-padded[-1]]

    first = once()
    if not first:
        raise SystemExit("the item's secret came back empty")
    for _ in range(warmup):
        once()
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        once()
        times.append(time.perf_counter_ns() - start)
    times.sort()
    median = times[len(times) // 2] if len(times) % 2 else (times[len(times) // 2 - 1] + times[len(times) // 2]) / 2
    p90 = times[min(len(times) - 1, int(len(times) * 0.9 + 0.999) - 1)]
    print(f"{median / 1e6:.3f} {p90 / 1e6:.3f}")
    connection.close()


if __name__ == "__main__":
    main()
