#if !canImport(Security)
import CSodium
import Foundation

/// The access-control key pairs of a keychain (X25519), stored in its `protection` table:
/// one for biometry, one for the passcode.
///
/// Items with access control encrypt their secret under a random item key, itself sealed
/// for each way of satisfying the policy under a key derived from X25519 shared secrets
/// with these public keys (see ``AccessControlEnvelope``). Sealing needs only the public
/// keys, so storing an item never prompts; opening needs the private key, which the keychain
/// unwraps only after an authenticator succeeded:
///
/// - biometry: the private key is wrapped by `BLAKE2b(W; "kek", "acl.b")`, W the wrap base
///   derived from the device key;
/// - passcode: wrapped by `BLAKE2b(W; "kek", "acl.p", sP)` when the keychain has a
///   passphrase, sP = `crypto_kdf(Argon2id(passphrase), 3, "kspass02")`, which the keychain
///   passphrase authenticator derives from the typed passphrase and which is never kept in
///   the lock state; without a passphrase, wrapped like the biometry key.
///
/// Record layout: flags (bit 0: wrapped with sP) ‖ public key (32) ‖ nonce (24) ‖ sealed
/// private key (32 + 16).
enum AccessControlKeys {
    /// Which key pair.
    enum Slot: String, CaseIterable, Hashable {
        case biometry = "b"
        case passcode = "p"

        /// The record's name in the `protection` table.
        var recordName: String { "acl." + rawValue }
    }

    static let publicKeyLength = Int(crypto_scalarmult_BYTES)
    static let recordLength = 1 + publicKeyLength + Sodium.nonceLength + Sodium.keyLength + Sodium.tagLength

    /// A new key pair, its private key sealed under `kek`.
    static func create(kek: SecretKey, bound: Bool, associatedData: [UInt8]) -> Data {
        let secret = SecretKey(uninitializedCount: Sodium.keyLength)
        var publicKey = Data(count: publicKeyLength)
        secret.withUnsafeMutableBytes { sk in
            publicKey.withUnsafeMutableBytes { pk in
                _ = crypto_box_keypair(
                    pk.baseAddress!.assumingMemoryBound(to: UInt8.self), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return record(publicKey: publicKey, secret: secret, kek: kek, bound: bound, associatedData: associatedData)
    }

    /// The record holding `publicKey` and `secret` sealed under `kek`.
    static func record(publicKey: Data, secret: SecretKey, kek: SecretKey, bound: Bool, associatedData: [UInt8]) -> Data {
        let sealed = secret.withUnsafeBytes { plain in
            associatedData.withUnsafeBytes { Sodium.seal(plain, associatedData: $0, key: kek) }
        }
        return Data([bound ? 1 : 0]) + publicKey + sealed.nonce + sealed.ciphertext
    }

    /// Whether the record's private key is wrapped with the passcode secret.
    static func isBound(_ record: Data) -> Bool { (record.first ?? 0) & 1 != 0 }

    /// The record's public key, or `nil` for a damaged record.
    static func publicKey(_ record: Data) -> Data? {
        guard record.count == recordLength else { return nil }
        return record.subdata(in: 1..<(1 + publicKeyLength))
    }

    /// The record's private key, or `nil` when `kek` does not open it.
    static func secret(_ record: Data, kek: SecretKey, associatedData: [UInt8]) -> SecretKey? {
        guard record.count == recordLength else { return nil }
        let nonceStart = 1 + publicKeyLength
        let nonce = record.subdata(in: nonceStart..<(nonceStart + Sodium.nonceLength))
        let ciphertext = record.subdata(in: (nonceStart + Sodium.nonceLength)..<record.count)
        guard let opened = ciphertext.withUnsafeBytes({ c in
            nonce.withUnsafeBytes { n in associatedData.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: kek) } }
        }) else { return nil }
        return opened.withUnsafeBytes { SecretKey(copying: $0) }
    }

    /// X25519 of `secret` and `publicKey` into locked memory, or `nil` for a degenerate
    /// public key.
    static func sharedSecret(_ secret: SecretKey, _ publicKey: Data) -> SecretKey? {
        guard publicKey.count == publicKeyLength else { return nil }
        let shared = SecretKey(uninitializedCount: Int(crypto_scalarmult_BYTES))
        let code = shared.withUnsafeMutableBytes { out in
            secret.withUnsafeBytes { sk in
                publicKey.withUnsafeBytes { pk in
                    crypto_scalarmult(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        pk.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return code == 0 ? shared : nil
    }

    /// A fresh ephemeral key pair (private key in locked memory).
    static func ephemeral() -> (secret: SecretKey, publicKey: Data) {
        let secret = SecretKey(uninitializedCount: Sodium.keyLength)
        var publicKey = Data(count: publicKeyLength)
        secret.withUnsafeMutableBytes { sk in
            publicKey.withUnsafeMutableBytes { pk in
                _ = crypto_box_keypair(
                    pk.baseAddress!.assumingMemoryBound(to: UInt8.self), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return (secret, publicKey)
    }
}
#endif
