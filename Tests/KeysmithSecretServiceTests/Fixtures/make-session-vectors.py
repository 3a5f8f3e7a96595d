#!/usr/bin/env python3
"""Writes SessionTestVectors.swift: known answers for dh-ietf1024-sha256-aes128-cbc-pkcs7.

The answers come from implementations other than Keysmith's: Python's integers for the
Diffie-Hellman arithmetic, python-secretstorage's own client code (secretstorage.dhcrypto and
secretstorage.util.format_secret) for what a secretstorage client sends, and the
`cryptography` package for HKDF-SHA256 and AES-128-CBC. Every exponent and IV is derived from a
fixed label, so running this again writes the same file.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install cryptography secretstorage
    /tmp/venv/bin/python make-session-vectors.py > ../SessionTestVectors.swift
"""

import hashlib
import os
import sys

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

import secretstorage.util
from secretstorage.dhcrypto import DH_PRIME_1024, Session

# The Second Oakley Group (RFC 2409 section 6.2), written out here rather than taken from
# secretstorage, so the two are checked against each other.
PRIME = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1"
    "29024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245"
    "E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381"
    "FFFFFFFFFFFFFFFF", 16)
assert PRIME == DH_PRIME_1024
GENERATOR = 2
ORDER = (PRIME - 1) // 2


def stream(label, length):
    """`length` bytes determined by `label` (SHAKE-256): fixed test inputs, not secrets."""
    return hashlib.shake_256(b"keysmith session test vectors: " + label.encode()).digest(length)


def exponent(label):
    """A 1023-bit private exponent, as the service draws them (below 2^1023, so below p)."""
    return int.from_bytes(stream(label, 128), "big") >> 1


def hkdf_key(shared_bytes):
    return HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(shared_bytes)


def aes_cbc_encrypt(key, iv, plaintext):
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(padded) + encryptor.finalize()


def secretstorage_client(private_exponent, server_public):
    """secretstorage's own client session with a fixed private exponent."""
    session = Session()
    session.my_private_key = private_exponent
    session.my_public_key = pow(2, private_exponent, DH_PRIME_1024)
    session.set_server_public_key(server_public)
    session.object_path = "/org/freedesktop/secrets/session/1"
    return session


def secretstorage_encrypt(session, secret, iv):
    """secretstorage.util.format_secret with its random IV fixed."""
    real_urandom = secretstorage.util.os.urandom
    secretstorage.util.os.urandom = lambda n: iv
    try:
        _, parameters, value, _ = secretstorage.util.format_secret(session, secret, "text/plain")
    finally:
        secretstorage.util.os.urandom = real_urandom
    return bytes(parameters), bytes(value)


def swift_bytes(data):
    return '"' + data.hex() + '"'


lines = []


def emit(name, doc, data):
    lines.append(f"    /// {doc}")
    lines.append(f"    static let {name} = hex({swift_bytes(data)})")


# The agreement: a secretstorage client and the service with fixed exponents.
server_exponent = exponent("service")
client_exponent = exponent("secretstorage client")
server_public = pow(GENERATOR, server_exponent, PRIME)
client = secretstorage_client(client_exponent, server_public)
client_public_sent = client.my_public_key.to_bytes(128, "big")  # as util.open_session sends it
shared = pow(client.my_public_key, server_exponent, PRIME)
assert shared == pow(server_public, client_exponent, PRIME)
assert shared.bit_length() > 1016, "the fixed exponents must give a shared secret without a leading zero byte"
key = hkdf_key(shared.to_bytes(128, "big"))
assert key == client.aes_key, "cryptography's HKDF and secretstorage's HMAC steps disagree"

emit("serviceExponent", "The service's private exponent (1023 bits, big-endian).", server_exponent.to_bytes(128, "big"))
emit("servicePublicKey", "2^x mod p for the service's exponent, 128 bytes.", server_public.to_bytes(128, "big"))
emit("clientPublicKey", "secretstorage's public key for its exponent, as it sends it (128 bytes).", client_public_sent)
emit("sessionKey", "HKDF-SHA256 (no salt, no info) of the 128-byte shared secret, 16 bytes.", key)

# What the client sends: secretstorage's own format_secret.
client_secret = "correct horse battery staple ✓".encode()
client_iv = stream("client iv", 16)
client_parameters, client_value = secretstorage_encrypt(client, client_secret, client_iv)
assert client_parameters == client_iv
assert client_value == aes_cbc_encrypt(key, client_iv, client_secret)
emit("clientSecret", "The secret the client encrypts.", client_secret)
emit("clientParameters", "secretstorage's parameters (the IV).", client_parameters)
emit("clientValue", "secretstorage's AES-128-CBC ciphertext.", client_value)

# What the service sends, with a fixed IV: one block-aligned secret (a whole padding block).
service_secret = stream("service secret", 32)
service_iv = stream("service iv", 16)
service_value = aes_cbc_encrypt(key, service_iv, service_secret)
emit("serviceSecret", "A 32-byte secret the service encrypts (whole blocks: PKCS#7 adds a 16-byte block).", service_secret)
emit("serviceIV", "The IV the service is given for it.", service_iv)
emit("serviceValue", "The AES-128-CBC ciphertext the client expects.", service_value)

# libsecret (its libgcrypt backend) writes public keys without leading zero bytes. A client
# public key whose 128-byte form starts with a zero byte arrives as 127 bytes or fewer from it
# and as 128 from secretstorage: both are the same number.
label_index = 0
while True:
    short_exponent = exponent(f"short client {label_index}")
    short_public = pow(GENERATOR, short_exponent, PRIME)
    if short_public.bit_length() <= 1016:
        break
    label_index += 1
short_shared = pow(short_public, server_exponent, PRIME)
assert short_shared.bit_length() > 1016
emit("shortClientPublicKey", "A client public key below 2^1016, without its leading zero byte (127 bytes or fewer).",
     short_public.to_bytes((short_public.bit_length() + 7) // 8, "big"))
short_key = hkdf_key(short_shared.to_bytes(128, "big"))
emit("shortClientSessionKey", "The session key the service agrees with that client.", short_key)
emit("shortClientServiceValue", "serviceSecret encrypted under that key with serviceIV.",
     aes_cbc_encrypt(short_key, service_iv, service_secret))

# A service exponent whose shared secret with the client starts with a zero byte: a client that
# strips it (libsecret before 0.18.6, gnome-keyring before 3.27.2) and one that keeps it (the rest) derive
# different keys, so the service never uses such an exponent.
label_index = 0
while True:
    ambiguous_exponent = exponent(f"ambiguous service {label_index}")
    ambiguous_shared = pow(client.my_public_key, ambiguous_exponent, PRIME)
    if ambiguous_shared.bit_length() <= 1016:
        break
    label_index += 1
padded = ambiguous_shared.to_bytes(128, "big")
stripped = ambiguous_shared.to_bytes((ambiguous_shared.bit_length() + 7) // 8, "big")
assert hkdf_key(padded) != hkdf_key(stripped)
emit("ambiguousServiceExponent",
     "A service exponent whose shared secret with clientPublicKey starts with a zero byte.",
     ambiguous_exponent.to_bytes(128, "big"))

# Another session with the same client: its key must not open what was encrypted for the first.
# (AES-CBC has no integrity check: under a wrong key a value is refused only because its padding
# comes out wrong, which it does 255 times in 256; this exponent is one where it does.)


def padding_valid(key, iv, value):
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    padded = decryptor.update(value) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        unpadder.update(padded) + unpadder.finalize()
        return True
    except ValueError:
        return False


label_index = 0
while True:
    other_exponent = exponent(f"other service {label_index}")
    other_shared = pow(client.my_public_key, other_exponent, PRIME)
    if other_shared.bit_length() > 1016:
        other_key = hkdf_key(other_shared.to_bytes(128, "big"))
        if not padding_valid(other_key, client_iv, client_value) and not padding_valid(other_key, service_iv, service_value):
            break
    label_index += 1
emit("otherServiceExponent",
     "Another service exponent for clientPublicKey: its key finds neither clientValue's nor serviceValue's padding valid.",
     other_exponent.to_bytes(128, "big"))

# A number in range (1 < y < p-1) outside the group 2 generates: the order-q subgroup of
# quadratic residues (p is a safe prime, p = 7 mod 8).
assert pow(GENERATOR, ORDER, PRIME) == 1
candidate = 3
while pow(candidate, ORDER, PRIME) == 1:
    candidate += 1
emit("nonResidue", "A small number in range that is not in the subgroup 2 generates.", candidate.to_bytes(1, "big"))
emit("prime", "p, 128 bytes.", PRIME.to_bytes(128, "big"))

sys.stdout.write(
    "// Generated by Fixtures/make-session-vectors.py (Python integers, python-secretstorage "
    f"{secretstorage.__version__ if hasattr(secretstorage, '__version__') else ''}".rstrip()
    + ", cryptography); do not edit.\n"
    "// Known answers for dh-ietf1024-sha256-aes128-cbc-pkcs7 from implementations other than Keysmith's.\n"
    "// Test inputs only: none of these numbers protects anything.\n\n"
    "enum SessionTestVectors {\n"
    + "\n".join(lines)
    + "\n\n    private static func hex(_ text: String) -> [UInt8] {\n"
    "        var bytes: [UInt8] = []\n"
    "        var digits = text.utf8.makeIterator()\n"
    "        while let high = digits.next(), let low = digits.next() {\n"
    "            bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)\n"
    "        }\n"
    "        return bytes\n"
    "    }\n"
    "}\n")
