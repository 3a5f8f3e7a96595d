import Foundation
import Keysmith
import KeychainServices

/// The collections made with `CreateCollection`: each is an access group of its own
/// (`keysmith.secret-service.ID`), described by one item in it (service
/// `org.freedesktop.Secret.Collection`, account ID, the collection's label as its label;
/// accessible after the first unlock, so the collection is listed while the keychain is locked).
enum KeychainCollectionDirectory {
    /// The access group of a created collection.
    static func accessGroup(_ identifier: String) -> String { "keysmith.secret-service.\(identifier)" }

    /// The collections created before (none while the keychain has not been unlocked since
    /// the machine started: their descriptions are readable after the first unlock).
    static func created() -> [KeychainCollection] {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: KeychainCollection.collectionMetadataService,
            kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: kCFBooleanTrue as Any,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let found = result as? [[String: Any]] else { return [] }
        return found.compactMap { dictionary in
            guard let identifier = dictionary[kSecAttrAccount as String] as? String,
                let group = dictionary[kSecAttrAccessGroup as String] as? String,
                ExactName(group) == ExactName(accessGroup(identifier)),
                identifier.utf8.allSatisfy(SecretServiceServer.isPathCharacter)
            else { return nil }
            let created = UInt64(max(0, (dictionary[kSecAttrCreationDate as String] as? Date)?.timeIntervalSince1970 ?? 0))
            return KeychainCollection(
                identifier: identifier, accessGroup: group, label: dictionary[kSecAttrLabel as String] as? String ?? identifier,
                created: created, metadataAccount: identifier)
        }.sorted { ExactName($0.identifier) < ExactName($1.identifier) }
    }

    /// Lets this process read and write every keychain collection's access group.
    static func grantAccess(_ collections: [any SecretCollection]) {
        let groups = collections.compactMap { ($0 as? KeychainCollection)?.accessGroup }
        KeychainEnvironment.accessGroups = groups + [KeychainCollection.serviceMetadataGroup, "*"]
    }

    /// Makes a new collection: an identifier from the label, its access group and description.
    static func create(label: String, taken: [String]) throws(SecretServiceError) -> KeychainCollection {
        var base = String(decoding: label.utf8.map { SecretServiceServer.isPathCharacter($0) ? $0 : UInt8(ascii: "_") }.prefix(64), as: UTF8.self)
        if base.isEmpty { base = "collection" }
        var identifier = base
        var counter = 1
        while taken.contains(where: { ObjectPath.same($0, identifier) }) || ObjectPath.same(identifier, "login") || ObjectPath.same(identifier, "session") {
            counter += 1
            identifier = "\(base)\(counter)"
        }
        let group = accessGroup(identifier)
        var groups = KeychainEnvironment.accessGroups
        groups.insert(group, at: 0)
        KeychainEnvironment.accessGroups = groups
        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: group,
            kSecAttrService as String: KeychainCollection.collectionMetadataService, kSecAttrAccount as String: identifier,
            kSecAttrLabel as String: label, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
            kSecValueData as String: Data(),
        ]
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess || status == errSecDuplicateItem else {
            throw KeychainCollection.failure(status, "the collection could not be created")
        }
        return KeychainCollection(identifier: identifier, accessGroup: group, label: label, created: KeychainCollection.now, metadataAccount: identifier)
    }
}
