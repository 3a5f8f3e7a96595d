// "Already present" lets a migration delete the old copy, so it must mean the very same
// value. Values that only read alike (numbers that round to the same Double, text with
// other spacing) are different values: a conflict, and both copies stay.
import Foundation
import Keysmith
import KeychainServices
import Testing

struct MigrationExactValueTests {
    /// Pairs of different stored texts that JSON would read as the same number or value.
    static let lookAlikes: [(keychain: String, plaintext: String)] = [
        ("3.14159265358979323846", "3.14159265358979323847"),  // digits beyond what a number holds
        ("1.1", "1.10"),  // a version string
        ("1", "1.0"),
        ("100", "1e2"),
        ("true", " true"),
    ]

    @Test(arguments: 0..<lookAlikes.count)
    func test_plaintextDefaults_aLookAlikeValue_isAConflict_andThePlaintextStays(index: Int) throws {
        let (kept, plaintext) = Self.lookAlikes[index]
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                try store.set(kept, for: "account_number", in: "auth")
                defaults.set(plaintext, forKey: "account_number")

                let report = try store.migratePlaintext(from: defaults, keys: ["account_number"], in: "auth")
                #expect(report.conflicts == ["account_number"], "\(report)")
                #expect(report.alreadyPresent.isEmpty)
                #expect(defaults.string(forKey: "account_number") == plaintext, "the only copy of the plaintext value was deleted")
                #expect(try store.string(for: "account_number", in: "auth") == kept)
            }
        }
    }

    @Test func test_plaintextFile_aLookAlikeVersion_staysInTheFile() throws {
        try withTemporaryKeychain {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).json")
            try Data(#"{"min_version": "2.10"}"#.utf8).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let store = try makeStore()
            try store.set("2.1", for: "min_version", in: "config")

            let report = try store.migratePlaintext(fromFile: url, in: "config")
            #expect(report.conflicts == ["min_version"], "\(report)")
            let rest = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            #expect(rest?["min_version"] as? String == "2.10")
        }
    }

    @Test func test_plaintextDefaults_theSameNumber_isAlreadyPresent() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                try store.set(["a": 1, "b": 2], for: "limits", in: "auth")
                defaults.set(["b": 2, "a": 1], forKey: "limits")

                let report = try store.migratePlaintext(from: defaults, keys: ["limits"], in: "auth")
                #expect(report.alreadyPresent == ["limits"], "\(report)")
                #expect(defaults.object(forKey: "limits") == nil)
            }
        }
    }
}
