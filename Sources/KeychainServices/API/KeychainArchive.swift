#if !canImport(Security)
import Foundation

/// An authenticated, passphrase-protected, versioned copy of keychain items, for moving
/// them to another keychain or machine (Linux only).
///
/// An archive holds the generic and internet passwords, keys and certificates that the
/// current process can read (its access groups), with their attributes and data, except
/// ThisDeviceOnly items (they never leave the machine) and items whose access control
/// needs the user (`.userPresence`, biometry, `.devicePasscode`, an application password):
/// they stay behind, since the archive keeps no access control. Access control without such
/// constraints is dropped; the accessibility stays.
///
/// Format (version 1): `KSARCHV1`, Argon2id opslimit and memlimit (u64 LE), 16-byte salt,
/// 24-byte nonce, then XChaCha20-Poly1305 over a binary property list
/// `{version: 1, items: [{class, attributes, data?}]}`; everything before the ciphertext is
/// authenticated too. The key is derived from the passphrase with the keychain's Argon2id
/// parameters.
public enum KeychainArchive {
    static let magic = Data("KSARCHV1".utf8)

    /// What an import did.
    public struct ImportSummary: Sendable, Equatable {
        /// Items added.
        public var added = 0
        /// Items that were already there (same primary key), left as they were.
        public var skipped = 0
    }

    /// Exports the current keychain's exportable items, sealed with `passphrase`.
    /// - Parameter passphrase: The archive passphrase (not empty).
    /// - Returns: The archive bytes.
    /// - Throws: ``KeychainStateError``: errSecInteractionNotAllowed while locked,
    ///   errSecParam for an empty passphrase.
    public static func export(passphrase: String) throws -> (archive: Data, count: Int) {
        guard !passphrase.isEmpty else {
            throw KeychainStateError(status: errSecParam, reason: "The archive passphrase is empty.", recovery: "Choose a passphrase.")
        }
        var items: [[String: Any]] = []
        for itemClass in [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey, kSecClassCertificate] {
            let query: [String: Any] = [
                kSecClass as String: itemClass, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecReturnAttributes as String: true, kSecReturnData as String: true,
                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
                // Items whose access control needs the user are left out: exported, they would
                // lose it (the archive keeps no access control), and reading them would prompt.
                kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip,
            ]
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { continue }
            guard status == errSecSuccess else {
                throw KeychainStateError(
                    status: status, reason: "Reading the items to export failed: \(KeychainDiagnostics.lastFailureDescription ?? "status \(status)").",
                    recovery: status == errSecInteractionNotAllowed ? "Unlock the keychain first (keysmith unlock)." : nil)
            }
            for case let entry as [String: Any] in (result as? [Any]) ?? [] {
                let protection = entry[kSecAttrAccessible as String] as? String ?? "ak"
                if ProtectionClass(rawValue: protection)?.isThisDeviceOnly ?? true { continue }
                var attributes: [String: Any] = [:]
                for (key, value) in entry where key != kSecValueData as String && key != "accc" {
                    if value is String || value is Data || value is NSNumber || value is Date { attributes[key] = value }
                }
                var item: [String: Any] = ["class": itemClass as String, "attributes": attributes]
                if let data = entry[kSecValueData as String] as? Data { item["data"] = data }
                items.append(item)
            }
        }
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["version": 1, "items": items] as [String: Any], format: .binary, options: 0)
        let parameters = PassphraseKey.fresh()
        let key = try parameters.secrets(for: passphrase).a
        let header = magic + parameters.record.dropFirst()
        let sealed = plist.withUnsafeBytes { text in header.withUnsafeBytes { Sodium.seal(text, associatedData: $0, key: key) } }
        return (header + sealed.nonce + sealed.ciphertext, items.count)
    }

    /// Adds the items of `archive` to the current keychain; items already there (same
    /// primary key) are left as they are.
    /// - Parameters:
    ///   - archive: What ``export(passphrase:)`` wrote.
    ///   - passphrase: Its passphrase.
    /// - Returns: How many items were added and skipped.
    /// - Throws: ``KeychainStateError``: errSecAuthFailed for a wrong passphrase or an
    ///   altered archive, errSecDecode for something that is not an archive.
    public static func `import`(_ archive: Data, passphrase: String) throws -> ImportSummary {
        let headerLength = magic.count + 16 + 16
        guard archive.count > headerLength + Sodium.nonceLength + Sodium.tagLength, archive.prefix(magic.count) == magic,
            let parameters = PassphraseKey(record: Data([1]) + archive.subdata(in: magic.count..<headerLength))
        else {
            throw KeychainStateError(
                status: errSecDecode, reason: "The file is not a keychain archive of a version this Keysmith reads.",
                recovery: "Give a file written by 'keysmith export'.")
        }
        let key = try parameters.secrets(for: passphrase).a
        let header = archive.prefix(headerLength)
        let nonce = archive.subdata(in: headerLength..<(headerLength + Sodium.nonceLength))
        let ciphertext = archive.subdata(in: (headerLength + Sodium.nonceLength)..<archive.count)
        guard let opened = ciphertext.withUnsafeBytes({ c in
            nonce.withUnsafeBytes { n in Data(header).withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: key) } }
        }) else {
            throw KeychainStateError(
                status: errSecAuthFailed, reason: "The archive does not open with this passphrase (or it was altered); nothing was imported.",
                recovery: "Check the passphrase.")
        }
        let plist = opened.withUnsafeBytes { Data($0) }
        guard let root = try? PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any],
            root["version"] as? Int == 1, let items = root["items"] as? [[String: Any]]
        else {
            throw KeychainStateError(status: errSecDecode, reason: "The archive's contents are not in a format this Keysmith reads.", recovery: nil)
        }
        var summary = ImportSummary()
        for item in items {
            guard let itemClass = item["class"] as? String, var query = item["attributes"] as? [String: Any] else { continue }
            query[kSecClass as String] = itemClass
            if let data = item["data"] as? Data { query[kSecValueData as String] = data }
            let status = SecItemAdd(query as CFDictionary, nil)
            switch status {
            case errSecSuccess: summary.added += 1
            case errSecDuplicateItem: summary.skipped += 1
            default:
                throw KeychainStateError(
                    status: status,
                    reason: "Importing an item failed after \(summary.added) were added: \(KeychainDiagnostics.lastFailureDescription ?? "status \(status)").",
                    recovery: status == errSecInteractionNotAllowed ? "Unlock the keychain first (keysmith unlock), then import again (items already imported are skipped)." : nil)
            }
        }
        return summary
    }
}

#endif
