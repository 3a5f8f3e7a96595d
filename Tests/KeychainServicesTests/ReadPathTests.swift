// The read path's shortcuts give exactly what the general code gives, on the same inputs.
import Foundation
@testable import KeychainServices
import Testing

struct ReadPathTests {
    /// The general reading of a `pdmn` label: split at "@", then the accessibility and the
    /// machine tag checked (what `KeyHierarchy.protection(forLabel:)` does for any label).
    private func generalProtection(_ label: String, machineTag: String) -> Result<ProtectionClass?, KeyHierarchy.ForeignItem> {
        let parts = label.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let protection = ProtectionClass(rawValue: String(parts[0])) else { return .success(nil) }
        if protection.isThisDeviceOnly {
            guard parts.count == 2 else { return .success(nil) }
            if parts[1] != machineTag { return .failure(KeyHierarchy.ForeignItem()) }
        } else if parts.count != 1 {
            return .success(nil)
        }
        return .success(protection)
    }

    @Test func labelsReadAsTheGeneralReadingReadsThem() throws {
        let keys = try KeyHierarchy(deviceKey: SecretKey.random())
        var labels = ["", "@", "x", "zz", "AK", "ak ", " ak", "a", "akp", "akpuu", "f@", "@ak", "\0ak", "ak\0",
                      "akpuakpuakpu", "\u{212A}", "a\u{0301}k", "dk\u{0301}"]
        for protection in ProtectionClass.allCases {
            let name = protection.rawValue
            labels += [name, name + "@", name + "@" + keys.machineTag, name + "@0000000000000000",
                       name + "@" + keys.machineTag + "@", name + "@@", name + "x"]
        }
        for label in labels {
            let general = generalProtection(label, machineTag: keys.machineTag)
            switch general {
            case .success(let expected):
                #expect(try keys.protection(forLabel: label) == expected, "\(label)")
            case .failure:
                #expect(throws: KeyHierarchy.ForeignItem.self, "\(label)") { try keys.protection(forLabel: label) }
            }
        }
    }
}

/// A search statement is reused by the next search of the same shape on its connection,
/// whatever the last one did: stopped at its first match, found nothing, or ran through.
struct SearchStatementReuseTests {
    @Test func reusedStatementsAnswerEachSearchOnItsOwn() throws {
        try TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] {
                let item = genp("com.example.reuse", account).with(kSecValueData, Data(account.utf8))
                #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            }
            func data(_ account: String) -> Data? {
                var result: CFTypeRef?
                let query = genp("com.example.reuse", account).with(kSecReturnData, true)
                return SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess ? result as? Data : nil
            }
            func count(_ limit: Any) -> Int {
                var result: CFTypeRef?
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.reuse",
                    kSecReturnAttributes as String: true, kSecMatchLimit as String: limit,
                ]
                guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return 0 }
                return (result as? [Any])?.count ?? 1
            }
            for _ in 0..<3 {
                #expect(count(kSecMatchLimitOne) == 1, "stops at the first of three matches")
                #expect(count(kSecMatchLimitAll) == 3)
                #expect(count(kSecMatchLimitOne) == 1)
                #expect(data("b") == Data("b".utf8))
                #expect(data("missing") == nil)
                #expect(data("c") == Data("c".utf8))
                #expect(data("a") == Data("a".utf8))
            }
        }
    }
}
