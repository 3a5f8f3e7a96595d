import Foundation
import KeychainServices

/// The metadata of one keychain item, never its data: key, service, access group, label,
/// comment, dates, accessibility, synchronizable, and whether it has access control.
public struct KeychainItemAttributes: Sendable, Hashable, CustomStringConvertible {
    /// The item's key (`kSecAttrAccount`).
    public let key: String
    /// The service (`kSecAttrService`) of a generic password, or the server
    /// (`kSecAttrServer`) of an internet password.
    public let service: String?
    /// The access group (`kSecAttrAccessGroup`) the item lives in.
    public let accessGroup: String?
    /// The user-visible label (`kSecAttrLabel`), if set.
    public let label: String?
    /// The comment (`kSecAttrComment`), if set.
    public let comment: String?
    /// When the item was created (`kSecAttrCreationDate`).
    public let creationDate: Date?
    /// When the item was last modified (`kSecAttrModificationDate`).
    public let modificationDate: Date?
    /// The item's data-protection class, or `nil` when it is one ``Accessibility`` does not
    /// offer (the deprecated `Always` classes).
    public let accessibility: Accessibility?
    /// The raw `kSecAttrAccessible` value (for example `"cku"`), for diagnostics.
    public let accessibilityRawValue: String?
    /// Whether the item is synchronized through iCloud Keychain (`kSecAttrSynchronizable`).
    public let isSynchronizable: Bool
    /// Whether the keychain returned an access control (`kSecAttrAccessControl`) for the
    /// item, as it does for items written with an ``AccessPolicy``.
    /// - Note: Apple's keychain may report an access-control object for every item of the
    ///   data-protection keychain, so on Apple platforms treat this as "may require
    ///   authentication", not as proof.
    public let hasAccessControl: Bool

    /// Reads the attributes from a Keychain Services attribute dictionary.
    /// - Parameter dictionary: A dictionary returned with `kSecReturnAttributes`.
    /// - Returns: The attributes, or `nil` when the dictionary has no account.
    init?(dictionary: [String: Any]) {
        guard let key = KeychainItemAttributes.string(dictionary[kSecAttrAccount as String]) else { return nil }
        self.key = key
        self.service =
            KeychainItemAttributes.string(dictionary[kSecAttrService as String])
            ?? KeychainItemAttributes.string(dictionary[kSecAttrServer as String])
        self.accessGroup = KeychainItemAttributes.string(dictionary[kSecAttrAccessGroup as String])
        self.label = KeychainItemAttributes.string(dictionary[kSecAttrLabel as String])
        self.comment = KeychainItemAttributes.string(dictionary[kSecAttrComment as String])
        self.creationDate = dictionary[kSecAttrCreationDate as String] as? Date
        self.modificationDate = dictionary[kSecAttrModificationDate as String] as? Date
        let accessible = KeychainItemAttributes.string(dictionary[kSecAttrAccessible as String])
        self.accessibilityRawValue = accessible
        self.accessibility = accessible.flatMap(Accessibility.init(secValue:))
        self.isSynchronizable = KeychainItemAttributes.bool(dictionary[kSecAttrSynchronizable as String])
        self.hasAccessControl = dictionary[kSecAttrAccessControl as String] != nil
    }

    /// Whether the two describe the same attributes, the names (key, service, access group,
    /// label, comment) compared byte for byte, as the keychain compares them.
    public static func == (lhs: KeychainItemAttributes, rhs: KeychainItemAttributes) -> Bool {
        ExactName(lhs.key) == ExactName(rhs.key) && ExactName.same(lhs.service, rhs.service)
            && ExactName.same(lhs.accessGroup, rhs.accessGroup) && ExactName.same(lhs.label, rhs.label)
            && ExactName.same(lhs.comment, rhs.comment) && lhs.creationDate == rhs.creationDate
            && lhs.modificationDate == rhs.modificationDate && lhs.accessibility == rhs.accessibility
            && lhs.accessibilityRawValue == rhs.accessibilityRawValue && lhs.isSynchronizable == rhs.isSynchronizable
            && lhs.hasAccessControl == rhs.hasAccessControl
    }

    /// Hashes every attribute, the names by their bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactName(key))
        for name in [service, accessGroup, label, comment] { hasher.combine(name.map { ExactName($0) }) }
        hasher.combine(creationDate)
        hasher.combine(modificationDate)
        hasher.combine(accessibility)
        hasher.combine(accessibilityRawValue)
        hasher.combine(isSynchronizable)
        hasher.combine(hasAccessControl)
    }

    /// A string attribute, whether it came back as a string or as UTF-8 data.
    static func string(_ value: Any?) -> String? {
        if let string = value as? String { return string }
        if let data = value as? Data { return String(data: data, encoding: .utf8) }
        return nil
    }

    /// A Boolean attribute, whether it came back as a Boolean or a number.
    static func bool(_ value: Any?) -> Bool {
        if let bool = value as? Bool { return bool }
        if let number = value as? NSNumber { return number.boolValue }
        if let int = value as? Int { return int != 0 }
        return false
    }

    /// Key, service, group, accessibility and flags; never the item's data.
    public var description: String {
        var parts = ["key: \(key)"]
        if let service { parts.append("service: \(service)") }
        if let accessGroup { parts.append("accessGroup: \(accessGroup)") }
        parts.append("accessibility: \(accessibility?.description ?? accessibilityRawValue ?? "unknown")")
        if isSynchronizable { parts.append("synchronizable") }
        if hasAccessControl { parts.append("accessControl") }
        if let label { parts.append("label: \(label)") }
        return "KeychainItemAttributes(\(parts.joined(separator: ", ")))"
    }
}
