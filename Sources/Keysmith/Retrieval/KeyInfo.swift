import Foundation

/// A key the retriever found: what was asked for, which name matched, its version, its
/// bytes, and where it came from.
///
/// `KeyInfo` is a value; copying it is cheap (the fields live in one shared, immutable
/// box). Its ``description``, ``debugDescription`` and its mirror (`dump`) show the
/// identifier, version and source but never the key bytes:
///
/// ```swift
/// let info = try KeyRetriever.shared.retrieve("api_key")
/// print(info!)  // KeyInfo(api_key, version=2024.06.01, source=Keychain)
/// ```
///
/// - Note: Two `KeyInfo` values are equal when every field is equal; the key bytes are
///   compared in constant time.
public struct KeyInfo: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The immutable fields, shared between copies so that returning a cached key costs one
    /// reference-count increment.
    final class Storage: Sendable {
        let identifier: String
        let matchedName: String
        let version: String
        let data: Data
        let source: KeySourceKind
        let sourceDescription: String
        let locationParts: Location
        /// Whether the copy is a keychain item behind access control (user presence, the
        /// passphrase, biometry): each read is an evaluation, so the retriever never caches it.
        let needsUserAuthentication: Bool

        init(
            identifier: String, matchedName: String, version: String, data: Data,
            source: KeySourceKind, sourceDescription: String, locationParts: Location,
            needsUserAuthentication: Bool = false
        ) {
            self.identifier = identifier
            self.matchedName = matchedName
            self.version = version
            self.data = data
            self.source = source
            self.sourceDescription = sourceDescription
            self.locationParts = locationParts
            self.needsUserAuthentication = needsUserAuthentication
        }

        /// ``KeyInfo/location`` as text.
        var location: String { locationParts.text }
    }

    /// Where a copy lives: text given by its source, or the parts of a keychain item, put
    /// into words each time ``KeyInfo/location`` is read (a lookup that hits the keychain
    /// does not pay for a sentence nobody reads; audits and `==`, which read it, do).
    enum Location: Sendable {
        case text(String)
        case keychainItem(service: String, account: String, accessGroup: String?)

        var text: String {
            switch self {
            case .text(let text):
                return text
            case .keychainItem(let service, let account, let accessGroup):
                return "keychain service \"\(service)\", account \"\(account)\""
                    + (accessGroup.map { ", access group \"\($0)\"" } ?? "")
            }
        }
    }

    let storage: Storage

    /// Creates a key record. Sources create these for each version they hold.
    /// - Parameters:
    ///   - identifier: The identifier the caller asked for. Sources pass the name they were
    ///     asked for; the retriever replaces it with the caller's identifier.
    ///   - matchedName: The exact name under which the key is stored.
    ///   - version: The key's version (`2024.06.01`, or a label such as `builtin`).
    ///   - data: The key bytes.
    ///   - source: The kind of source that holds the key.
    ///   - sourceDescription: A short source name for logs, such as `Keychain` or `ConfigFile(plist)`.
    ///   - location: Where exactly the copy lives (file and key, variable name, keychain
    ///     service and account), for audits and error messages. Never key material.
    public init(
        identifier: String, matchedName: String, version: String, data: Data,
        source: KeySourceKind, sourceDescription: String, location: String? = nil
    ) {
        storage = Storage(
            identifier: identifier, matchedName: matchedName, version: version, data: data,
            source: source, sourceDescription: sourceDescription,
            locationParts: .text(location ?? sourceDescription))
    }

    /// A key record whose location is given in parts and spelled out when read.
    init(
        identifier: String, matchedName: String, version: String, data: Data,
        source: KeySourceKind, sourceDescription: String, locationParts: Location,
        needsUserAuthentication: Bool = false
    ) {
        storage = Storage(
            identifier: identifier, matchedName: matchedName, version: version, data: data,
            source: source, sourceDescription: sourceDescription, locationParts: locationParts,
            needsUserAuthentication: needsUserAuthentication)
    }

    /// The identifier the caller asked for (for example `apiKey`).
    public var identifier: String { storage.identifier }
    /// The candidate name that matched in the source (for example `api_key`).
    public var matchedName: String { storage.matchedName }
    /// The key's version as stored (for example `2024.06.01`, `builtin`, `env`).
    public var version: String { storage.version }
    /// The key's version, for numeric comparison.
    public var keyVersion: KeyVersion { KeyVersion(storage.version) }
    /// The key bytes. Handle with care: never log or print them.
    public var data: Data { storage.data }
    /// The kind of source the key came from.
    public var source: KeySourceKind { storage.source }
    /// A short description of the source, such as `Keychain`, `ConfigFile(plist)` or `Environment`.
    public var sourceDescription: String { storage.sourceDescription }
    /// Where exactly the copy lives: a file and key, an environment variable, a keychain
    /// service and account. Contains no key material.
    public var location: String { storage.location }

    /// The key bytes decoded as text.
    /// - Parameter encoding: The text encoding of the key (default UTF-8).
    /// - Returns: The text, or `nil` when the bytes are not valid in that encoding.
    public func string(encoding: String.Encoding = .utf8) -> String? {
        String(data: storage.data, encoding: encoding)
    }

    /// A copy with `identifier` replaced (used by the retriever to report what was asked).
    func withIdentifier(_ identifier: String) -> KeyInfo {
        if ExactName(identifier) == ExactName(storage.identifier) { return self }
        return KeyInfo(
            identifier: identifier, matchedName: storage.matchedName, version: storage.version,
            data: storage.data, source: storage.source,
            sourceDescription: storage.sourceDescription, locationParts: storage.locationParts,
            needsUserAuthentication: storage.needsUserAuthentication)
    }

    /// `KeyInfo(api_key, version=2024.06.01, source=Keychain)`; never the key bytes.
    public var description: String {
        "KeyInfo(\(identifier), version=\(version), source=\(sourceDescription))"
    }

    /// Like ``description`` plus the matched name and location; never the key bytes.
    public var debugDescription: String {
        "KeyInfo(identifier: \(identifier), matchedName: \(matchedName), version: \(version), "
            + "source: \(sourceDescription), location: \(location), data: <redacted>)"
    }

    /// A mirror for `dump` and debuggers that shows every field except the key bytes.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "identifier": identifier, "matchedName": matchedName, "version": version,
                "source": source, "sourceDescription": sourceDescription, "location": location,
                "data": "<redacted>",
            ], displayStyle: .struct)
    }

    /// Whether two records are equal; the key bytes are compared in constant time.
    /// - Parameters:
    ///   - lhs: A record.
    ///   - rhs: Another record.
    /// - Returns: `true` when every field is equal.
    public static func == (lhs: KeyInfo, rhs: KeyInfo) -> Bool {
        if lhs.storage === rhs.storage { return true }
        // Evaluate every field so the time does not depend on which one differs.
        let sameBytes = KeyInfo.constantTimeEqual(lhs.data, rhs.data)
        let sameFields =
            lhs.identifier == rhs.identifier && lhs.matchedName == rhs.matchedName
            && lhs.version == rhs.version && lhs.source == rhs.source
            && lhs.sourceDescription == rhs.sourceDescription && lhs.location == rhs.location
        return sameBytes && sameFields
    }

    /// Whether this key's bytes equal `other`, compared in constant time.
    /// - Parameter other: Bytes to compare with.
    /// - Returns: `true` when the bytes are identical.
    public func hasSameMaterial(as other: Data) -> Bool {
        KeyInfo.constantTimeEqual(storage.data, other)
    }
}

extension KeyInfo {
    /// Compares two byte strings in time that depends only on their lengths, never on where
    /// they differ. Lengths are not secret.
    static func constantTimeEqual(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        lhs.withUnsafeBytes { (left: UnsafeRawBufferPointer) in
            rhs.withUnsafeBytes { (right: UnsafeRawBufferPointer) in
                for index in 0..<left.count {
                    difference |= left[index] ^ right[index]
                }
            }
        }
        return difference == 0
    }
}
