import KeysmithSecretService
import Testing

/// dh-ietf1024-sha256-aes128-cbc-pkcs7 against known answers from implementations other than
/// Keysmith's (SessionTestVectors.swift: Python integers, python-secretstorage's client code and
/// the `cryptography` package; Fixtures/make-session-vectors.py writes it).
@Suite("Diffie-Hellman session")
struct SessionDiffieHellmanTests {
    typealias Vectors = SessionTestVectors

    /// The agreement with the vectors' client and exponent.
    private func knownSession() throws -> (DiffieHellmanTransfer, [UInt8]) {
        try DiffieHellmanTransfer.agree(clientPublicKey: Vectors.clientPublicKey, privateExponents: [Vectors.serviceExponent])
    }

    private func expectNotForThisSession(
        _ cipher: DiffieHellmanTransfer, parameters: [UInt8], value: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let opened = try cipher.open(parameters: parameters, value: value)
            Issue.record("a secret not encrypted for this session opened (\(opened.count) bytes)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", sourceLocation: sourceLocation)
            #expect(error.message.contains("not encrypted for this session"), sourceLocation: sourceLocation)
        }
    }

    private func expectInvalidPublicKey(_ key: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try DiffieHellmanTransfer.agree(clientPublicKey: key)
            Issue.record("a public key of \(key.count) bytes outside the group was accepted", sourceLocation: sourceLocation)
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", sourceLocation: sourceLocation)
            #expect(error.message.contains("public key"), sourceLocation: sourceLocation)
        }
    }

    @Test("the service's public key and session key match the known answers for a secretstorage client")
    func knownAnswers() throws {
        let (cipher, servicePublicKey) = try knownSession()
        #expect(cipher.algorithm == "dh-ietf1024-sha256-aes128-cbc-pkcs7")
        #expect(servicePublicKey == Vectors.servicePublicKey)
        // The key, checked through what it encrypts: the ciphertext `cryptography` made with it.
        let sealed = try cipher.seal(Vectors.serviceSecret, iv: Vectors.serviceIV)
        #expect(sealed.parameters == Vectors.serviceIV)
        #expect(sealed.value == Vectors.serviceValue)
        // And what secretstorage's format_secret sent.
        #expect(try cipher.open(parameters: Vectors.clientParameters, value: Vectors.clientValue) == Vectors.clientSecret)
    }

    @Test("a client public key with or without its leading zero byte agrees on the same key")
    func leadingZeroPublicKey() throws {
        let short = Vectors.shortClientPublicKey
        #expect(short.count < 128)
        let padded = [UInt8](repeating: 0, count: 128 - short.count) + short
        for form in [short, padded] {
            let (cipher, servicePublicKey) = try DiffieHellmanTransfer.agree(
                clientPublicKey: form, privateExponents: [Vectors.serviceExponent])
            #expect(servicePublicKey == Vectors.servicePublicKey)
            #expect(try cipher.seal(Vectors.serviceSecret, iv: Vectors.serviceIV).value == Vectors.shortClientServiceValue)
        }
    }

    @Test("an exponent whose shared secret starts with a zero byte is skipped: clients that pad it and clients that do not would derive different keys")
    func ambiguousSharedSecretSkipped() throws {
        let (cipher, servicePublicKey) = try DiffieHellmanTransfer.agree(
            clientPublicKey: Vectors.clientPublicKey,
            privateExponents: [Vectors.ambiguousServiceExponent, Vectors.serviceExponent])
        #expect(servicePublicKey == Vectors.servicePublicKey)
        #expect(try cipher.seal(Vectors.serviceSecret, iv: Vectors.serviceIV).value == Vectors.serviceValue)
        #expect(throws: SecretServiceError.self) {
            try DiffieHellmanTransfer.agree(
                clientPublicKey: Vectors.clientPublicKey, privateExponents: [Vectors.ambiguousServiceExponent])
        }
    }

    @Test("seal and open round trip, empty and block-sized secrets included; every seal has a fresh IV", arguments: [0, 1, 15, 16, 17, 32, 1000])
    func roundTrip(length: Int) throws {
        let (cipher, servicePublicKey) = try DiffieHellmanTransfer.agree(clientPublicKey: Vectors.clientPublicKey)
        #expect(servicePublicKey.count == 128)
        let secret = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let first = try cipher.seal(secret)
        let second = try cipher.seal(secret)
        #expect(first.parameters.count == 16)
        #expect(first.value.count == (length / 16 + 1) * 16)
        #expect(first.parameters != second.parameters)
        #expect(first.value != second.value)
        #expect(try cipher.open(parameters: first.parameters, value: first.value) == secret)
        #expect(try cipher.open(parameters: second.parameters, value: second.value) == secret)
    }

    @Test("each session draws its own exponent: two sessions with one client answer different public keys")
    func freshExponentPerSession() throws {
        let (_, first) = try DiffieHellmanTransfer.agree(clientPublicKey: Vectors.clientPublicKey)
        let (_, second) = try DiffieHellmanTransfer.agree(clientPublicKey: Vectors.clientPublicKey)
        #expect(first != second)
    }

    @Test("a damaged secret is refused as not encrypted for this session: wrong padding, IV length, empty value, partial block")
    func damagedSecretsRefused() throws {
        let (cipher, _) = try knownSession()
        let iv = Vectors.clientParameters
        let value = Vectors.clientValue
        // The 32-byte secret ends in a whole block of padding (sixteen 16s). Changing the previous
        // ciphertext block's last byte changes the last padding byte: to 0, then to 17.
        #expect(value.count == 48)
        for wrongPad: UInt8 in [0x00, 0x11, 0x0F] {
            var tampered = value
            tampered[31] ^= 0x10 ^ wrongPad
            expectNotForThisSession(cipher, parameters: iv, value: tampered)
        }
        for ivLength in [0, 1, 15, 17, 32] {
            expectNotForThisSession(cipher, parameters: Array(repeating: 7, count: ivLength), value: value)
        }
        expectNotForThisSession(cipher, parameters: iv, value: [])
        expectNotForThisSession(cipher, parameters: iv, value: Array(value.prefix(47)))
        expectNotForThisSession(cipher, parameters: iv, value: Array(value.prefix(15)))
        expectNotForThisSession(cipher, parameters: iv, value: value + [0])
        // The session still opens what was encrypted for it.
        #expect(try cipher.open(parameters: iv, value: value) == Vectors.clientSecret)
    }

    @Test("the error for a refused secret names neither the secret nor the key")
    func refusalHoldsNoSecret() throws {
        let (cipher, _) = try knownSession()
        var tampered = Vectors.clientValue
        tampered[31] ^= 0x10
        do {
            _ = try cipher.open(parameters: Vectors.clientParameters, value: tampered)
            Issue.record("a tampered secret opened")
        } catch {
            let text = error.description
            let hex = { (bytes: [UInt8]) in bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
            #expect(!text.contains("correct horse"))
            #expect(!text.contains(hex(Vectors.sessionKey)))
            #expect(!text.contains(hex(Vectors.clientValue)))
        }
    }

    @Test("a secret encrypted for one session does not open in another")
    func otherSessionRefused() throws {
        let (first, _) = try knownSession()
        let (other, otherPublicKey) = try DiffieHellmanTransfer.agree(
            clientPublicKey: Vectors.clientPublicKey, privateExponents: [Vectors.otherServiceExponent])
        #expect(otherPublicKey != Vectors.servicePublicKey)
        // What the client encrypted for the first session, and what the first session sealed.
        expectNotForThisSession(other, parameters: Vectors.clientParameters, value: Vectors.clientValue)
        let sealed = try first.seal(Vectors.serviceSecret, iv: Vectors.serviceIV)
        expectNotForThisSession(other, parameters: sealed.parameters, value: sealed.value)
        // A plain session refuses an encrypted secret too.
        #expect(throws: SecretServiceError.self) {
            try PlainTransfer().open(parameters: Vectors.clientParameters, value: Vectors.clientValue)
        }
    }

    @Test("a client public key outside the group is refused: 0, 1, p - 1, p, above p, 129 bytes, a non-residue")
    func invalidPublicKeysRefused() throws {
        let prime = Vectors.prime
        var primeMinusOne = prime
        primeMinusOne[127] -= 1
        expectInvalidPublicKey([])
        expectInvalidPublicKey([0])
        expectInvalidPublicKey([UInt8](repeating: 0, count: 128))
        expectInvalidPublicKey([1])
        expectInvalidPublicKey([UInt8](repeating: 0, count: 127) + [1])
        expectInvalidPublicKey(primeMinusOne)
        expectInvalidPublicKey(prime)
        expectInvalidPublicKey([UInt8](repeating: 0xFF, count: 128))
        expectInvalidPublicKey([1] + [UInt8](repeating: 0, count: 128))  // 2^1024
        // 129 bytes, even when the number itself would be in range.
        expectInvalidPublicKey([0] + Vectors.clientPublicKey)
        expectInvalidPublicKey(Vectors.nonResidue)
        expectInvalidPublicKey([UInt8](repeating: 0, count: 127) + Vectors.nonResidue)
        // The smallest valid number: 4 = 2^2 is in the group.
        _ = try DiffieHellmanTransfer.agree(clientPublicKey: [4])
    }
}

extension SessionDiffieHellmanTests {
    @Test("a session cipher describes itself by its algorithm: printing or dumping it shows no key")
    func descriptionHoldsNoKey() throws {
        let (cipher, _) = try knownSession()
        var dumped = ""
        dump(cipher, to: &dumped)
        for text in [String(describing: cipher), String(reflecting: cipher), dumped] {
            #expect(text.contains("dh-ietf1024-sha256-aes128-cbc-pkcs7"))
            #expect(!text.contains("SessionKey"))
            #expect(!text.contains("0x"))
        }
    }
}
