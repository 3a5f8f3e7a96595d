#if !canImport(Security)
import CSQLite
import Foundation

/// Sealing an item into its row and opening a row again, and the keyed hashes of names,
/// access groups and primary keys that rows are found by.
extension KeychainEngine {
    // MARK: Sealing and opening

    struct SealedItem {
        var row: StoredRow
        var firstName: Data
        var secondName: Data
        var label: Data
    }

    /// The largest secret and the largest single attribute value an item may hold. Apple
    /// sets no hard limit (it warns above 32 KiB); these only keep one item from exhausting
    /// memory or the file format's 32-bit lengths.
    static let maximumSecretSize = 64 << 20
    static let maximumAttributeSize = 1 << 20

    func seal(_ record: ItemRecord, schema: ClassSchema) throws -> SealedItem {
        if let secret = record.secret, secret.length > Self.maximumSecretSize {
            throw KeychainFailure(
                errSecDataTooLarge, "The item's data is \(secret.length) bytes; the keychain takes at most \(Self.maximumSecretSize).",
                recovery: "Keep large payloads in a file encrypted with a key that you store in the keychain.")
        }
        for (tag, value) in record.attributes where value.matchBytes.count > Self.maximumAttributeSize {
            throw KeychainFailure(
                errSecDataTooLarge, "The attribute \(ConstantNames.key(tag)) is \(value.matchBytes.count) bytes; an attribute may hold at most \(Self.maximumAttributeSize).",
                recovery: "Store large values as the item's data (kSecValueData), not as an attribute.")
        }
        let primaryKey = primaryKeyHash(record, schema: schema)
        let protection = record.protection
        // An access-controlled item rewritten keeps its row's ThisDeviceOnly binding (an
        // envelope of the first format is keyed by the item key it was sealed under); any
        // other item gets the binding of new rows.
        let binding = record.sealedForAccessControl ? record.deviceBinding : nil
        let key = try keys.itemKey(for: protection, binding: binding)
        let label = try keys.label(for: protection, binding: binding)
        let plaintext = ItemCodec.encode(
            attributes: record.attributes, secret: record.secret, sealedForAccessControl: record.sealedForAccessControl)
        let associated = associatedData(
            itemClass: record.itemClass.rawValue, reference: record.reference, primaryKey: primaryKey,
            protection: label)
        let sealed = plaintext.withUnsafeBytes { text in
            associated.withUnsafeBytes { Sodium.seal(text, associatedData: $0, key: key) }
        }
        let (first, second) = schema.indexedNames
        return SealedItem(
            row: StoredRow(
                id: record.rowID, itemClass: record.itemClass.rawValue, primaryKeyHash: primaryKey,
                accessGroupHash: groupHash(record.accessGroup, memo: writer), synchronizable: record.synchronizable,
                protection: label, reference: record.reference, nonce: sealed.nonce,
                ciphertext: sealed.ciphertext),
            firstName: nameHash(record.itemClass, slot: 1, record.attributes[first] ?? .string("")),
            secondName: nameHash(record.itemClass, slot: 2, record.attributes[second] ?? .string("")),
            label: nameHash(record.itemClass, slot: 3, record.attributes[Self.labelTag] ?? .string("")))
    }

    /// Decrypts the row the statement is on (columns as in ``KeychainDatabase/rowColumns``),
    /// reading the ciphertext in place.
    func openCurrentRow(of statement: Statement, recordsCurrent: Bool) throws -> ItemRecord {
        guard let className = statement.string(at: 1), let protectionName = statement.string(at: 5) else {
            throw damaged()
        }
        return try statement.withBytes(at: 8) { ciphertext in
            try statement.withBytes(at: 7) { nonce in
                try openRow(
                    id: statement.int64(at: 0), className: className, primaryKey: statement.data(at: 2),
                    synchronizable: statement.int64(at: 4), protectionName: protectionName,
                    reference: statement.data(at: 6), nonce: nonce, ciphertext: ciphertext, recordsCurrent: recordsCurrent)
            }
        }
    }

    /// Decrypts one stored row (from SQLite or the search cache), authenticating it
    /// against its associated data, and checks its plaintext columns against what was sealed.
    func openRow(
        id: Int64, className: String, primaryKey storedPrimaryKey: Data, synchronizable: Int64, protectionName: String,
        reference: Data, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, recordsCurrent: Bool,
        associatedData cached: [UInt8]? = nil
    ) throws -> ItemRecord {
        guard let itemClass = ItemClass(rawValue: className), let (protection, binding) = try keys.protectionAndBinding(forLabel: protectionName)
        else {
            throw damaged()
        }
        let key = try keys.itemKey(for: protection, binding: binding, recordsCurrent: recordsCurrent)
        let associated = cached ?? associatedData(
            itemClass: className, reference: reference, primaryKey: storedPrimaryKey, protection: protectionName)
        let opened = associated.withUnsafeBytes { Sodium.open(ciphertext, nonce: nonce, associatedData: $0, key: key) }
        guard let opened else { throw damaged() }
        let decoded = try ItemCodec.decode(opened)
        var record = ItemRecord(
            rowID: id, itemClass: itemClass, attributes: decoded.attributes,
            secret: decoded.secret, reference: reference, sealedForAccessControl: decoded.sealedForAccessControl)
        record.deviceBinding = binding
        // The row's plaintext columns must agree with what was sealed. (The primary-key hash
        // needs no recomputation: it is part of the authenticated data, length-prefixed, so it
        // cannot change without the item failing to decrypt.)
        guard record.synchronizable == (synchronizable != 0), record.protection == protection else {
            throw damaged()
        }
        return record
    }

    func damaged() -> KeychainFailure {
        KeychainFailure(
            errSecDecode,
            "An item matching the query is damaged: its stored bytes fail authentication (edited, truncated or moved within \(directory.path)/\(Self.databaseName)). No data was returned for it.",
            recovery: "Delete the item (SecItemDelete with its service and account) and store it again; other items are not affected.")
    }

    /// The item's associated data (see ``KeyHierarchy/associatedData(prefix:itemClass:reference:primaryKey:protection:)``).
    func associatedData(itemClass: String, reference: Data, primaryKey: Data, protection: String) -> [UInt8] {
        KeyHierarchy.associatedData(
            prefix: associatedDataPrefix, itemClass: itemClass, reference: reference, primaryKey: primaryKey,
            protection: protection)
    }

    // MARK: Keyed hashes

    func nameHash(_ itemClass: ItemClass, slot: UInt8, _ value: AttributeValue) -> Data {
        var input: [UInt8] = []
        input.reserveCapacity(64)
        input.append(contentsOf: itemClass.rawValue.utf8)
        input.append(slot)
        value.appendMatchBytes(to: &input)
        return Sodium.keyedHash(input, key: keys.indexKey)
    }

    /// Keyed hash of an access group name (memoized per connection: a process uses few
    /// groups). Called by the thread that uses `memo`.
    func groupHash(_ group: String, memo: Connection) -> Data {
        let name = Data(group.utf8)  // keyed by bytes: canonically equivalent names are different groups
        if let known = memo.groupHashes[name] { return known }
        var input: [UInt8] = Array("agrp".utf8)
        input.append(0)
        input.append(contentsOf: group.utf8)
        let hash = Sodium.keyedHash(input, key: keys.indexKey)
        if memo.groupHashes.count < 256 { memo.groupHashes[name] = hash }
        return hash
    }

    func primaryKeyHash(_ record: ItemRecord, schema: ClassSchema) -> Data {
        var input: [UInt8] = []
        input.reserveCapacity(256)
        input.append(contentsOf: "pk".utf8)
        input.append(contentsOf: record.itemClass.rawValue.utf8)
        for tag in schema.primaryKey {
            input.append(contentsOf: tag.utf8)
            let lengthAt = input.count
            for _ in 0..<4 { input.append(0xFF) }  // the length, or "absent"
            if let value = record.attributes[tag] {
                value.appendMatchBytes(to: &input)
                let length = UInt32(input.count - lengthAt - 4).littleEndian
                withUnsafeBytes(of: length) { bytes in
                    for offset in 0..<4 { input[lengthAt + offset] = bytes[offset] }
                }
            }
        }
        return Sodium.keyedHash(input, key: keys.indexKey)
    }
}
#endif
