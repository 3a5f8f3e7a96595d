#if !canImport(Security)
import CSodium
import Foundation
import Synchronization

/// The keychain passphrase, stretched with Argon2id (libsodium `crypto_pwhash`,
/// `ALG_ARGON2ID13`). The passphrase itself is never stored; its parameters and salt are,
/// with the keychain, so a keychain keeps opening when the defaults change.
///
/// Record layout (version 1): `01`, opslimit (u64 LE), memlimit (u64 LE), 16-byte salt.
struct PassphraseKey: Equatable {
    /// Argon2id passes.
    let opsLimit: UInt64
    /// Argon2id memory in bytes.
    let memLimit: UInt64
    let salt: Data

    /// The parameters for a new passphrase: 3 passes over 128 MiB, which costs about a
    /// quarter of a second on an idle two-core machine of 2026 (half of libsodium's
    /// MODERATE preset, which is 0.5 s there).
    ///
    /// Tests select libsodium's minimum instead, which makes a passphrase cheap to guess:
    /// in process with ``fastForTesting``, and for the tools they run with
    /// `KEYSMITH_KDF_PROFILE=fast`, which only a debug build (what `swift build` and the
    /// tests use) reads; a release build (`make install`) ignores it.
    static func fresh(_ variables: [String: String] = ProcessInfo.processInfo.environment) -> PassphraseKey {
        let salt = Sodium.randomBytes(Int(crypto_pwhash_SALTBYTES))
        #if DEBUG
        let fastProfile = variables["KEYSMITH_KDF_PROFILE"] == "fast"
        #else
        let fastProfile = false
        #endif
        if fastProfile || fastForTesting.load(ordering: .relaxed) {
            return PassphraseKey(
                opsLimit: UInt64(crypto_pwhash_argon2id_OPSLIMIT_MIN), memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_MIN),
                salt: salt)
        }
        return PassphraseKey(opsLimit: 3, memLimit: 128 << 20, salt: salt)
    }

    /// Set by in-process tests: new passphrases use the minimum cost.
    static let fastForTesting = Atomic<Bool>(false)

    init(opsLimit: UInt64, memLimit: UInt64, salt: Data) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
        self.salt = salt
    }

    /// Parses a stored record.
    init?(record: Data) {
        let bytes = [UInt8](record)
        guard bytes.count == 1 + 8 + 8 + Int(crypto_pwhash_SALTBYTES), bytes[0] == 1 else { return nil }
        func integer(_ offset: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
            return value
        }
        opsLimit = integer(1)
        memLimit = integer(9)
        salt = Data(bytes[17...])
        guard opsLimit >= UInt64(crypto_pwhash_argon2id_OPSLIMIT_MIN), opsLimit <= 64,
            memLimit >= UInt64(crypto_pwhash_argon2id_MEMLIMIT_MIN), memLimit <= 4 << 30
        else { return nil }
    }

    /// The stored form.
    var record: Data {
        var bytes: [UInt8] = [1]
        withUnsafeBytes(of: opsLimit.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: memLimit.littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: salt)
        return Data(bytes)
    }

    /// Stretches `passphrase` into the two unlock secrets, class A's and class C's, and the
    /// passcode secret that opens the access-control key of `.devicePasscode` items (never
    /// kept in the lock state: only typing the passphrase gives it).
    /// - Throws: errSecAllocate when Argon2id cannot get its memory.
    func secrets(for passphrase: String) throws -> (a: SecretKey, c: SecretKey, p: SecretKey) {
        let stretched = try stretch(passphrase.utf8)
        return (Sodium.deriveKey(from: stretched, id: 1, context: "kspass02"),
                Sodium.deriveKey(from: stretched, id: 2, context: "kspass02"),
                Sodium.deriveKey(from: stretched, id: 3, context: "kspass02"))
    }

    /// Argon2id of `bytes` with these parameters, into locked memory. The one copy made of
    /// `bytes` (sized once, so never moved) is zeroed; the caller's own storage is its to zero.
    /// - Throws: errSecAllocate when Argon2id cannot get its memory.
    func stretch<Bytes: Collection>(_ bytes: Bytes) throws -> SecretKey where Bytes.Element == UInt8 {
        precondition(Sodium.isReady, "libsodium failed to initialize")
        let stretched = SecretKey(uninitializedCount: Sodium.keyLength)
        var utf8: [UInt8] = []
        utf8.reserveCapacity(bytes.count + 1)
        utf8.append(contentsOf: bytes)
        let length = utf8.count
        utf8.append(0)  // never an empty buffer; within the reserved capacity
        defer { utf8.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        let code = stretched.withUnsafeMutableBytes { out in
            utf8.withUnsafeBytes { pw in
                salt.withUnsafeBytes { s in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                        pw.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(length),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self), opsLimit, Int(memLimit),
                        crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard code == 0 else {
            throw KeychainFailure(
                errSecAllocate, "Stretching the passphrase needs \(memLimit >> 20) MiB of memory, which the system refused.",
                recovery: "Free some memory (or raise the process's memory limit) and try again.")
        }
        return stretched
    }
}
#endif
