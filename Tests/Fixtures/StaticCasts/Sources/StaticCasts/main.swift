// Reads keychain items as iOS code does and checks what each cast of the result gives: a
// program linked with the Swift runtime and Foundation built in (--static-swift-stdlib) must
// see the same answers as one linked with the shared libraries. Runs on the keychain named by
// KEYSMITH_HOME; exits 1 after listing every cast that differs.
import Foundation
import KeychainServices
import Keysmith

var mismatches: [String] = []

/// Records a difference from what an iOS program sees.
@MainActor func expect(_ condition: Bool, _ what: String) {
    if !condition { mismatches.append(what) }
}

let service = "com.example.static-casts"
let accounts = ["alice", "bob"]
let secrets = ["alice": Data([0x00, 0x01, 0xFE, 0xFF]), "bob": Data("bob's secret\r\n".utf8)]

let scope: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
SecItemDelete(scope as CFDictionary)
for account in accounts {
    var add = scope
    add[kSecAttrAccount as String] = account
    add[kSecValueData as String] = secrets[account]!
    add[kSecAttrLabel as String] = "label of \(account)"
    let status = SecItemAdd(add as CFDictionary, nil)
    expect(status == errSecSuccess, "SecItemAdd of \(account) gave \(status)")
}

/// What one query returned, with the casts an iOS program makes on it.
struct Shape {
    var array = false  // NSArray, [Any], [AnyObject]
    var dictionaries = false  // [[String: Any]], [NSDictionary]
    var datas = false  // [Data]
    var dictionary = false  // [String: Any], NSDictionary
    var data = false  // Data, NSData
}

@MainActor func read(_ name: String, all: Bool, attributes: Bool, data: Bool, expected: Shape) {
    var query = scope
    if !all { query[kSecAttrAccount as String] = "alice" }
    query[kSecMatchLimit as String] = all ? kSecMatchLimitAll : kSecMatchLimitOne
    if attributes { query[kSecReturnAttributes as String] = kCFBooleanTrue }
    if data { query[kSecReturnData as String] = kCFBooleanTrue }
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    guard status == errSecSuccess else { return expect(false, "\(name): SecItemCopyMatching gave \(status)") }

    func cast(_ description: String, _ value: Any?, _ wanted: Bool) {
        expect((value != nil) == wanted, "\(name): result \(description) gave \(value == nil ? "nil" : "a value"), iOS gives \(wanted ? "a value" : "nil")")
    }
    cast("as? NSArray", result as? NSArray, expected.array)
    cast("as? [Any]", result as? [Any], expected.array)
    cast("as? [AnyObject]", result as? [AnyObject], expected.array)
    cast("as? [[String: Any]]", result as? [[String: Any]], expected.dictionaries)
    cast("as? [NSDictionary]", result as? [NSDictionary], expected.dictionaries)
    cast("as? [Data]", result as? [Data], expected.datas)
    cast("as? [String: Any]", result as? [String: Any], expected.dictionary)
    cast("as? NSDictionary", result as? NSDictionary, expected.dictionary)
    cast("as? Data", result as? Data, expected.data)
    cast("as? NSData", result as? NSData, expected.data)

    // What the rows hold, read as iOS code reads them.
    var rows: [[String: Any]] = []
    if let dictionaries = result as? [[String: Any]] { rows = dictionaries }
    if let dictionary = result as? [String: Any] { rows = [dictionary] }
    if let items = result as? [NSDictionary] {
        expect(items.count == rows.count, "\(name): as? [NSDictionary] has \(items.count) rows, as? [[String: Any]] \(rows.count)")
    }
    if expected.dictionaries || expected.dictionary {
        expect(rows.count == (all ? accounts.count : 1), "\(name): \(rows.count) rows")
        for row in rows {
            guard let account = row[kSecAttrAccount as String] as? String, let secret = secrets[account] else {
                expect(false, "\(name): a row without an account String")
                continue
            }
            expect(row[kSecAttrService as String] as? String == service, "\(name): service as? String")
            expect(row[kSecAttrLabel as String] as? String == "label of \(account)", "\(name): label as? String")
            expect(row[kSecAttrModificationDate as String] as? Date != nil, "\(name): modification date as? Date")
            if data {
                expect(row[kSecValueData as String] as? Data == secret, "\(name): kSecValueData as? Data")
            } else {
                expect(row[kSecValueData as String] == nil, "\(name): kSecValueData without kSecReturnData")
            }
        }
    }
    if expected.datas, let datas = result as? [Data] {
        expect(Set(datas) == Set(secrets.values), "\(name): the secrets of as? [Data]")
    }
    if expected.data {
        expect(result as? Data == secrets["alice"], "\(name): the secret of as? Data")
    }
}

read("match one, attributes", all: false, attributes: true, data: false, expected: Shape(dictionary: true))
read("match one, data", all: false, attributes: false, data: true, expected: Shape(data: true))
read("match one, attributes and data", all: false, attributes: true, data: true, expected: Shape(dictionary: true))
read("match all, attributes", all: true, attributes: true, data: false, expected: Shape(array: true, dictionaries: true))
read("match all, data", all: true, attributes: false, data: true, expected: Shape(array: true, datas: true))
read("match all, attributes and data", all: true, attributes: true, data: true, expected: Shape(array: true, dictionaries: true))

// What SecItemAdd returns for the new item, asked for its attributes.
var add = scope
add[kSecAttrAccount as String] = "carol"
add[kSecValueData as String] = Data("carol".utf8)
add[kSecReturnAttributes as String] = kCFBooleanTrue
var added: CFTypeRef?
expect(SecItemAdd(add as CFDictionary, &added) == errSecSuccess, "SecItemAdd of carol")
expect((added as? [String: Any])?[kSecAttrAccount as String] as? String == "carol", "SecItemAdd's result as? [String: Any]")

// The typed layer's listings.
do {
    let store = try KeychainStore(service: service)
    let keys = try store.allKeys()
    expect(keys == ["alice", "bob", "carol"], "KeychainStore.allKeys() gave \(keys.count) keys")
    let secure = try SecureStore(servicePrefix: "com.example.static-casts.secure")
    try secure.set("a value", for: "token")
    let secureKeys = try secure.keys()
    expect(secureKeys == ["token"], "SecureStore.keys(in:) gave \(secureKeys.count) keys")
} catch {
    expect(false, "the typed layer failed: \(error)")
}

SecItemDelete(scope as CFDictionary)
if mismatches.isEmpty {
    print("StaticCasts: every cast of SecItem results gives what it gives on iOS.")
} else {
    for mismatch in mismatches { FileHandle.standardError.write(Data("StaticCasts: \(mismatch)\n".utf8)) }
    exit(1)
}
