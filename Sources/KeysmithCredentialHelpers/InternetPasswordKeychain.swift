import Foundation
import KeychainServices

/// The SecItem calls both helpers make on internet passwords, with a result per call
/// instead of an `OSStatus`.
///
/// Every call is one SecItem call, which the keychain applies whole or not at all: a helper
/// never leaves half an item behind.
enum InternetPasswordKeychain {
    /// An item as the keychain returned it: attributes by Apple tag, and the data when asked.
    typealias Item = [String: Any]

    /// The items that match `query` (every match), with their data when `data` is true;
    /// empty when nothing matches.
    /// - Throws: ``HelperFailure`` for any failure other than "not found".
    static func items(matching query: [String: Any], data: Bool, action: String) throws(HelperFailure) -> [Item] {
        var search = query
        search[kSecClass as String] = kSecClassInternetPassword as String
        search[kSecMatchLimit as String] = kSecMatchLimitAll as String
        search[kSecReturnAttributes as String] = kCFBooleanTrue
        if data { search[kSecReturnData as String] = kCFBooleanTrue }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess else { throw HelperFailure.keychain(action, status) }
        if let array = result as? [Item] { return array }
        if let array = result as? NSArray { return array.compactMap { $0 as? Item } }
        if let one = result as? Item { return [one] }
        return []
    }

    /// Adds an item with `attributes`; when an item with the same primary key exists,
    /// updates that one item's `changes` instead.
    /// - Parameters:
    ///   - attributes: The whole new item (class added here), data included.
    ///   - existing: The query that selects exactly the item `attributes` would collide with.
    ///   - changes: What to change on that item (data, label, ...).
    ///   - action: What the helper is doing, for the message.
    /// - Throws: ``HelperFailure`` when the keychain refuses both.
    static func addOrUpdate(
        _ attributes: [String: Any], existing: [String: Any], changes: [String: Any], action: String
    ) throws(HelperFailure) {
        var add = attributes
        add[kSecClass as String] = kSecClassInternetPassword as String
        let status = SecItemAdd(add as CFDictionary, nil)
        if status == errSecSuccess { return }
        guard status == errSecDuplicateItem else { throw HelperFailure.keychain(action, status) }
        var query = existing
        query[kSecClass as String] = kSecClassInternetPassword as String
        let updated = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
        guard updated == errSecSuccess else { throw HelperFailure.keychain(action, updated) }
    }

    /// Deletes exactly `item`, a dictionary returned by ``items(matching:data:action:)``:
    /// the query names every primary-key attribute it has, so no other item can match.
    /// - Returns: Whether an item was deleted (false when it was already gone).
    /// - Throws: ``HelperFailure`` when the keychain refuses.
    @discardableResult
    static func delete(exactly item: Item, action: String) throws(HelperFailure) -> Bool {
        var query: [String: Any] = [kSecClass as String: kSecClassInternetPassword as String]
        for tag in primaryKeyTags {
            if let value = item[tag] { query[tag] = value }
        }
        let status = SecItemDelete(query as CFDictionary)
        if status == errSecItemNotFound { return false }
        guard status == errSecSuccess else { throw HelperFailure.keychain(action, status) }
        return true
    }

    /// The attributes that identify an internet password (Apple's primary key for the class).
    static let primaryKeyTags: [String] = [
        kSecAttrServer as String, kSecAttrProtocol as String, kSecAttrPort as String, kSecAttrPath as String,
        kSecAttrAccount as String, kSecAttrSecurityDomain as String, kSecAttrAuthenticationType as String,
        kSecAttrAccessGroup as String, kSecAttrSynchronizable as String,
    ]

    /// A string attribute of `item`.
    static func string(_ item: Item, _ tag: CFString) -> String? {
        item[tag as String] as? String
    }

    /// The port of `item` (0 when it has none).
    static func port(_ item: Item) -> Int {
        if let number = item[kSecAttrPort as String] as? NSNumber { return number.intValue }
        if let number = item[kSecAttrPort as String] as? Int { return number }
        return 0
    }

    /// The data of `item` (empty when it has none).
    static func data(_ item: Item) -> Data {
        (item[kSecValueData as String] as? Data) ?? Data()
    }
}
