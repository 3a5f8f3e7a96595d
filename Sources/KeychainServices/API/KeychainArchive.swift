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

    /// Items an export left behind, of one kind, and why.
    public struct LeftBehind: Sendable, Equatable {
        /// Why they stayed.
        public enum Reason: Sendable, Equatable {
            /// A …ThisDeviceOnly accessibility: such items never leave the machine.
            case thisDeviceOnly
            /// Access control that needs the user (user presence, biometry, the device
            /// passcode, an application password): the archive keeps no access control.
            case needsUser
        }

        /// Why they stayed.
        public let reason: Reason
        /// Their accessibility by name (`afterFirstUnlockThisDeviceOnly`), for
        /// ``Reason/thisDeviceOnly``; `nil` for ``Reason/needsUser`` (any accessibility).
        public let accessibility: String?
        /// How many.
        public let count: Int
    }

    /// What ``export(passphrase:)`` made: the archive, how many items it holds, and every
    /// item it left behind, by kind.
    public struct ExportResult: Sendable {
        /// The archive bytes.
        public let archive: Data
        /// How many items the archive holds.
        public let count: Int
        /// The items left behind, by kind (ThisDeviceOnly items per accessibility, then
        /// items whose access control needs the user).
        public let leftBehind: [LeftBehind]
    }

    /// Exports the current keychain's exportable items, sealed with `passphrase`.
    ///
    /// While the keychain is locked and holds items that need it unlocked, nothing is
    /// exported (an archive without them would pass for complete): the error counts them,
    /// per accessibility.
    /// - Parameter passphrase: The archive passphrase (not empty).
    /// - Returns: The archive, its item count and what was left behind.
    /// - Throws: ``KeychainStateError``: errSecInteractionNotAllowed while locked (with
    ///   the locked items counted), errSecParam for an empty passphrase.
    public static func export(passphrase: String) throws -> ExportResult {
        guard !passphrase.isEmpty else {
            throw KeychainStateError(status: errSecParam, reason: "The archive passphrase is empty.", recovery: "Choose a passphrase.")
        }
        var items: [[String: Any]] = []
        var thisDeviceOnly: [ProtectionClass: Int] = [:]
        var readable = 0
        for itemClass in [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey, kSecClassCertificate] {
            // Items whose access control needs the user are left out: exported, they would
            // lose it (the archive keeps no access control), and reading them would prompt.
            for entry in try matches(of: itemClass, returningData: true) {
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
            // Attributes only: every item, also those that need the user (no prompt).
            for entry in try matches(of: itemClass, returningData: false) {
                let protection = ProtectionClass(rawValue: entry[kSecAttrAccessible as String] as? String ?? "ak")
                if protection?.isThisDeviceOnly ?? true {
                    if let protection { thisDeviceOnly[protection, default: 0] += 1 }
                } else {
                    readable += 1
                }
            }
        }
        var leftBehind: [LeftBehind] = ProtectionClass.allCases.compactMap { protection in
            thisDeviceOnly[protection].map { LeftBehind(reason: .thisDeviceOnly, accessibility: "\(protection)", count: $0) }
        }
        if readable > items.count {
            leftBehind.append(LeftBehind(reason: .needsUser, accessibility: nil, count: readable - items.count))
        }
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["version": 1, "items": items] as [String: Any], format: .binary, options: 0)
        let parameters = PassphraseKey.fresh()
        let key = try parameters.secrets(for: passphrase).a
        let header = magic + parameters.record.dropFirst()
        let sealed = plist.withUnsafeBytes { text in header.withUnsafeBytes { Sodium.seal(text, associatedData: $0, key: key) } }
        return ExportResult(archive: header + sealed.nonce + sealed.ciphertext, count: items.count, leftBehind: leftBehind)
    }

    /// Throws what ``export(passphrase:)`` would throw because the keychain is locked, before
    /// a program asks for the archive passphrase: nobody types a new passphrase twice to learn
    /// that nothing can be exported yet. Reads the same items as an export, and keeps nothing.
    /// - Throws: ``KeychainStateError``: errSecInteractionNotAllowed while locked (with the
    ///   locked items counted), or a failure to read the items.
    public static func checkReadableForExport() throws {
        for itemClass in [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey, kSecClassCertificate] {
            _ = try matches(of: itemClass, returningData: true)
        }
    }

    /// Every item of `itemClass` the current process reads, with attributes (and data,
    /// leaving out items that need the user).
    private static func matches(of itemClass: CFString, returningData: Bool) throws -> [[String: Any]] {
        var query: [String: Any] = [
            kSecClass as String: itemClass, kSecMatchLimit as String: kSecMatchLimitAll,
            kSecReturnAttributes as String: true,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
        ]
        if returningData {
            query[kSecReturnData as String] = true
            query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip
        }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        if status == errSecInteractionNotAllowed { throw lockedFailure() }
        guard status == errSecSuccess else {
            throw KeychainStateError(
                status: status, reason: "Reading the items to export failed: \(KeychainDiagnostics.lastFailureDescription ?? "status \(status)").",
                recovery: nil)
        }
        return ((result as? [Any]) ?? []).compactMap { $0 as? [String: Any] }
    }

    /// The refusal of an export while the keychain is locked, with the items it cannot read
    /// counted per accessibility.
    private static func lockedFailure() -> KeychainStateError {
        let locked: [ProtectionClass]
        switch KeychainEnvironment.lockState {
        case .beforeFirstUnlock:
            locked = [.whenUnlocked, .afterFirstUnlock, .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly,
                      .whenPasscodeSetThisDeviceOnly]
        default:
            locked = [.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly]
        }
        let counts = (try? KeychainEnvironment.itemCountsByAccessibility()) ?? [:]
        let named = locked.compactMap { protection -> String? in
            guard let count = counts[protection.rawValue], count > 0 else { return nil }
            return "\(count) \(protection) item\(count == 1 ? "" : "s")"
        }
        let which = named.isEmpty ? "items that need it unlocked" : named.joined(separator: ", ")
        return KeychainStateError(
            status: errSecInteractionNotAllowed,
            reason: "The keychain is locked: \(which) cannot be read now, so nothing was exported (an archive "
                + "without them would pass for complete).",
            recovery: "Unlock the keychain (keysmith unlock), then export again.")
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
