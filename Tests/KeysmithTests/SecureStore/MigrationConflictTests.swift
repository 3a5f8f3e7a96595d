// A migration whose destination already holds a different value is a conflict: both copies
// are kept and the conflict is reported. Only a copy with the same bytes counts as
// "already present" and lets the old copy go.
import Foundation
import Keysmith
import KeychainServices
import Testing

struct MigrationConflictTests {
    @Test func test_migrateService_differentValueInTheDestination_keepsBoth_andReportsAConflict() throws {
        try withTemporaryKeychain {
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("only-copy-of-the-old-secret", for: "token")
            let store = try makeStore()
            try store.set("token", "a-different-secret", in: "auth")

            let report = try store.migrateService(from: oldService, to: "auth")
            #expect(report.conflicts == ["token"])
            #expect(report.alreadyPresent.isEmpty && report.migrated.isEmpty)
            #expect(!report.isComplete)
            #expect(report.description.contains("conflicts 1 (token)"))
            #expect(try old.string(for: "token") == "only-copy-of-the-old-secret")
            #expect(try store.get("token", as: String.self, in: "auth") == "a-different-secret")
        }
    }

    @Test func test_migrateService_sameValueInTheDestination_removesTheOldCopy() throws {
        try withTemporaryKeychain {
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("same", for: "token")
            let store = try makeStore()
            try store.set("token", "same", in: "auth")

            let report = try store.migrateService(from: oldService, to: "auth")
            #expect(report.alreadyPresent == ["token"])
            #expect(report.conflicts.isEmpty)
            #expect(try old.contains("token") == false)
        }
    }

    @Test func test_serviceMigration_betweenStores_conflictKeepsBoth_othersMove() throws {
        try withTemporaryKeychain {
            let source = try KeychainStore(service: uniqueService("source"))
            let destination = try KeychainStore(service: uniqueService("destination"))
            try source.set("one", for: "a")
            try source.set("two", for: "b")
            try destination.set("not-two", for: "b")
            var outcomes: [String: SecureStoreEvent.Outcome] = [:]

            let report = try ServiceMigration(from: source, to: destination).run { outcomes[$0] = $1 }
            #expect(report.migrated == ["a"])
            #expect(report.conflicts == ["b"])
            #expect(try source.string(for: "b") == "two")
            #expect(try destination.string(for: "b") == "not-two")
            #expect(outcomes["b"] == .skipped)
        }
    }

    @Test func test_plaintextDefaults_differentValueInTheKeychain_keepsBoth_andReportsAConflict() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                try store.set("auth_token", "written-by-the-app", in: "auth")
                defaults.set("older-plaintext", forKey: "auth_token")

                let report = try store.migratePlaintext(from: defaults, keys: ["auth_token"], in: "auth")
                #expect(report.conflicts == ["auth_token"])
                #expect(report.alreadyPresent.isEmpty)
                #expect(defaults.string(forKey: "auth_token") == "older-plaintext")
                #expect(try store.get("auth_token", as: String.self, in: "auth") == "written-by-the-app")
            }
        }
    }

    @Test func test_plaintextDefaults_sameValueInTheKeychain_removesThePlaintext() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                try store.set("login_count", 7, in: "auth")
                defaults.set(7, forKey: "login_count")

                let report = try store.migratePlaintext(from: defaults, keys: ["login_count"], in: "auth")
                #expect(report.alreadyPresent == ["login_count"])
                #expect(defaults.object(forKey: "login_count") == nil)
            }
        }
    }

    @Test func test_plaintextFile_differentValueInTheKeychain_staysInTheFile() throws {
        try withTemporaryKeychain {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString).json")
            try Data(#"{"api_key": "sk-old", "other": "x"}"#.utf8).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let store = try makeStore()
            try store.set("api_key", "sk-new", in: "config")

            let report = try store.migratePlaintext(fromFile: url, in: "config")
            #expect(report.conflicts == ["api_key"])
            #expect(report.migrated == ["other"])
            let rest = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            #expect(rest?["api_key"] as? String == "sk-old")
            #expect(rest?["other"] == nil)
            #expect(try store.get("api_key", as: String.self, in: "config") == "sk-new")
        }
    }
}
