// keychain-workload: a small program that hammers a keychain through the public SecItem
// API, for the multi-process tests (contention, crash safety). It uses the keychain named
// by KEYSMITH_HOME and the groups in KEYSMITH_ACCESS_GROUPS, like any other program.
//
//   keychain-workload upsert PREFIX COUNT   update-or-add PREFIX-0..COUNT-1, read each back
//   keychain-workload shared KEY ROUNDS     repeatedly upsert one shared item and read it
//   keychain-workload ack-log PREFIX COUNT  add PREFIX-i, then print "ack i" (flushed)
//
// Exit status: 0 when every operation succeeded, 1 otherwise (the failure is on stderr).
import Foundation
import KeychainServices

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("keychain-workload: \(message)\n".utf8))
    exit(1)
}

func query(_ account: String) -> [String: Any] {
    [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: "com.keysmith.workload",
        kSecAttrAccount as String: account,
    ]
}

func upsert(_ account: String, _ value: Data) -> OSStatus {
    let status = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: value] as CFDictionary)
    if status != errSecItemNotFound { return status }
    var add = query(account)
    add[kSecValueData as String] = value
    add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
    let added = SecItemAdd(add as CFDictionary, nil)
    // Another writer may have added it between our update and add: update again.
    if added == errSecDuplicateItem {
        return SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: value] as CFDictionary)
    }
    return added
}

func read(_ account: String) -> (OSStatus, Data?) {
    var lookup = query(account)
    lookup[kSecReturnData as String] = true
    var result: CFTypeRef?
    let status = SecItemCopyMatching(lookup as CFDictionary, &result)
    return (status, result as? Data)
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[3]) else {
    fail("usage: keychain-workload upsert|shared|ack-log NAME COUNT")
}
let name = arguments[2]
switch arguments[1] {
case "upsert":
    for index in 0..<count {
        let account = "\(name)-\(index)"
        let value = Data("value-\(account)".utf8)
        let status = upsert(account, value)
        guard status == errSecSuccess else { fail("upsert \(account): status \(status)") }
        let (readStatus, data) = read(account)
        guard readStatus == errSecSuccess, data == value else { fail("read back \(account): status \(readStatus)") }
    }
case "shared":
    for round in 0..<count {
        let status = upsert(name, Data("round-\(round)".utf8))
        guard status == errSecSuccess else { fail("shared upsert: status \(status)") }
        let (readStatus, data) = read(name)
        guard readStatus == errSecSuccess, let data, String(decoding: data, as: UTF8.self).hasPrefix("round-") else {
            fail("shared read: status \(readStatus)")
        }
    }
case "ack-log":
    for index in 0..<count {
        var add = query("\(name)-\(index)")
        add[kSecValueData as String] = Data("value-\(name)-\(index)".utf8)
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess else { fail("add \(name)-\(index): status \(status)") }
        FileHandle.standardOutput.write(Data("ack \(index)\n".utf8))
    }
default:
    fail("unknown command \(arguments[1])")
}
