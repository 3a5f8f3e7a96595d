import Foundation
import KeychainServices

/// The cost of data protection: how long an unlock takes (Argon2id with the parameters a
/// new passphrase gets), and reading a WhenUnlocked (class A) item against an Always
/// (class D) item of the same keychain, interleaved round by round. Class A reads also
/// look up the unlock secret in the kernel keyring.
enum ProtectionBenchmark {
    static let rounds = 7
    static let readsPerRound = 2_000

    static func rows() -> [BenchmarkRow] {
        let directory = temporaryDirectory("protection")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
        return KeychainEnvironment.withEnvironment(environment) {
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            do {
                try KeychainEnvironment.setPassphrase("benchmark passphrase", old: nil)
            } catch {
                return [skippedRow("unlock (Argon2id)", "could not set a passphrase: \(error)")]
            }
            for (account, accessible) in [("class-a", kSecAttrAccessibleWhenUnlocked), ("class-d", kSecAttrAccessibleAlways)] {
                let add: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.bench",
                    kSecAttrAccount as String: account, kSecAttrAccessible as String: accessible,
                    kSecValueData as String: Data(repeating: 7, count: 200),
                ]
                precondition(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            }
            var unlocks: [Double] = []
            for _ in 0..<3 {
                try? KeychainEnvironment.lock(evictingFirstUnlock: true)
                let start = nanoseconds()
                try? KeychainEnvironment.unlock(passphrase: "benchmark passphrase")
                unlocks.append(Double(nanoseconds() - start))
            }
            precondition(KeychainEnvironment.lockState == .unlocked)
            func query(_ account: String) -> CFDictionary {
                [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.bench",
                    kSecAttrAccount as String: account, kSecReturnData as String: true,
                ] as CFDictionary
            }
            let classA = query("class-a"), classD = query("class-d")
            func time(_ query: CFDictionary) -> Double {
                let start = nanoseconds()
                for _ in 0..<readsPerRound {
                    var result: CFTypeRef?
                    precondition(SecItemCopyMatching(query, &result) == errSecSuccess)
                }
                return Double(nanoseconds() - start) / Double(readsPerRound)
            }
            var aRounds: [Double] = [], dRounds: [Double] = []
            for _ in 0..<rounds {
                aRounds.append(time(classA))
                dRounds.append(time(classD))
            }
            let a = median(aRounds), d = median(dRounds)
            return [
                BenchmarkRow(
                    name: "unlock (Argon2id, 3 passes, 128 MiB)", value: formatDuration(median(unlocks)),
                    baseline: "", ratio: "", target: "0.25 to 0.5 s (info)"),
                BenchmarkRow(
                    name: "read a WhenUnlocked item vs an Always item", value: formatDuration(a),
                    baseline: "class D " + formatDuration(d), ratio: formatRatio(a / d), target: "≤ 1.1x"),
            ]
        }
    }

    /// Untimed, for callgrind (`--only protection-calls a|d COUNT`): `count` reads of one
    /// WhenUnlocked (a) or Always (d) item of an unlocked keychain with a passphrase; the
    /// difference between two counts is the cost of one read of that class.
    static func runCalls(classA: Bool, count: Int) {
        let directory = temporaryDirectory("protection-calls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
        KeychainEnvironment.withEnvironment(environment) {
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            precondition((try? KeychainEnvironment.setPassphrase("benchmark passphrase", old: nil)) != nil)
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.bench",
                kSecAttrAccount as String: "item",
                kSecAttrAccessible as String: classA ? kSecAttrAccessibleWhenUnlocked : kSecAttrAccessibleAlways,
                kSecValueData as String: Data(repeating: 7, count: 200),
            ]
            precondition(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            let query = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.bench",
                kSecAttrAccount as String: "item", kSecReturnData as String: true,
            ] as CFDictionary
            for _ in 0..<count {
                var result: CFTypeRef?
                precondition(SecItemCopyMatching(query, &result) == errSecSuccess)
            }
        }
    }
}
