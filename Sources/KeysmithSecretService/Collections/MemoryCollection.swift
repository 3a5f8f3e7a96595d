import Foundation
import Keysmith

/// The `session` collection: items kept in this process's memory only, gone when the service
/// stops (libsecret's `SECRET_COLLECTION_SESSION`). Secrets are zeroed when replaced or deleted.
public final class MemoryCollection: SecretCollection {
    private struct Entry {
        var label: String
        var attributes: ItemAttributes
        var secret: StoredSecret
        let created: UInt64
        var modified: UInt64
    }

    public let identifier: String
    public private(set) var label: String
    public private(set) var isLocked = false
    public let created: UInt64
    public private(set) var modified: UInt64
    private var entries: [Int: Entry] = [:]
    private var nextNumber = 1

    /// An empty collection.
    public init(identifier: String, label: String) {
        self.identifier = identifier
        self.label = label
        created = Self.now
        modified = created
    }

    deinit {
        for key in entries.keys { Self.wipe(&entries[key]!.secret) }
    }

    public func setLabel(_ label: String) throws(SecretServiceError) {
        self.label = label
        modified = Self.now
    }

    /// Unlocks (nothing is asked: the collection lives in this process).
    public func unlock() { isLocked = false }

    private func summary(_ number: Int, _ entry: Entry) -> ItemSummary {
        ItemSummary(identifier: String(number), label: entry.label, attributes: entry.attributes, created: entry.created, modified: entry.modified)
    }

    private func number(_ identifier: String) -> Int? {
        guard let number = Int(identifier), entries[number] != nil else { return nil }
        return number
    }

    public func items() throws(SecretServiceError) -> [ItemSummary] {
        entries.keys.sorted().map { summary($0, entries[$0]!) }
    }

    public func item(_ identifier: String) throws(SecretServiceError) -> ItemSummary? {
        number(identifier).map { summary($0, entries[$0]!) }
    }

    public func search(_ attributes: ItemAttributes) throws(SecretServiceError) -> [ItemSummary] {
        try items().filter { $0.attributes.matches(attributes) }
    }

    public func secret(of identifier: String) throws(SecretServiceError) -> StoredSecret {
        guard !isLocked else { throw .isLocked("the session collection is locked; unlock it first.") }
        guard let number = number(identifier) else { throw .noSuchObject("there is no such item in the session collection.") }
        return entries[number]!.secret
    }

    public func createItem(label: String, attributes: ItemAttributes, secret: StoredSecret, replace: Bool) throws(SecretServiceError) -> ItemCreation {
        guard !isLocked else { throw .isLocked("the session collection is locked; unlock it first.") }
        let now = Self.now
        modified = now
        if replace, let existing = entries.keys.sorted().first(where: { entries[$0]!.attributes == attributes }) {
            Self.wipe(&entries[existing]!.secret)
            entries[existing]!.secret = secret
            entries[existing]!.label = label
            entries[existing]!.modified = now
            return .replaced(String(existing))
        }
        let number = nextNumber
        nextNumber += 1
        entries[number] = Entry(label: label, attributes: attributes, secret: secret, created: now, modified: now)
        return .created(String(number))
    }

    private func change(_ identifier: String, _ body: (inout Entry) -> Void) throws(SecretServiceError) {
        guard !isLocked else { throw .isLocked("the session collection is locked; unlock it first.") }
        guard let number = number(identifier) else { throw .noSuchObject("there is no such item in the session collection.") }
        body(&entries[number]!)
        entries[number]!.modified = Self.now
        modified = entries[number]!.modified
    }

    public func setSecret(of identifier: String, to secret: StoredSecret) throws(SecretServiceError) {
        try change(identifier) { entry in
            Self.wipe(&entry.secret)
            entry.secret = secret
        }
    }

    public func setAttributes(of identifier: String, to attributes: ItemAttributes) throws(SecretServiceError) {
        try change(identifier) { $0.attributes = attributes }
    }

    public func setLabel(of identifier: String, to label: String) throws(SecretServiceError) {
        try change(identifier) { $0.label = label }
    }

    public func deleteItem(_ identifier: String) throws(SecretServiceError) {
        guard let number = number(identifier) else { throw .noSuchObject("there is no such item in the session collection.") }
        Self.wipe(&entries[number]!.secret)
        entries[number] = nil
        modified = Self.now
    }

    public func lock() throws(SecretServiceError) { isLocked = true }

    /// The session collection lives as long as the service (libsecret's `session` alias names
    /// it): it is not deleted; its items are.
    public func delete() throws(SecretServiceError) {
        throw .notSupported("the session collection lives as long as the Secret Service; delete its items instead.")
    }

    static func wipe(_ secret: inout StoredSecret) {
        secret.bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { memset(base, 0, buffer.count) }
        }
    }
}
