import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#else
    import CSodium
#endif

/// XChaCha20-Poly1305 (IETF), SHA-256, random bytes and Argon2id: the few primitives a fleet
/// needs.
///
/// On Linux they are libsodium's (the library the keychain engine already links). On Apple
/// platforms, where Keysmith links nothing but the system, XChaCha20-Poly1305 is built the
/// way libsodium builds it: HChaCha20 (in Swift, below) derives a sub-key from the key and
/// the first 16 bytes of the 24-byte nonce, then CryptoKit's ChaCha20-Poly1305 seals under
/// that sub-key with the nonce `00000000 || nonce[16..<24]`. Both produce the same bytes, so
/// a value sealed on a Mac opens on Linux and back. Argon2id (the key file) is libsodium
/// only: on Apple platforms ``deriveKey(passphrase:salt:operations:memory:)`` reports that
/// it is unavailable.
enum FleetCipher {
    /// Key length: 32 bytes.
    static let keyLength = 32
    /// Nonce length: 24 bytes.
    static let nonceLength = 24
    /// Tag length: 16 bytes.
    static let tagLength = 16

    /// Why a primitive failed, in words.
    struct Failure: Error, CustomStringConvertible {
        /// What failed.
        let description: String
    }

    #if !canImport(CryptoKit)
        /// `sodium_init()` once per process.
        static let isReady: Bool = sodium_init() >= 0
    #endif

    /// `count` random bytes from the system's generator.
    static func randomBytes(_ count: Int) -> Data {
        var data = Data(count: count)
        #if canImport(CryptoKit)
            var generator = SystemRandomNumberGenerator()
            for index in 0..<count { data[index] = UInt8.random(in: .min ... .max, using: &generator) }
        #else
            precondition(isReady, "libsodium failed to initialize")
            data.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        #endif
        return data
    }

    /// Whether `a` and `b` hold the same bytes, in time that depends only on their length.
    static func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    /// SHA-256 of `data`.
    static func sha256(_ data: Data) -> Data {
        #if canImport(CryptoKit)
            return Data(SHA256.hash(data: data))
        #else
            precondition(isReady, "libsodium failed to initialize")
            var out = Data(count: Int(crypto_hash_sha256_BYTES))
            out.withUnsafeMutableBytes { o in
                data.withUnsafeBytes { d in
                    _ = crypto_hash_sha256(
                        o.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        d.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(d.count))
                }
            }
            return out
        #endif
    }

    /// Seals `plaintext` under `key` with `nonce` (24 bytes) and `associatedData`.
    /// - Returns: The ciphertext followed by its 16-byte tag.
    static func seal(_ plaintext: Data, key: UnsafeRawBufferPointer, nonce: Data, associatedData: Data) throws -> Data {
        guard key.count == keyLength, nonce.count == nonceLength else {
            throw Failure(description: "the key must be 32 bytes and the nonce 24")
        }
        #if canImport(CryptoKit)
            var subkey = hChaCha20(key: key, input: nonce.prefix(16))
            defer { subkey.resetBytes(in: 0..<subkey.count) }
            let box = try ChaChaPoly.seal(
                plaintext, using: SymmetricKey(data: subkey), nonce: try ChaChaPoly.Nonce(data: shortNonce(nonce)),
                authenticating: associatedData)
            return box.ciphertext + box.tag
        #else
            precondition(isReady, "libsodium failed to initialize")
            var out = Data(count: plaintext.count + tagLength)
            var written: UInt64 = 0
            let status = out.withUnsafeMutableBytes { o in
                plaintext.withUnsafeBytes { p in
                    nonce.withUnsafeBytes { n in
                        associatedData.withUnsafeBytes { a in
                            crypto_aead_xchacha20poly1305_ietf_encrypt(
                                o.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                                p.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(p.count),
                                a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count), nil,
                                n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
            }
            guard status == 0 else { throw Failure(description: "encryption failed") }
            return out.prefix(Int(written))
        #endif
    }

    /// Opens what ``seal(_:key:nonce:associatedData:)`` produced.
    /// - Returns: The plaintext, or `nil` when authentication fails (wrong key, changed
    ///   bytes, other associated data).
    static func open(_ sealed: Data, key: UnsafeRawBufferPointer, nonce: Data, associatedData: Data) -> Data? {
        guard key.count == keyLength, nonce.count == nonceLength, sealed.count >= tagLength else { return nil }
        #if canImport(CryptoKit)
            var subkey = hChaCha20(key: key, input: nonce.prefix(16))
            defer { subkey.resetBytes(in: 0..<subkey.count) }
            guard let chachaNonce = try? ChaChaPoly.Nonce(data: shortNonce(nonce)),
                let box = try? ChaChaPoly.SealedBox(
                    nonce: chachaNonce, ciphertext: sealed.dropLast(tagLength), tag: sealed.suffix(tagLength))
            else { return nil }
            return try? ChaChaPoly.open(box, using: SymmetricKey(data: subkey), authenticating: associatedData)
        #else
            precondition(isReady, "libsodium failed to initialize")
            var out = Data(count: sealed.count - tagLength)
            var written: UInt64 = 0
            let status = out.withUnsafeMutableBytes { o in
                sealed.withUnsafeBytes { s in
                    nonce.withUnsafeBytes { n in
                        associatedData.withUnsafeBytes { a in
                            crypto_aead_xchacha20poly1305_ietf_decrypt(
                                o.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
                                s.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(s.count),
                                a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count),
                                n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
            }
            guard status == 0 else {
                out.resetBytes(in: 0..<out.count)
                return nil
            }
            return out.prefix(Int(written))
        #endif
    }

    /// Whether Argon2id is available on this platform (libsodium: Linux).
    static var hasArgon2id: Bool {
        #if canImport(CryptoKit)
            return false
        #else
            return true
        #endif
    }

    /// Argon2id (version 1.3): a 32-byte key from a passphrase and a 16-byte salt.
    /// - Throws: ``Failure`` when Argon2id is unavailable on this platform or runs out of
    ///   memory.
    static func deriveKey(passphrase: Data, salt: Data, operations: UInt64, memory: Int) throws -> Data {
        #if canImport(CryptoKit)
            throw Failure(
                description: "Argon2id is not available on this platform (Keysmith links no libsodium on Apple "
                    + "platforms); export and join the fleet key on Linux")
        #else
            precondition(isReady, "libsodium failed to initialize")
            guard salt.count == Int(crypto_pwhash_SALTBYTES) else { throw Failure(description: "the salt must be 16 bytes") }
            var out = Data(count: keyLength)
            let status = out.withUnsafeMutableBytes { o in
                passphrase.withUnsafeBytes { p in
                    salt.withUnsafeBytes { s in
                        crypto_pwhash(
                            o.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(keyLength),
                            p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count),
                            s.baseAddress!.assumingMemoryBound(to: UInt8.self), operations, memory,
                            crypto_pwhash_ALG_ARGON2ID13)
                    }
                }
            }
            guard status == 0 else {
                throw Failure(description: "Argon2id failed (not enough memory for \(memory / 1_048_576) MiB?)")
            }
            return out
        #endif
    }

    /// Zeroes a buffer in a way the compiler does not remove.
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(CryptoKit)
            _ = memset_s(base, buffer.count, 0, buffer.count)
        #else
            sodium_memzero(base, buffer.count)
        #endif
    }

    /// Zeroes `data` in place.
    static func wipe(_ data: inout Data) {
        data.withUnsafeMutableBytes { wipe($0) }
    }

    /// The 12-byte ChaCha20-Poly1305 nonce of XChaCha20-Poly1305: four zero bytes, then the
    /// last eight bytes of the 24-byte nonce.
    static func shortNonce(_ nonce: Data) -> Data {
        Data(repeating: 0, count: 4) + nonce.suffix(8)
    }

    /// HChaCha20: 20 ChaCha rounds over the constants, the key and a 16-byte input, without
    /// the final addition; the output is words 0...3 and 12...15 (32 bytes).
    static func hChaCha20(key: UnsafeRawBufferPointer, input: Data) -> Data {
        precondition(key.count == 32 && input.count == 16)
        func word(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
                | UInt32(bytes[offset + 3]) << 24
        }
        var keyBytes = [UInt8](key)
        let inputBytes = [UInt8](input)
        var state: [UInt32] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]
        for index in 0..<8 { state.append(word(keyBytes, index * 4)) }
        for index in 0..<4 { state.append(word(inputBytes, index * 4)) }
        for index in keyBytes.indices { keyBytes[index] = 0 }
        func quarterRound(_ a: Int, _ b: Int, _ c: Int, _ d: Int) {
            state[a] &+= state[b]
            state[d] ^= state[a]
            state[d] = state[d] << 16 | state[d] >> 16
            state[c] &+= state[d]
            state[b] ^= state[c]
            state[b] = state[b] << 12 | state[b] >> 20
            state[a] &+= state[b]
            state[d] ^= state[a]
            state[d] = state[d] << 8 | state[d] >> 24
            state[c] &+= state[d]
            state[b] ^= state[c]
            state[b] = state[b] << 7 | state[b] >> 25
        }
        for _ in 0..<10 {
            quarterRound(0, 4, 8, 12)
            quarterRound(1, 5, 9, 13)
            quarterRound(2, 6, 10, 14)
            quarterRound(3, 7, 11, 15)
            quarterRound(0, 5, 10, 15)
            quarterRound(1, 6, 11, 12)
            quarterRound(2, 7, 8, 13)
            quarterRound(3, 4, 9, 14)
        }
        var out = Data(capacity: 32)
        for index in [0, 1, 2, 3, 12, 13, 14, 15] {
            let value = state[index]
            out.append(contentsOf: [UInt8(value & 0xff), UInt8(value >> 8 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 24)])
        }
        for index in state.indices { state[index] = 0 }
        return out
    }
}
