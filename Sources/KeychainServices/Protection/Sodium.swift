#if !canImport(Security)
import CSodium
import Foundation

/// Thin, internal Swift layer over the libsodium calls the keychain uses:
/// XChaCha20-Poly1305 for items, keyed BLAKE2b for lookup indexes, `crypto_kdf` for
/// sub-keys, and `randombytes` for keys, nonces and persistent references.
enum Sodium {
    /// `sodium_init()` once per process (libsodium makes repeated calls cheap and safe).
    static let isReady: Bool = sodium_init() >= 0

    static let keyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// Index hashes are 128-bit keyed BLAKE2b: collision-free for any realistic keychain
    /// (matches are verified against the decrypted attributes anyway).
    static let indexHashLength = 16

    /// `count` random bytes.
    static func randomBytes(_ count: Int) -> Data {
        precondition(isReady, "libsodium failed to initialize")
        var data = Data(count: count)
        data.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return data
    }

    /// Keyed BLAKE2b of `input` under `key`, `indexHashLength` bytes.
    static func keyedHash(_ input: UnsafeRawBufferPointer, key: SecretKey) -> Data {
        var out = Data(count: indexHashLength)
        out.withUnsafeMutableBytes { outBuffer in
            key.withUnsafeBytes { keyBuffer in
                _ = crypto_generichash(
                    outBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), indexHashLength,
                    input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                    keyBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBuffer.count)
            }
        }
        return out
    }

    /// Keyed BLAKE2b of `input` under `key`, `indexHashLength` bytes.
    static func keyedHash(_ input: [UInt8], key: SecretKey) -> Data {
        input.withUnsafeBytes { keyedHash($0, key: key) }
    }

    /// Seals `plaintext` with XChaCha20-Poly1305 under `key` with a fresh random nonce.
    /// - Returns: nonce and ciphertext (with its 16-byte tag).
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, associatedData ad: UnsafeRawBufferPointer, key: SecretKey
    ) -> (nonce: Data, ciphertext: Data) {
        let nonce = randomBytes(nonceLength)
        var ciphertext = Data(count: plaintext.count + tagLength)
        var written: UInt64 = 0
        ciphertext.withUnsafeMutableBytes { out in
            nonce.withUnsafeBytes { n in
                key.withUnsafeBytes { k in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                        ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                        nil,
                        n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return (nonce, ciphertext)
    }

    /// Opens a sealed box into a zeroing buffer.
    /// - Returns: the plaintext, or `nil` when the tag does not verify (wrong key, edited
    ///   bytes, or ciphertext moved to another row).
    static func open(
        _ ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData ad: UnsafeRawBufferPointer,
        key: SecretKey
    ) -> SecretBuffer? {
        guard ciphertext.count >= tagLength, nonce.count == nonceLength else { return nil }
        let plaintext = SecretBuffer(count: ciphertext.count - tagLength)
        var written: UInt64 = 0
        let code = plaintext.withUnsafeMutableBytes { out in
            key.withUnsafeBytes { k in
                crypto_aead_xchacha20poly1305_ietf_decrypt(
                    out.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
                    ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                    ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                    nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return code == 0 ? plaintext : nil
    }

    /// Derives sub-key number `id` of `master` in `context` (8 ASCII bytes) with `crypto_kdf`.
    static func deriveKey(from master: SecretKey, id: UInt64, context: StaticString) -> SecretKey {
        precondition(context.utf8CodeUnitCount == Int(crypto_kdf_CONTEXTBYTES))
        let key = SecretKey(uninitializedCount: keyLength)
        key.withUnsafeMutableBytes { out in
            master.withUnsafeBytes { m in
                context.withUTF8Buffer { ctx in
                    ctx.withMemoryRebound(to: CChar.self) { c in
                        _ = crypto_kdf_derive_from_key(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self), keyLength, id,
                            c.baseAddress!, m.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        return key
    }

    /// Constant-time comparison of two byte strings of equal length.
    static func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 }
        }
    }

    /// Overwrites `count` bytes at `pointer` with zeros in a way the compiler cannot drop.
    static func zero(_ pointer: UnsafeMutableRawPointer?, count: Int) {
        guard let pointer, count > 0 else { return }
        sodium_memzero(pointer, count)
    }
}

/// Key material in locked, guarded memory (`sodium_malloc`), zeroed and freed when the
/// object goes away. Never printed: its description is redacted.
final class SecretKey: @unchecked Sendable, CustomStringConvertible {
    private let pointer: UnsafeMutableRawPointer
    let count: Int

    /// A key of `count` bytes whose contents the caller fills in.
    init(uninitializedCount count: Int) {
        precondition(Sodium.isReady, "libsodium failed to initialize")
        guard let pointer = sodium_malloc(count) else {
            fatalError("sodium_malloc(\(count)) failed: the process is out of memory")
        }
        self.pointer = pointer
        self.count = count
    }

    /// A fresh random key.
    static func random(count: Int = Sodium.keyLength) -> SecretKey {
        let key = SecretKey(uninitializedCount: count)
        randombytes_buf(key.pointer, count)
        return key
    }

    /// A copy of `bytes` (the caller zeroes its own copy).
    convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(uninitializedCount: bytes.count)
        if bytes.count > 0 { pointer.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }

    deinit { sodium_free(pointer) }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func withUnsafeMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    var description: String { "SecretKey(\(count) bytes, redacted)" }
}

/// A heap buffer for decrypted plaintext that is zeroed when the object goes away.
final class SecretBuffer {
    private let pointer: UnsafeMutableRawPointer
    let count: Int

    init(count: Int) {
        self.count = count
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
    }

    deinit {
        Sodium.zero(pointer, count: count)
        pointer.deallocate()
    }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func withUnsafeMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }
}
#endif
