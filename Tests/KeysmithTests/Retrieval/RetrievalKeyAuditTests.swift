import Foundation
import Keysmith
import Testing

struct RetrievalKeyAuditTests {
    @Test func listsEveryCopyAndTheOneThatWins() throws {
        let keychain = RetrievalCountingSource(.keychain, ["api_key": [("2024.06.01", "a"), ("2024.07.01", "b")]])
        let config = RetrievalCountingSource(
            .configFile, ["apiKey": [("builtin", "c")], "maps_key": [("builtin", "m")]])
        let retriever = makeRetrievalRetriever([keychain, config])
        let audit = try retriever.audit()
        #expect(audit.entries.map(\.identifier) == ["api_key", "maps_key"])
        let api = try #require(audit.entry("api_key"))
        #expect(api.copyCount == 2)
        #expect(api.effective?.source == .keychain)
        #expect(api.effective?.versions == ["2024.06.01", "2024.07.01"])
        #expect(api.effectiveVersion == "2024.07.01")
        #expect(api.shadowed.map(\.name) == ["apiKey"])
        #expect(api.warnings.isEmpty)
        #expect(audit.entry("maps_key")?.effective?.source == .configFile)
        #expect(audit.description.contains("2 keys, 3 copies"))
    }

    @Test func warnsAboutSensitiveKeysInPlaintextSources() throws {
        let keychain = RetrievalCountingSource(.keychain, ["db_key": [("1", "secure")]])
        let config = RetrievalCountingSource(
            .configFile, ["db_key": [("1", "secure")]], description: "ConfigFile(plist)")
        let retriever = makeRetrievalRetriever([keychain, config], policy: KeyPolicy(sensitive: ["db_key"]))
        let entry = try #require(try retriever.audit().entry("db_key"))
        #expect(entry.isSensitive)
        #expect(
            entry.warnings.contains {
                if case .sensitiveKeyInPlaintextSource(_, .configFile, _) = $0 { return true } else { return false }
            })
    }

    @Test func warnsWhenSourcesDisagreeOnTheVersion() throws {
        let keychain = RetrievalCountingSource(.keychain, ["k": [("2024.07.01", "new")]])
        let config = RetrievalCountingSource(.configFile, ["k": [("2024.06.01", "old")]])
        let entry = try #require(try makeRetrievalRetriever([keychain, config]).audit().entry("k"))
        #expect(entry.warnings.contains { if case .versionsDisagree = $0 { return true } else { return false } })
    }

    @Test func anUnversionedFallbackIsNotADisagreement() throws {
        let keychain = RetrievalCountingSource(.keychain, ["k": [("2024.07.01", "new")]])
        let config = RetrievalCountingSource(.configFile, ["k": [("builtin", "old")]])
        let entry = try #require(try makeRetrievalRetriever([keychain, config]).audit().entry("k"))
        #expect(entry.warnings.isEmpty)
    }

    @Test func warnsWhenOneVersionHasDifferentBytes() throws {
        let keychain = RetrievalCountingSource(.keychain, ["k": [("2", "one")]])
        let config = RetrievalCountingSource(.configFile, ["k": [("2.0", "two")]])
        let entry = try #require(try makeRetrievalRetriever([keychain, config]).audit().entry("k"))
        #expect(
            entry.warnings.contains { if case .differentKeysForSameVersion = $0 { return true } else { return false } })
    }

    @Test func warnsAboutKeysStoredOnlyUnderATestOrProdSuffix() throws {
        let config = RetrievalCountingSource(
            .configFile, ["apple_pay_secret_test": [("1", "x")], "ok_key": [("1", "y")]])
        let audit = try makeRetrievalRetriever([config]).audit()
        #expect(
            audit.entry("apple_pay_secret_test")?.warnings.contains {
                if case .onlyUnderEnvironmentSuffix = $0 { return true } else { return false }
            } == true)
        #expect(audit.entry("ok_key")?.warnings.isEmpty == true)
    }

    @Test func warnsAboutKeysThisBuildCannotSee() throws {
        let environment = EnvironmentKeySource(prefix: "XY", environment: ["XY_DEBUG_TOKEN": "t"])
        let audit = try makeRetrievalRetriever([environment], environment: .release).audit()
        let entry = try #require(audit.entry("debug_token"))
        #expect(entry.effective == nil)
        #expect(entry.shadowed.first?.isConsulted == false)
        #expect(entry.warnings.contains { if case .notServedInThisBuild = $0 { return true } else { return false } })
    }

    @Test func aSourceThatCannotBeListedIsReportedNotFatal() throws {
        let config = RetrievalCountingSource(.configFile, ["k": [("1", "x")]])
        let audit = try makeRetrievalRetriever([RetrievalFailingSource(kind: .keychain), config]).audit()
        #expect(audit.entry("k")?.effective?.source == .configFile)
        #expect(audit.sourceWarnings.count == 1)
        #expect(audit.warnings.count == 1)
    }

    @Test func auditFailsOnlyWhenNoSourceCanBeListed() {
        let retriever = makeRetrievalRetriever([RetrievalFailingSource(kind: .keychain)])
        #expect(throws: KeyRetrievalError.self) { try retriever.audit() }
    }
}
