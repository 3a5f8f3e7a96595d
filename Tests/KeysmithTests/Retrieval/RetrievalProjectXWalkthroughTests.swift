#if os(Linux)
    import Foundation
    import KeychainServices
    import Keysmith
    import Testing

    /// Seed 000, section 4: the "Project X" walkthrough, on a real temporary keychain and a
    /// real Keys.plist on disk. Each test is one step of the walkthrough.
    struct RetrievalProjectXWalkthroughTests {
        /// Project X's Keys.plist: `api_key` in the recommended nested form without a
        /// version (so `builtin`, as in the seed's log line), plus a non-sensitive maps key.
        private func writeKeysPlist(in directory: URL, apiKey: String? = "plist-api-key") throws -> URL {
            var plist: [String: Any] = ["maps_key": "maps-text-key"]
            if let apiKey { plist["api_key"] = ["value": Data(apiKey.utf8).base64EncodedString()] }
            let url = directory.appendingPathComponent("Keys.plist")
            try writeRetrievalPlist(plist, to: url)
            return url
        }

        private struct Project {
            let keychain: KeychainKeySource
            let retriever: KeyRetriever
            let log: RetrievalLogCollector
        }

        /// Sets up Project X's retriever: Keychain -> Keys.plist -> environment (prefix XY).
        private func project(
            _ directory: URL, apiKeyInPlist: Bool = true, environment: KeyRetriever.BuildEnvironment = .debug,
            variables: [String: String] = [:], policy: KeyPolicy = .none
        ) throws -> Project {
            let keychain = KeychainKeySource(service: retrievalService("com.xyproject.keyservice"))
            let config = try ConfigFileKeySource(
                url: writeKeysPlist(in: directory, apiKey: apiKeyInPlist ? "plist-api-key" : nil))
            let log = RetrievalLogCollector()
            let retriever = KeyRetriever(
                sources: [keychain, config, EnvironmentKeySource(prefix: "XY", environment: variables)],
                environment: environment, policy: policy, logging: log.logging, notificationCenter: nil)
            return Project(keychain: keychain, retriever: retriever, log: log)
        }

        @Test func step1_warmUpFindsThePlistCopyWhenTheKeychainIsEmpty() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(directory)
                let info = try #require(try x.retriever.retrieve("api_key"))
                #expect(info.source == .configFile)
                #expect(info.sourceDescription == "ConfigFile(plist)")
                #expect(info.version == "builtin")
                #expect(info.string() == "plist-api-key")
                // The seed's launch log line, and never the key.
                #expect(
                    x.log.events.map(\.description) == [
                        "[KeyRetriever] api_key loaded from ConfigFile(plist), version=builtin [debug]"
                    ])
            }
        }

        @Test func step2_keychainOnly() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(directory, apiKeyInPlist: false)
                try x.keychain.store(Data("keychain-api-key".utf8), for: "api_key", version: "2024.06.01")
                let info = try #require(try x.retriever.retrieve("api_key"))
                #expect(info.sourceDescription == "Keychain")
                #expect(info.string() == "keychain-api-key")
            }
        }

        @Test func step2_keychainAndPlistTheKeychainWins() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(directory)
                try x.keychain.store(Data("keychain-api-key".utf8), for: "api_key", version: "2024.06.01")
                let info = try #require(try x.retriever.retrieve("api_key"))
                #expect(info.source == .keychain)
                #expect(info.version == "2024.06.01")
                #expect(x.log.events.first?.description.contains("loaded from Keychain") == true)
            }
        }

        @Test func step3_rotationKeepsBothVersionsAndMinVersionPicksTheNewOne() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(directory)
                let oldKey = Data((0..<32).map { UInt8($0) })
                let newKey = Data((0..<32).map { UInt8(255 - $0) })
                try x.keychain.store(oldKey, for: "data_key", version: "2024.06.01")
                // Data encrypted with the old key, before the rotation.
                let plaintext = Data("customer record".utf8)
                let sealed = Data(zip(plaintext, oldKey.prefix(plaintext.count)).map { $0 ^ $1 })

                try x.keychain.store(newKey, for: "data_key", version: "2024.07.01")
                #expect(try x.keychain.versions(of: "data_key") == ["2024.06.01", "2024.07.01"])

                #expect(try x.retriever.retrieve("data_key")?.version == "2024.07.01")
                #expect(
                    try x.retriever.retrieve("data_key", minVersion: "2024.07.01")?.hasSameMaterial(as: newKey) == true)
                #expect(try x.retriever.retrieve("data_key", minVersion: "2024.7.2") == nil)
                // The old key is still there for the old data.
                let old = try #require(try x.retriever.retrieve("data_key", version: "2024.06.01"))
                #expect(Data(zip(sealed, old.data).map { $0 ^ $1 }) == plaintext)

                // Once the old data is re-encrypted, the old version can go.
                #expect(try x.keychain.removeVersions(of: "data_key", olderThan: "2024.07.01") == 1)
                x.retriever.clearCache()
                #expect(try x.retriever.retrieve("data_key", version: "2024.06.01") == nil)
            }
        }

        @Test func step4_changingThePriorityChangesTheWinnerAtOnce() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(directory)
                try x.keychain.store(Data("keychain-api-key".utf8), for: "api_key", version: "2024.06.01")
                #expect(try x.retriever.retrieve("api_key")?.source == .keychain)
                try x.retriever.setSourcePriority([.configFile, .keychain])
                #expect(try x.retriever.retrieve("api_key")?.source == .configFile)
                // The trace says why the plaintext copy wins (seed 5.4, first row).
                #expect(
                    x.retriever.explain("api_key").hints.contains { $0.contains("Keychain is not consulted first") })
            }
        }

        @Test func step5_environmentVariablesAreSkippedInRelease() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let variables = ["XY_DEBUG_HOST_TOKEN": "scheme-token"]
                let debug = try project(directory, environment: .debug, variables: variables)
                #expect(try debug.retriever.retrieve("debug_host_token")?.source == .environment)
                let release = try project(directory, environment: .release, variables: variables)
                #expect(try release.retriever.retrieve("debug_host_token") == nil)
            }
        }

        @Test func step6_candidatesBridgeSpellingsAndEnvironmentSuffixes() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(directory)
                try x.keychain.store(Data("pay".utf8), for: "apple_pay_secret", version: "1")
                #expect(try x.retriever.retrieve("apiKey")?.matchedName == "api_key")
                let pay = try #require(try x.retriever.retrieve("apple_pay_secret_test"))
                #expect(pay.matchedName == "apple_pay_secret")
                #expect(pay.source == .keychain)
                #expect(try x.retriever.retrieve("api") == nil)  // nothing fuzzy
            }
        }

        @Test func step7_versionsCompareNumerically() {
            #expect(KeyVersion("2024.7.1") > KeyVersion("2024.6.30"))
            #expect(KeyVersion("2024.07.01") == KeyVersion("2024.7.1"))
        }

        @Test func step8_theAuditOfProjectX() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(
                    directory, variables: ["XY_API_KEY": "env-api-key"], policy: KeyPolicy(sensitive: ["data_key"]))
                try x.keychain.store(Data("keychain-api-key".utf8), for: "api_key", version: "2024.06.01")
                try x.keychain.store(Data("k1".utf8), for: "data_key", version: "2024.06.01")
                try x.keychain.store(Data("k2".utf8), for: "data_key", version: "2024.07.01")
                let audit = try x.retriever.audit()
                #expect(audit.entries.map(\.identifier) == ["api_key", "data_key", "maps_key"])

                let api = try #require(audit.entry("api_key"))
                #expect(api.copyCount == 3)
                #expect(api.effective?.sourceDescription == "Keychain")
                #expect(api.shadowed.map(\.sourceDescription) == ["ConfigFile(plist)", "Environment"])

                let data = try #require(audit.entry("data_key"))
                #expect(data.isSensitive)
                #expect(data.copyCount == 1)
                #expect(data.effective?.versions == ["2024.06.01", "2024.07.01"])
                #expect(data.warnings.isEmpty)

                #expect(audit.entry("maps_key")?.effective?.sourceDescription == "ConfigFile(plist)")
                #expect(audit.description.contains("3 keys, 5 copies"))
            }
        }

        @Test func step9_sensitiveKeysNeverComeFromThePlistInRelease() throws {
            let directory = try makeRetrievalDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try withRetrievalKeychain {
                let x = try project(directory, environment: .release, policy: KeyPolicy(sensitive: ["api_key"]))
                #expect(throws: KeyRetrievalError.self) { try x.retriever.retrieve("api_key") }
                try x.keychain.store(Data("keychain-api-key".utf8), for: "api_key", version: "2024.06.01")
                #expect(try x.retriever.retrieve("api_key")?.source == .keychain)
                let audit = try x.retriever.audit()
                #expect(
                    audit.entry("api_key")?.warnings.contains {
                        if case .sensitiveKeyInPlaintextSource = $0 { return true } else { return false }
                    } == true)
            }
        }
    }
#endif
