import Foundation

/// How a second machine gets the fleet key: a file sealed with a passphrase.
///
/// The file is JSON: Argon2id (version 1.3, 64 MiB, 3 passes) turns the passphrase and a
/// random salt into a key, and XChaCha20-Poly1305 under that key seals the fleet key; the
/// file's header (format, parameters, salt) is the associated data, so a changed byte
/// anywhere, or a wrong passphrase, fails with one clear error. It is written with mode
/// 0600. Argon2id is libsodium's: on Apple platforms, where Keysmith links no libsodium,
/// export and join on Linux.
public enum FleetKeyFile {
    /// Argon2id passes.
    static let operations: UInt64 = 3
    /// Argon2id memory, bytes.
    static let memory = 64 * 1_048_576

    /// Writes `key` to `path`, sealed with `passphrase`.
    /// - Parameters:
    ///   - key: The fleet key.
    ///   - passphrase: The passphrase (at least 8 bytes).
    ///   - path: Where to write; an existing file is refused.
    /// - Throws: ``EtcdError/keyFile(path:reason:)``.
    public static func write(_ key: FleetKey, passphrase: Data, to path: String) throws {
        guard passphrase.count >= 8 else {
            throw EtcdError.keyFile(path: path, reason: "the passphrase is shorter than 8 characters")
        }
        let salt = FleetCipher.randomBytes(16)
        let header: [String: Any] = [
            "keysmith": "fleet-key-file", "format": 1, "kdf": "argon2id13", "operations": operations,
            "memory": memory, "salt": salt.base64EncodedString(), "fingerprint": key.fingerprint,
        ]
        var wrapping: Data
        do {
            wrapping = try FleetCipher.deriveKey(passphrase: passphrase, salt: salt, operations: operations, memory: memory)
        } catch {
            throw EtcdError.keyFile(path: path, reason: "\(error)")
        }
        defer { FleetCipher.wipe(&wrapping) }
        var plain = key.exportedBytes()
        defer { FleetCipher.wipe(&plain) }
        let nonce = FleetCipher.randomBytes(FleetCipher.nonceLength)
        let sealed = try wrapping.withUnsafeBytes { bytes in
            try FleetCipher.seal(plain, key: bytes, nonce: nonce, associatedData: associatedData(header))
        }
        var file = header
        file["nonce"] = nonce.base64EncodedString()
        file["ciphertext"] = sealed.base64EncodedString()
        guard let data = try? JSONSerialization.data(withJSONObject: file, options: [.sortedKeys, .prettyPrinted])
        else { throw EtcdError.keyFile(path: path, reason: "could not encode the file") }
        guard !FileManager.default.fileExists(atPath: path) else {
            throw EtcdError.keyFile(path: path, reason: "the file exists; choose another path or remove it first")
        }
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw EtcdError.keyFile(path: path, reason: "could not create the file (check the directory)") }
    }

    /// Reads the fleet key from `path` with `passphrase`.
    /// - Returns: The key.
    /// - Throws: ``EtcdError/keyFile(path:reason:)`` for an unreadable or malformed file;
    ///   ``EtcdError/wrongPassphrase(path:)`` when the passphrase does not open it.
    public static func read(_ path: String, passphrase: Data) throws -> FleetKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw EtcdError.keyFile(path: path, reason: "cannot be read")
        }
        guard let file = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            file["keysmith"] as? String == "fleet-key-file"
        else { throw EtcdError.keyFile(path: path, reason: "is not a fleet key file") }
        guard (file["format"] as? NSNumber)?.intValue == 1, file["kdf"] as? String == "argon2id13",
            let operations = (file["operations"] as? NSNumber)?.uint64Value,
            let memory = (file["memory"] as? NSNumber)?.intValue,
            (1...10).contains(operations), (8_192...1_073_741_824).contains(memory),
            let salt = (file["salt"] as? String).flatMap({ Data(base64Encoded: $0) }),
            let nonce = (file["nonce"] as? String).flatMap({ Data(base64Encoded: $0) }),
            let sealed = (file["ciphertext"] as? String).flatMap({ Data(base64Encoded: $0) }),
            let fingerprint = file["fingerprint"] as? String
        else { throw EtcdError.keyFile(path: path, reason: "has a format or parameters this build does not read") }
        let header: [String: Any] = [
            "keysmith": "fleet-key-file", "format": 1, "kdf": "argon2id13", "operations": operations,
            "memory": memory, "salt": salt.base64EncodedString(), "fingerprint": fingerprint,
        ]
        var wrapping: Data
        do {
            wrapping = try FleetCipher.deriveKey(passphrase: passphrase, salt: salt, operations: operations, memory: memory)
        } catch {
            throw EtcdError.keyFile(path: path, reason: "\(error)")
        }
        defer { FleetCipher.wipe(&wrapping) }
        guard var plain = wrapping.withUnsafeBytes({ bytes in
            FleetCipher.open(sealed, key: bytes, nonce: nonce, associatedData: associatedData(header))
        }) else { throw EtcdError.wrongPassphrase(path: path) }
        defer { FleetCipher.wipe(&plain) }
        let key = try FleetKey(plain)
        guard key.fingerprint == fingerprint else { throw EtcdError.wrongPassphrase(path: path) }
        return key
    }

    /// The header as canonical JSON.
    private static func associatedData(_ header: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) ?? Data()
    }
}
