// Keychain code as it is written for Apple platforms in a file that imports only
// Foundation. It compiles here because the target imports KeychainServices implicitly
// (see Package.swift), and runs on the keychain named by KEYSMITH_HOME.
import Foundation

/// Fails the run with a message (a fixture has no test framework).
func check(_ condition: Bool, _ message: String) {
    if !condition {
        FileHandle.standardError.write(Data("ImplicitImport: \(message)\n".utf8))
        exit(1)
    }
}

let service = "com.example.implicit-import"
var query: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: service,
    kSecAttrAccount as String: "alice",
]

// Results ignored, as tutorials do: imported C functions' results are discardable.
SecItemDelete(query as CFDictionary)

var key = [UInt8](repeating: 0, count: 32)
check(SecRandomCopyBytes(kSecRandomDefault, key.count, &key) == errSecSuccess, "SecRandomCopyBytes failed")

var add = query
add[kSecValueData as String] = Data(key)
add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
check(SecItemAdd(add as CFDictionary, nil) == noErr, "SecItemAdd failed")

var result: CFTypeRef?
var read = query
read[kSecReturnData as String] = kCFBooleanTrue
read[kSecMatchLimit as String] = kSecMatchLimitOne
check(SecItemCopyMatching(read as CFDictionary, &result) == errSecSuccess, "SecItemCopyMatching failed")
check(result as? Data == Data(key), "the key read back differs")

SecItemUpdate(query as CFDictionary, [kSecAttrLabel as String: "implicit"] as CFDictionary)

// A portable wrapper's removeAll(): Linux compiles the macOS branch.
var removeAll: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
#if !os(iOS) && !os(watchOS) && !os(tvOS)
removeAll[kSecMatchLimit as String] = kSecMatchLimitAll
#endif
check(SecItemDelete(removeAll as CFDictionary) == errSecSuccess, "removeAll failed")
check(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound, "the item survived removeAll")
print("ImplicitImport: keychain code that imports only Foundation compiled and ran.")
