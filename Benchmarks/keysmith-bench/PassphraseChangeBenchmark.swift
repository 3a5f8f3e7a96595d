import Foundation
import KeychainServices

/// A passphrase change on a keychain of `itemCount` items: it replaces the class A and C
/// keys and the passcode key pair and seals every class A and C item again, in one
/// transaction. Measured once (a change is rare), against one unlock of the same keychain
/// (one Argon2id run; the change runs two, for the old and the new passphrase).
struct PassphraseChangeBenchmark {
    let itemCount: Int

    func row() -> BenchmarkRow {
        let name = "passwd on \(itemCount) items (every item sealed again)"
        let directory = temporaryDirectory("passwd-\(itemCount)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
        populateBenchmarkKeychain(environment, itemCount: itemCount, secretSize: 200, label: "passwd")
        return KeychainEnvironment.withEnvironment(environment) {
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            do {
                try KeychainEnvironment.setPassphrase("benchmark passphrase", old: nil)
            } catch {
                return skippedRow(name, "could not set a passphrase: \(error)")
            }
            progress("changing the passphrase of \(itemCount) items")
            let unlockStart = nanoseconds()
            try? KeychainEnvironment.unlock(passphrase: "benchmark passphrase")
            let unlock = Double(nanoseconds() - unlockStart)
            let start = nanoseconds()
            do {
                try KeychainEnvironment.setPassphrase("changed passphrase", old: "benchmark passphrase")
            } catch {
                return skippedRow(name, "the change failed: \(error)")
            }
            let change = Double(nanoseconds() - start)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.bench",
                kSecAttrAccount as String: "account-\(itemCount - 1)", kSecReturnData as String: true,
            ]
            var result: CFTypeRef?
            precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, "an item did not read after the change")
            return BenchmarkRow(
                name: name, value: formatDuration(change), baseline: "unlock " + formatDuration(unlock),
                ratio: formatRatio(change / unlock), target: "info")
        }
    }
}
