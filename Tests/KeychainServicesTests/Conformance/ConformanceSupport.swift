import Foundation
import KeychainServices
import Testing

// Small helpers shared by the conformance suite. They call the public SecItem API exactly
// as iOS app code does (`query as CFDictionary`, `var result: CFTypeRef?`) and only unwrap
// the results; they never interpret keychain semantics themselves.

typealias Query = [String: Any]

/// Builds a query/attribute dictionary from `kSec…` constants.
func item(_ itemClass: CFString?, _ attributes: [CFString: Any] = [:]) -> Query {
    var query: Query = [:]
    if let itemClass { query[kSecClass as String] = itemClass }
    for (key, value) in attributes { query[key as String] = value }
    return query
}

/// An internet password: server + account (+ protocol HTTPS by default).
func inet(_ server: String = "example.com", _ account: String = "alice") -> Query {
    item(kSecClassInternetPassword, [kSecAttrServer: server, kSecAttrAccount: account])
}

/// A certificate item described by its primary-key attributes only.
func certItem(serial: String = "01", issuer: String = "CN=Example CA") -> Query {
    item(kSecClassCertificate, [
        kSecAttrCertificateType: 1,
        kSecAttrIssuer: Data(issuer.utf8),
        kSecAttrSerialNumber: Data(serial.utf8),
    ])
}

/// A key item described by some of its primary-key attributes.
func keyItem(tag: String = "com.example.key", applicationLabel: String = "label-1") -> Query {
    item(kSecClassKey, [
        kSecAttrKeyClass: kSecAttrKeyClassPrivate,
        kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom,
        kSecAttrKeySizeInBits: 256,
        kSecAttrApplicationTag: Data(tag.utf8),
        kSecAttrApplicationLabel: Data(applicationLabel.utf8),
    ])
}

// MARK: - Calls

func secAdd(_ attributes: Query) -> OSStatus {
    SecItemAdd(attributes as CFDictionary, nil)
}

func secAddReturning(_ attributes: Query) -> (status: OSStatus, result: CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemAdd(attributes as CFDictionary, &result)
    return (status, result)
}

func secCopy(_ query: Query) -> (status: OSStatus, result: CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    return (status, result)
}

func secUpdate(_ query: Query, _ changes: Query) -> OSStatus {
    SecItemUpdate(query as CFDictionary, changes as CFDictionary)
}

func secDelete(_ query: Query) -> OSStatus {
    SecItemDelete(query as CFDictionary)
}

/// SecItemAdd/Update/Delete etc. with an `NSDictionary` built by hand (non-string keys).
func secAdd(raw: NSDictionary) -> OSStatus { SecItemAdd(raw, nil) }

// MARK: - Unwrapping results

func asDictionary(_ value: Any?) -> [String: Any]? {
    if let dictionary = value as? NSDictionary {
        var out: [String: Any] = [:]
        for (key, element) in dictionary {
            if let key = key as? String { out[key] = element } else if let key = key as? NSString { out[key as String] = element }
        }
        return out
    }
    return value as? [String: Any]
}

func asArray(_ value: Any?) -> [Any]? {
    if let array = value as? NSArray { return array.map { $0 } }
    return value as? [Any]
}

func asData(_ value: Any?) -> Data? {
    if let data = value as? NSData { return data as Data }
    return value as? Data
}

func asString(_ value: Any?) -> String? {
    if value is NSNumber { return nil }
    if let string = value as? NSString { return string as String }
    return value as? String
}

func asNumber(_ value: Any?) -> Int? {
    if let number = value as? NSNumber { return number.intValue }
    return value as? Int
}

func asDate(_ value: Any?) -> Date? {
    if let date = value as? NSDate { return date as Date }
    return value as? Date
}

/// The attribute dictionary of the first match (LimitOne), or nil when none.
func attrsOf(_ query: Query) -> [String: Any]? {
    let (status, result) = secCopy(query.with(kSecReturnAttributes, true))
    guard status == errSecSuccess else { return nil }
    return asDictionary(result)
}

/// The attribute dictionaries of every match (LimitAll), empty when none.
func allAttributes(of query: Query) -> [[String: Any]] {
    let (status, result) = secCopy(query.with([
        kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
    ]))
    guard status == errSecSuccess, let array = asArray(result) else { return [] }
    return array.compactMap { asDictionary($0) }
}

/// How many items match `query` (LimitAll).
func matchCount(_ query: Query) -> Int { allAttributes(of: query).count }

/// The secret of the first match, or nil.
func secret(of query: Query) -> Data? {
    let (status, result) = secCopy(query.with(kSecReturnData, true))
    guard status == errSecSuccess else { return nil }
    return asData(result)
}

/// The persistent reference of the first match, or nil.
func persistentRef(of query: Query) -> Data? {
    let (status, result) = secCopy(query.with(kSecReturnPersistentRef, true))
    guard status == errSecSuccess else { return nil }
    return asData(result)
}

/// A fixed, non-secret test secret.
func testSecret(_ tag: String = "s3cret") -> Data { Data("pw-\(tag)".utf8) }

/// Keys that the reference says never appear in a plain attribute dictionary.
let valueKeys = ["v_Data", "v_Ref", "v_PersistentRef"]

/// Namespace of the conformance suite (so `swift test --filter Conformance` selects it).
enum Conformance {}
