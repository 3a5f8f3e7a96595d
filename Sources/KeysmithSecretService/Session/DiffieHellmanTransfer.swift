import COpenSSL
import CSodium

/// `dh-ietf1024-sha256-aes128-cbc-pkcs7`: secrets travel AES-128-CBC encrypted (PKCS#7 padding,
/// a fresh 16-byte IV per secret in the `parameters` field) under a key the client and the
/// service agree on when the session opens: Diffie-Hellman in the Second Oakley Group
/// (RFC 2409, 1024-bit MODP, generator 2), then HKDF-SHA256 of the 128-byte shared secret with
/// no salt and no info, to 16 bytes.
///
/// The service draws a fresh private exponent for every session and clears it as soon as the
/// key is derived; the key itself is zeroed when the last copy of this value goes (when the
/// session is closed or its client leaves the bus). All cryptography is libcrypto's.
public struct DiffieHellmanTransfer: SecretTransferCipher {
    public var algorithm: String { SessionAlgorithm.diffieHellman }

    /// The session's AES key (zeroed in its `deinit`).
    private let key: SessionKey

    private init(key: SessionKey) {
        self.key = key
    }

    /// How many private exponents `agree` draws before it gives up: each is rejected with
    /// probability 1/256 (see `agree(clientPublicKey:privateExponents:)`), so 16 all rejected
    /// happens once in 2^128 sessions.
    static let maximumExponentDraws = 16

    /// Agrees on a key with a client's public key.
    /// - Parameter clientPublicKey: The client's `OpenSession` input: g^x mod p big-endian, with
    ///   or without leading zero bytes, at most 128 bytes.
    /// - Returns: The cipher and the service's public key (128 bytes, big-endian).
    /// - Throws: `invalidArguments` when the public key is not an element of the group;
    ///   `failed` when libcrypto fails.
    public static func agree(clientPublicKey: [UInt8]) throws(SecretServiceError) -> (DiffieHellmanTransfer, [UInt8]) {
        let clientKey = try SecondOakleyGroup.validatedPublicKey(clientPublicKey)
        for _ in 0..<maximumExponentDraws {
            let exponent = try SecondOakleyGroup.randomPrivateExponent()
            if let agreement = try agree(clientKey: clientKey, privateExponent: exponent) {
                return agreement
            }
        }
        throw LibcryptoFailure.error("agreeing on a key")
    }

    /// `agree(clientPublicKey:)` with the private exponents given (big-endian), for tests: the
    /// first whose shared secret has no leading zero byte is used.
    package static func agree(
        clientPublicKey: [UInt8], privateExponents: [[UInt8]]
    ) throws(SecretServiceError) -> (DiffieHellmanTransfer, [UInt8]) {
        let clientKey = try SecondOakleyGroup.validatedPublicKey(clientPublicKey)
        for exponentBytes in privateExponents {
            if let agreement = try agree(clientKey: clientKey, privateExponent: try LibcryptoNumber(bigEndian: exponentBytes)) {
                return agreement
            }
        }
        throw LibcryptoFailure.error("agreeing on a key")
    }

    /// The agreement for one private exponent, or nil when the shared secret's first byte is
    /// zero. Clients disagree on how to write such a secret: python-secretstorage, libsecret
    /// since 0.18.6 and gnome-keyring since 3.27.2 pad it to 128 bytes; earlier libsecret and
    /// gnome-keyring (before 2017) write it without its leading zero bytes, and so derive
    /// another key. The service draws another exponent instead, so every client derives the same
    /// key as the service, whichever way it writes it.
    private static func agree(
        clientKey: LibcryptoNumber, privateExponent: LibcryptoNumber
    ) throws(SecretServiceError) -> (DiffieHellmanTransfer, [UInt8])? {
        let shared = try SecondOakleyGroup.power(clientKey, privateExponent)
        guard shared.byteCount == SecondOakleyGroup.byteCount else { return nil }

        let sharedBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: SecondOakleyGroup.byteCount, alignment: 16)
        defer {
            sodium_memzero(sharedBytes.baseAddress, sharedBytes.count)
            sharedBytes.deallocate()
        }
        try shared.write(into: sharedBytes)
        let key = try SessionKey(derivingFrom: UnsafeRawBufferPointer(sharedBytes))

        let servicePublicKey = try SecondOakleyGroup.power(
            try LibcryptoNumber(SecondOakleyGroup.generator), privateExponent)
        return (DiffieHellmanTransfer(key: key), try servicePublicKey.publicBytes(count: SecondOakleyGroup.byteCount))
    }

    public func open(parameters: [UInt8], value: [UInt8]) throws(SecretServiceError) -> [UInt8] {
        guard parameters.count == SessionKey.blockSize,
            !value.isEmpty, value.count % SessionKey.blockSize == 0,
            let secret = key.decrypt(value, iv: parameters)
        else {
            throw .invalidArguments(
                "the secret was not encrypted for this session: with \(SessionAlgorithm.diffieHellman), send a 16-byte IV as parameters and the secret AES-128-CBC encrypted (PKCS#7 padding) under the key agreed when this session was opened, in the session it was opened for.")
        }
        return secret
    }

    public func seal(_ secret: [UInt8]) throws(SecretServiceError) -> (parameters: [UInt8], value: [UInt8]) {
        var iv = [UInt8](repeating: 0, count: SessionKey.blockSize)
        let drawn = iv.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) == 1 }
        guard drawn else { throw LibcryptoFailure.error("drawing an IV") }
        return try seal(secret, iv: iv)
    }

    /// `seal` with the IV given, for known-answer tests.
    package func seal(_ secret: [UInt8], iv: [UInt8]) throws(SecretServiceError) -> (parameters: [UInt8], value: [UInt8]) {
        (iv, try key.encrypt(secret, iv: iv))
    }
}

extension DiffieHellmanTransfer: CustomStringConvertible, CustomReflectable {
    /// The algorithm's name: never the key.
    public var description: String { "\(SessionAlgorithm.diffieHellman) session cipher" }

    /// No children: `dump` and debuggers' summaries show the description, not the key's storage.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
