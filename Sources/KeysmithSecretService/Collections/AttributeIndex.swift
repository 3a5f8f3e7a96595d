import CSodium
import Foundation
import Keysmith
import KeychainServices

/// The attribute index of one keychain collection: for every item, the keyed hashes of its
/// attributes, so a search finds items while the keychain is locked (when the items
/// themselves cannot be opened), also in a service started while locked.
///
/// It is one Keysmith item in the service's own group (`keysmith.secret-service`, service
/// `org.freedesktop.Secret.AttributeIndex`, account = the collection's identifier),
/// accessible after the first unlock (class C): readable while the keychain is locked, sealed
/// by the engine like every item. Its data holds a random 32-byte index key and, per item (the
/// 16 bytes of its persistent reference), the set of
/// HMAC-SHA256(index key, name length ‖ name ‖ value) of its attributes (the length 32 bits
/// big-endian, name and value their UTF-8 bytes). No name or value is stored, and without the
/// key (inside the sealed item) the hashes cannot be checked against guesses.
///
/// Layout of the data: `KSSI1`, the key, a 32-bit count of items, and per item its 16 bytes, a
/// 32-bit count of hashes and the hashes (32 bytes each), counts big-endian.
///
/// The key is read for each use and zeroed after it (`sodium_memzero`). Hashes are compared in
/// constant time (`sodium_memcmp`).
struct AttributeIndex: Sendable {
    /// The service of index items.
    static let service = "org.freedesktop.Secret.AttributeIndex"
    static let magic: [UInt8] = Array("KSSI1".utf8)
    static let keyBytes = Int(crypto_auth_hmacsha256_KEYBYTES)
    static let hashBytes = Int(crypto_auth_hmacsha256_BYTES)
    /// An item is named by the 16 random bytes of its persistent reference.
    static let itemBytes = 16

    /// The identifier of the collection the index belongs to (the index item's account).
    let collection: String

    /// One item and the keyed hashes of its attributes, in byte order.
    struct Entry: Equatable {
        var item: [UInt8]
        var hashes: [[UInt8]]
    }

    /// What the index item holds, key included; ``zero()`` when done.
    private struct Contents {
        var key: [UInt8]
        var entries: [Entry]

        mutating func zero() {
            key.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
        }
    }

    private enum Loaded {
        /// There is no index yet.
        case absent
        /// The index cannot be read now (the keychain has not been unlocked since the
        /// machine started, or the item is damaged).
        case unreadable
        case loaded(Contents)
    }

    // MARK: Reading

    /// The identifiers of the items whose attributes include every one of `query` (every
    /// indexed item for none); `nil` when the index cannot be read now or does not exist.
    func identifiers(matching query: ItemAttributes) -> [String]? {
        guard case .loaded(var contents) = load() else { return nil }
        defer { contents.zero() }
        let wanted = query.entries.map { Self.hash(name: $0.name, value: $0.value, key: contents.key) }
        return contents.entries.filter { entry in
            wanted.allSatisfy { hash in entry.hashes.contains { Self.same($0, hash) } }
        }.map { Self.identifier($0.item) }
    }

    /// Whether the index has an entry for the item (`false` when it cannot be read).
    func contains(_ identifier: String) -> Bool {
        guard let item = Self.itemBytes(identifier), case .loaded(var contents) = load() else { return false }
        defer { contents.zero() }
        return contents.entries.contains { $0.item == item }
    }

    // MARK: Keeping it up to date

    /// Records an item's attributes (replacing what the index had for it).
    /// - Returns: Whether the index is up to date.
    @discardableResult
    func record(_ identifier: String, _ attributes: ItemAttributes) -> Bool {
        guard let item = Self.itemBytes(identifier) else { return false }
        return change { entries, key in
            let entry = Entry(item: item, hashes: Self.hashes(attributes, key: key))
            if let index = entries.firstIndex(where: { $0.item == item }) { entries[index] = entry } else { entries.append(entry) }
        }
    }

    /// Removes an item.
    /// - Returns: Whether the index is up to date.
    @discardableResult
    func remove(_ identifier: String) -> Bool {
        guard let item = Self.itemBytes(identifier) else { return false }
        return change { entries, _ in entries.removeAll { $0.item == item } }
    }

    /// Makes the index hold exactly these items (read from the unlocked collection: items
    /// another program added, changed or deleted enter it here). Writes only when it changed.
    /// - Returns: Whether the index is up to date.
    @discardableResult
    func rebuild(from items: [ItemSummary]) -> Bool {
        change { entries, key in
            entries = items.compactMap { summary in
                Self.itemBytes(summary.identifier).map { Entry(item: $0, hashes: Self.hashes(summary.attributes, key: key)) }
            }
        }
    }

    /// Deletes the index (the collection was deleted).
    func delete() {
        _ = SecItemDelete(baseQuery as CFDictionary)
    }

    /// Loads the index (or starts one with a new key), applies `body` to its entries and
    /// stores it when they changed.
    private func change(_ body: (inout [Entry], [UInt8]) -> Void) -> Bool {
        var contents: Contents
        var isNew = false
        switch load() {
        case .unreadable: return false
        case .loaded(let loaded): contents = loaded
        case .absent:
            _ = sodium_init()
            contents = Contents(key: [UInt8](repeating: 0, count: Self.keyBytes), entries: [])
            contents.key.withUnsafeMutableBytes { buffer in
                if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
            }
            isNew = true
        }
        defer { contents.zero() }
        var entries = contents.entries
        body(&entries, contents.key)
        if !isNew, entries == contents.entries { return true }
        contents.entries = entries
        return store(contents, isNew: isNew)
    }

    // MARK: The index item

    private var baseQuery: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: KeychainCollection.serviceMetadataGroup,
            kSecAttrService as String: Self.service, kSecAttrAccount as String: collection,
        ]
    }

    private func load() -> Loaded {
        var query = baseQuery
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return .absent }
        guard status == errSecSuccess else { return .unreadable }
        var bytes: [UInt8] = []
        if let data = result as? NSData {
            bytes = [UInt8](repeating: 0, count: data.length)
            bytes.withUnsafeMutableBytes { buffer in
                if let base = buffer.baseAddress { data.getBytes(base, length: data.length) }
            }
        } else if let data = result as? Data {
            bytes = [UInt8](data)
        }
        defer { bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        return Self.decode(bytes).map { .loaded($0) } ?? .unreadable
    }

    private func store(_ contents: Contents, isNew: Bool) -> Bool {
        var bytes = Self.encode(contents)
        defer { bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        return bytes.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            // The engine copies the data once into its zeroing buffer; no other copy is made here.
            let data = NSData(bytesNoCopy: base, length: buffer.count, freeWhenDone: false)
            if isNew {
                var add = baseQuery
                add[kSecAttrLabel as String] = "Secret Service attribute index"
                add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
                add[kSecValueData as String] = data
                let status = SecItemAdd(add as CFDictionary, nil)
                if status != errSecDuplicateItem { return status == errSecSuccess }
            }
            return SecItemUpdate(baseQuery as CFDictionary, [kSecValueData as String: data] as CFDictionary) == errSecSuccess
        }
    }

    // MARK: Hashes and encoding

    /// The keyed hashes of an item's attributes, in byte order.
    static func hashes(_ attributes: ItemAttributes, key: [UInt8]) -> [[UInt8]] {
        attributes.entries.map { hash(name: $0.name, value: $0.value, key: key) }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// HMAC-SHA256(key, name length ‖ name ‖ value).
    static func hash(name: ExactName, value: ExactName, key: [UInt8]) -> [UInt8] {
        let name = Array(name.utf8)
        let length = UInt32(name.count)
        let message = [UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff), UInt8(length & 0xff)]
            + name + Array(value.utf8)
        var out = [UInt8](repeating: 0, count: hashBytes)
        // The message has at least its 4 length bytes, the key and the output 32: none is empty.
        out.withUnsafeMutableBufferPointer { output in
            message.withUnsafeBufferPointer { input in
                key.withUnsafeBufferPointer { keyBuffer in
                    guard let output = output.baseAddress, let input = input.baseAddress, let keyBytes = keyBuffer.baseAddress,
                        keyBuffer.count == Self.keyBytes
                    else { return }
                    _ = crypto_auth_hmacsha256(output, input, UInt64(message.count), keyBytes)
                }
            }
        }
        return out
    }

    /// Two hashes compared in constant time.
    static func same(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in sodium_memcmp(left.baseAddress, right.baseAddress, left.count) == 0 } }
    }

    private static func encode(_ contents: Contents) -> [UInt8] {
        var bytes = magic + contents.key
        bytes.reserveCapacity(bytes.count + 4 + contents.entries.reduce(0) { $0 + itemBytes + 4 + $1.hashes.count * hashBytes })
        func put32(_ value: Int) {
            let value = UInt32(value)
            bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
        }
        put32(contents.entries.count)
        for entry in contents.entries {
            bytes += entry.item
            put32(entry.hashes.count)
            for hash in entry.hashes { bytes += hash }
        }
        return bytes
    }

    private static func decode(_ bytes: [UInt8]) -> Contents? {
        guard bytes.starts(with: magic), bytes.count >= magic.count + keyBytes + 4 else { return nil }
        var offset = magic.count
        func take(_ count: Int) -> [UInt8]? {
            guard count >= 0, offset + count <= bytes.count else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }
        func get32() -> Int? { take(4).map { Int($0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) } }
        guard let key = take(keyBytes), let count = get32() else { return nil }
        var entries: [Entry] = []
        for _ in 0..<count {
            guard let item = take(itemBytes), let hashCount = get32(), hashCount <= ItemAttributes.maximumCount else { return nil }
            var hashes: [[UInt8]] = []
            for _ in 0..<hashCount {
                guard let hash = take(hashBytes) else { return nil }
                hashes.append(hash)
            }
            entries.append(Entry(item: item, hashes: hashes))
        }
        guard offset == bytes.count else { return nil }
        return Contents(key: key, entries: entries)
    }

    /// The 16 bytes of an item identifier (32 hex digits), or `nil` for another string.
    static func itemBytes(_ identifier: String) -> [UInt8]? {
        KeychainCollection.persistentReference(identifier).map { Array($0.suffix(itemBytes)) }
    }

    static func identifier(_ item: [UInt8]) -> String {
        KeychainCollection.identifier(Data(item))
    }
}
