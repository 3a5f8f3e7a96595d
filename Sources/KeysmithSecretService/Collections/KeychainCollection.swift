import Foundation
import Keysmith
import KeychainServices

/// A collection kept in the keychain: the generic passwords of one access group. The login
/// collection is the group every program without configured groups shares (where the
/// `keysmith` tool stores by default), so what `secret-tool` stores the tool finds, and the
/// reverse.
///
/// Each Secret Service item is a Keysmith generic password: the `service` attribute is its
/// service, `account` its account, the label its label; every attribute and the content type
/// are also kept in its `kSecAttrGeneric` (``AttributeRecord``, sealed with the item). An item
/// without a `service` attribute gets its `xdg:schema` (else `secret-service`) as service; one
/// without `account` a generated account. Keysmith keeps one item per service and account, so
/// creating an item whose service and account another item has replaces that item.
/// New items are accessible when unlocked (class A): the collection locks with the keychain.
public final class KeychainCollection: SecretCollection {
    public let identifier: String
    /// The access group that holds the collection's items.
    public let accessGroup: String
    public private(set) var label: String
    public let created: UInt64
    /// The item that holds this collection's own label and creation date (collections made
    /// with `CreateCollection`), or `nil` for the login collection.
    private let metadataAccount: String?
    /// The items seen while unlocked, with their labels and attributes, for answers while
    /// locked. Memory only.
    private var knownItems: [ItemSummary] = []
    /// The keyed hashes of the items' attributes, for searches while locked (``AttributeIndex``).
    private var attributeIndex: AttributeIndex { AttributeIndex(collection: identifier) }
    /// Whether the index was rebuilt from the unlocked items since the collection was last seen
    /// locked (or the service started).
    private var indexIsCurrent = false

    /// The service of the items that describe created collections.
    static let collectionMetadataService = "org.freedesktop.Secret.Collection"
    /// The service of items stored without `service` or `xdg:schema` attributes.
    static let fallbackService = "secret-service"

    /// A collection over an access group.
    init(identifier: String, accessGroup: String, label: String, created: UInt64, metadataAccount: String?) {
        self.identifier = identifier
        self.accessGroup = accessGroup
        self.label = label
        self.created = created
        self.metadataAccount = metadataAccount
    }

    public var modified: UInt64 {
        (try? items().map(\.modified).max()) ?? nil ?? created
    }

    /// Locked exactly when the keychain's items accessible when unlocked (class A) are.
    public var isLocked: Bool { KeychainEnvironment.lockState != .unlocked }

    /// The group of the item that holds the login collection's label (it is not one of the
    /// login collection's items).
    static let serviceMetadataGroup = "keysmith.secret-service"

    /// Where this collection's description lives: group and account.
    private var metadataLocation: (group: String, account: String) {
        if let metadataAccount { return (accessGroup, metadataAccount) }
        return (Self.serviceMetadataGroup, identifier)
    }

    /// The label kept for the login collection, if one was set.
    static func storedLoginLabel() -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: serviceMetadataGroup,
            kSecAttrService as String: collectionMetadataService, kSecAttrAccount as String: "login",
            kSecReturnAttributes as String: kCFBooleanTrue as Any,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let item = result as? [String: Any] else { return nil }
        return item[kSecAttrLabel as String] as? String
    }

    public func setLabel(_ label: String) throws(SecretServiceError) {
        let (group, account) = metadataLocation
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: group,
            kSecAttrService as String: Self.collectionMetadataService, kSecAttrAccount as String: account,
        ]
        var status = SecItemUpdate(query as CFDictionary, [kSecAttrLabel as String: label] as CFDictionary)
        if status == errSecItemNotFound {
            var add = query
            add[kSecAttrLabel as String] = label
            add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
            add[kSecValueData as String] = Data()
            status = SecItemAdd(add as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw Self.failure(status, "the collection's label could not be changed") }
        self.label = label
    }

    // MARK: Reading

    private var baseQuery: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: accessGroup,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny as String,
        ]
    }

    /// The query for one item by its identifier: class and persistent reference only (the
    /// engine takes nothing else with a reference); callers check the item's group with
    /// ``isHere(_:)``.
    private func query(for identifier: String) -> [String: Any]? {
        guard let reference = Self.persistentReference(identifier) else { return nil }
        return [kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference]
    }

    /// Whether an item's attributes put it in this collection's access group.
    private func isHere(_ dictionary: [String: Any]) -> Bool {
        guard let group = dictionary[kSecAttrAccessGroup as String] as? String else { return false }
        return ExactName(group) == ExactName(accessGroup)
    }

    /// The items matching `extra` (every item for none), as summaries.
    private func list(_ extra: [String: Any]) throws(SecretServiceError) -> [ItemSummary] {
        var query = baseQuery
        for (key, value) in extra { query[key] = value }
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        query[kSecReturnPersistentRef as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        if status == errSecInteractionNotAllowed { throw .isLocked("the \(label) collection is locked; unlock it first (keysmith unlock).") }
        guard status == errSecSuccess, let found = result as? [[String: Any]] else {
            throw Self.failure(status, "the keychain could not be searched")
        }
        return found.compactMap(summary)
    }

    private func summary(_ dictionary: [String: Any]) -> ItemSummary? {
        guard let reference = dictionary[kSecValuePersistentRef as String] as? Data, reference.count == 20 else { return nil }
        let service = dictionary[kSecAttrService as String] as? String ?? ""
        if metadataAccount != nil, ExactName(service) == ExactName(Self.collectionMetadataService) { return nil }
        let account = dictionary[kSecAttrAccount as String] as? String ?? ""
        var attributes: ItemAttributes
        if let generic = dictionary[kSecAttrGeneric as String] as? Data, let record = AttributeRecord(generic) {
            attributes = record.attributes
        } else {
            attributes = ItemAttributes([("service", service), ("account", account)])
        }
        // The keychain's own names win when the record names them (a tool may have renamed the item).
        if attributes["service"] != nil { attributes["service"] = ExactName(service) }
        if attributes["account"] != nil { attributes["account"] = ExactName(account) }
        func seconds(_ key: CFString) -> UInt64 {
            UInt64(max(0, (dictionary[key as String] as? Date)?.timeIntervalSince1970 ?? 0))
        }
        return ItemSummary(
            identifier: Self.identifier(reference), label: dictionary[kSecAttrLabel as String] as? String ?? "",
            attributes: attributes, created: seconds(kSecAttrCreationDate), modified: seconds(kSecAttrModificationDate))
    }

    public func items() throws(SecretServiceError) -> [ItemSummary] {
        if isLocked { return lockedItems(matching: ItemAttributes()) }
        do {
            return try readAll()
        } catch where error.name == SecretServiceError.isLocked("").name {
            return lockedItems(matching: ItemAttributes())
        }
    }

    /// Every item, read from the unlocked keychain; the attribute index is rebuilt from them.
    private func readAll() throws(SecretServiceError) -> [ItemSummary] {
        let found = try list([:])
        knownItems = found
        indexIsCurrent = attributeIndex.rebuild(from: found)
        return found
    }

    /// While locked: the items the attribute index finds (with what the service saw of them
    /// unlocked, if anything; else without label or attributes, which the index does not
    /// hold), or, when it cannot be read, the matching items the service saw unlocked.
    private func lockedItems(matching query: ItemAttributes) -> [ItemSummary] {
        indexIsCurrent = false
        guard let identifiers = attributeIndex.identifiers(matching: query) else {
            return knownItems.filter { $0.attributes.matches(query) }
        }
        return identifiers.map { identifier in
            knownItems.first { $0.identifier.utf8.elementsEqual(identifier.utf8) }
                ?? ItemSummary(identifier: identifier, label: "", attributes: ItemAttributes(), created: 0, modified: 0)
        }
    }

    /// One item while locked (see ``lockedItems(matching:)``).
    private func lockedItem(_ identifier: String) -> ItemSummary? {
        if let known = knownItems.first(where: { $0.identifier.utf8.elementsEqual(identifier.utf8) }) { return known }
        guard attributeIndex.contains(identifier) else { return nil }
        return ItemSummary(identifier: identifier, label: "", attributes: ItemAttributes(), created: 0, modified: 0)
    }

    public func item(_ identifier: String) throws(SecretServiceError) -> ItemSummary? {
        if isLocked { return lockedItem(identifier) }
        guard let query = query(for: identifier) else { return nil }
        var single = query
        single[kSecReturnAttributes as String] = kCFBooleanTrue
        single[kSecReturnPersistentRef as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(single as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        if status == errSecInteractionNotAllowed { return lockedItem(identifier) }
        guard status == errSecSuccess, let dictionary = result as? [String: Any] else {
            throw Self.failure(status, "the item could not be read")
        }
        return isHere(dictionary) ? summary(dictionary) : nil
    }

    public func search(_ attributes: ItemAttributes) throws(SecretServiceError) -> [ItemSummary] {
        // Unlocked, service and account are index seeks in the keychain and the rest is compared
        // here (every item is read when the attribute index is to be rebuilt); locked, the
        // attribute index answers.
        var extra: [String: Any] = [:]
        if let service = attributes["service"] { extra[kSecAttrService as String] = service.text }
        if let account = attributes["account"] { extra[kSecAttrAccount as String] = account.text }
        if isLocked { return lockedItems(matching: attributes) }
        do {
            let candidates = extra.isEmpty || !indexIsCurrent ? try readAll() : try list(extra)
            return candidates.filter { $0.attributes.matches(attributes) }
        } catch where error.name == SecretServiceError.isLocked("").name {
            return lockedItems(matching: attributes)
        }
    }

    public func secret(of identifier: String) throws(SecretServiceError) -> StoredSecret {
        guard !isLocked else { throw .isLocked("the \(label) collection is locked; unlock it first (keysmith unlock).") }
        guard var query = query(for: identifier) else { throw .noSuchObject("there is no such item in the \(label) collection.") }
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        // Never a prompt on the service's one thread: it would hold every other client until the
        // user answers. An item whose access control asks for the user is read with the keysmith tool.
        query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { throw .noSuchObject("there is no such item in the \(label) collection.") }
        if status == errSecInteractionNotAllowed || status == errSecAuthFailed {
            throw .isLocked(
                "the item cannot be read through the Secret Service now: the keychain was locked meanwhile (keysmith unlock), "
                    + "or the item's access control asks for the user (read it with keysmith find-generic-password -w).")
        }
        guard status == errSecSuccess, let dictionary = result as? [String: Any] else {
            throw Self.failure(status, "the secret could not be read")
        }
        guard isHere(dictionary) else { throw .noSuchObject("there is no such item in the \(label) collection.") }
        var bytes: [UInt8] = []
        if let data = dictionary[kSecValueData as String] as? NSData {
            bytes = [UInt8](repeating: 0, count: data.length)
            bytes.withUnsafeMutableBytes { buffer in
                if let base = buffer.baseAddress { data.getBytes(base, length: data.length) }
            }
        } else if let data = dictionary[kSecValueData as String] as? Data {
            bytes = [UInt8](data)
        }
        var contentType = "text/plain"
        if let generic = dictionary[kSecAttrGeneric as String] as? Data, let record = AttributeRecord(generic) {
            contentType = record.contentType
        }
        return StoredSecret(bytes: bytes, contentType: contentType)
    }

    // MARK: Writing

    public func createItem(label: String, attributes: ItemAttributes, secret: StoredSecret, replace: Bool) throws(SecretServiceError) -> ItemCreation {
        guard !isLocked else { throw .isLocked("the \(self.label) collection is locked; unlock it first (keysmith unlock).") }
        let record = AttributeRecord(attributes: attributes, contentType: secret.contentType)
        let service = (attributes["service"] ?? attributes["xdg:schema"])?.text ?? Self.fallbackService
        if attributes["account"] == nil, replace,
            let same = try list([kSecAttrService as String: service]).first(where: { $0.attributes == attributes })
        {
            try update(same.identifier, label: label, record: record, service: nil, account: nil, secret: secret.bytes)
            attributeIndex.record(same.identifier, attributes)
            return .replaced(same.identifier)
        }
        let account = attributes["account"]?.text ?? Self.generatedAccount()
        var add = baseQuery
        add[kSecAttrSynchronizable as String] = nil
        add[kSecAttrService as String] = service
        add[kSecAttrAccount as String] = account
        add[kSecAttrLabel as String] = label
        add[kSecAttrGeneric as String] = record.encoded
        add[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
        add[kSecReturnPersistentRef as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = Self.withSecretData(secret.bytes) { data in
            add[kSecValueData as String] = data
            return SecItemAdd(add as CFDictionary, &result)
        }
        if status == errSecDuplicateItem {
            // Keysmith keeps one item per service and account: that item becomes this one.
            guard let existing = try list([kSecAttrService as String: service, kSecAttrAccount as String: account]).first else {
                throw Self.failure(status, "the item could not be stored")
            }
            // Another program's own data in kSecAttrGeneric is not overwritten by an attribute record.
            guard try self.record(of: existing.identifier).isOwn else {
                throw .failed(
                    "an item with this service and account was stored by another program with generic data of its own, which "
                        + "would be lost; delete that item first (keysmith delete-generic-password -s SERVICE -a ACCOUNT) or store under another account.")
            }
            try update(existing.identifier, label: label, record: record, service: nil, account: nil, secret: secret.bytes)
            attributeIndex.record(existing.identifier, attributes)
            return .replaced(existing.identifier)
        }
        guard status == errSecSuccess, let reference = result as? Data, reference.count == 20 else {
            throw Self.failure(status, "the item could not be stored")
        }
        attributeIndex.record(Self.identifier(reference), attributes)
        return .created(Self.identifier(reference))
    }

    private func update(
        _ identifier: String, label: String?, record: AttributeRecord?, service: String?, account: String?, secret: [UInt8]?
    ) throws(SecretServiceError) {
        guard !isLocked else { throw .isLocked("the \(self.label) collection is locked; unlock it first (keysmith unlock).") }
        guard let query = query(for: identifier), try item(identifier) != nil else {
            throw .noSuchObject("there is no such item in the \(self.label) collection.")
        }
        var changes: [String: Any] = [:]
        if let label { changes[kSecAttrLabel as String] = label }
        if let record { changes[kSecAttrGeneric as String] = record.encoded }
        if let service { changes[kSecAttrService as String] = service }
        if let account { changes[kSecAttrAccount as String] = account }
        let status = Self.withSecretData(secret ?? []) { data in
            if secret != nil { changes[kSecValueData as String] = data }
            return SecItemUpdate(query as CFDictionary, changes as CFDictionary)
        }
        switch status {
        case errSecSuccess: return
        case errSecItemNotFound: throw .noSuchObject("there is no such item in the \(self.label) collection.")
        case errSecDuplicateItem:
            throw .failed("another item in the \(self.label) collection has this service and account; delete it first, or choose others.")
        case errSecInteractionNotAllowed: throw .isLocked("the keychain is locked; unlock it first (keysmith unlock).")
        default: throw Self.failure(status, "the item could not be changed")
        }
    }

    /// The item's record: its own, or one made from what the keychain holds (an item stored by
    /// another program).
    private func record(of identifier: String) throws(SecretServiceError) -> (AttributeRecord, isOwn: Bool) {
        guard var query = query(for: identifier) else { throw .noSuchObject("there is no such item in the \(label) collection.") }
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { throw .noSuchObject("there is no such item in the \(label) collection.") }
        guard status == errSecSuccess, let dictionary = result as? [String: Any] else {
            throw status == errSecInteractionNotAllowed
                ? .isLocked("the keychain is locked; unlock it first (keysmith unlock).") : Self.failure(status, "the item could not be read")
        }
        guard isHere(dictionary) else { throw .noSuchObject("there is no such item in the \(label) collection.") }
        if let generic = dictionary[kSecAttrGeneric as String] as? Data, let record = AttributeRecord(generic) { return (record, true) }
        let summary = summary(dictionary)
        return (AttributeRecord(attributes: summary?.attributes ?? ItemAttributes(), contentType: "text/plain"), dictionary[kSecAttrGeneric as String] == nil)
    }

    public func setSecret(of identifier: String, to secret: StoredSecret) throws(SecretServiceError) {
        var (record, isOwn) = try record(of: identifier)
        record.contentType = secret.contentType
        try update(identifier, label: nil, record: isOwn ? record : nil, service: nil, account: nil, secret: secret.bytes)
    }

    public func setAttributes(of identifier: String, to attributes: ItemAttributes) throws(SecretServiceError) {
        let (old, isOwn) = try record(of: identifier)
        guard isOwn || (attributes["service"] != nil && attributes["account"] != nil) else {
            throw .failed("this item was stored by another program and keeps its own data; give it service and account attributes.")
        }
        let service = (attributes["service"] ?? attributes["xdg:schema"])?.text
        let account = attributes["account"]?.text
        try update(
            identifier, label: nil, record: AttributeRecord(attributes: attributes, contentType: old.contentType),
            service: service, account: account, secret: nil)
        attributeIndex.record(identifier, attributes)
    }

    public func setLabel(of identifier: String, to label: String) throws(SecretServiceError) {
        try update(identifier, label: label, record: nil, service: nil, account: nil, secret: nil)
    }

    public func deleteItem(_ identifier: String) throws(SecretServiceError) {
        guard let query = query(for: identifier), try item(identifier) != nil else { throw .noSuchObject("there is no such item in the \(label) collection.") }
        let status = SecItemDelete(query as CFDictionary)
        switch status {
        case errSecSuccess:
            knownItems.removeAll { $0.identifier.utf8.elementsEqual(identifier.utf8) }
            attributeIndex.remove(identifier)
        case errSecItemNotFound: throw .noSuchObject("there is no such item in the \(label) collection.")
        case errSecInteractionNotAllowed: throw .isLocked("the keychain is locked; unlock it first (keysmith unlock).")
        default: throw Self.failure(status, "the item could not be deleted")
        }
    }

    public func lock() throws(SecretServiceError) {
        do {
            try KeychainEnvironment.lock()
        } catch {
            throw .failed("the keychain could not be locked: \(error)")
        }
    }

    public func delete() throws(SecretServiceError) {
        guard let metadataAccount else {
            throw .notSupported("the login collection holds the keychain's items and is not deleted through the Secret Service.")
        }
        guard !isLocked else { throw .isLocked("the \(label) collection is locked; unlock it first (keysmith unlock).") }
        for item in try list([:]) { try deleteItem(item.identifier) }
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: accessGroup,
            kSecAttrService as String: Self.collectionMetadataService, kSecAttrAccount as String: metadataAccount,
        ]
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.failure(status, "the collection could not be deleted") }
        attributeIndex.delete()
    }

    /// Runs `body` with the secret as `NSData` over the caller's own bytes, not a copy: the
    /// engine copies it once into its zeroing buffer, and the caller zeroes its bytes.
    private static func withSecretData<Result>(_ bytes: [UInt8], _ body: (NSData) -> Result) -> Result {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return body(NSData()) }
            return body(NSData(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), length: buffer.count, freeWhenDone: false))
        }
    }

    // MARK: Identifiers

    /// The path element of a persistent reference (`genp` and 16 bytes): the 16 bytes in hex.
    static func identifier(_ reference: Data) -> String {
        reference.suffix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The persistent reference of a path element, or `nil` when it is not one.
    static func persistentReference(_ identifier: String) -> Data? {
        let hex = Array(identifier.utf8)
        guard hex.count == 32 else { return nil }
        var bytes = Array("genp".utf8)
        for index in stride(from: 0, to: 32, by: 2) {
            guard let high = hexValue(hex[index]), let low = hexValue(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return Data(bytes)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// An account for an item stored without an `account` attribute.
    static func generatedAccount() -> String {
        var bytes = [UInt8](repeating: 0, count: 8)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        return "secret-service-" + bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func failure(_ status: OSStatus, _ what: String) -> SecretServiceError {
        let message = SecCopyErrorMessageString(status, nil).map { String(describing: $0) } ?? "OSStatus \(status)"
        return .failed("\(what): \(message)")
    }
}
