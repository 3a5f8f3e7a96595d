#if os(Linux)
    import Foundation
    import KeychainServices
    import Keysmith
    import Testing

    struct RetrievalKeychainKeySourceTests {
        @Test func storeAndLookUpKeepsEveryVersion() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("old".utf8), for: "db_key", version: "2024.06.01")
                try source.store(Data("new".utf8), for: "db_key", version: "2024.07.01")
                let records = try source.lookup("db_key")
                #expect(records.count == 2)
                #expect(Set(records.map(\.version)) == ["2024.06.01", "2024.07.01"])
                let newest = try #require(records.first { $0.version == "2024.07.01" })
                #expect(newest.string() == "new")
                #expect(newest.source == .keychain)
                #expect(newest.matchedName == "db_key")
                #expect(try source.versions(of: "db_key") == ["2024.06.01", "2024.07.01"])
                #expect(try source.identifiers() == ["db_key"])
            }
        }

        @Test func itemsUseTheDocumentedLayout() throws {
            try withRetrievalKeychain {
                let service = retrievalService()
                let source = KeychainKeySource(service: service, accessGroup: "com.example.shared")
                try source.store(Data("k".utf8), for: "api_key", version: "3")
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: service,
                    kSecAttrAccount as String: "api_key@3",
                    kSecReturnAttributes as String: true,
                ]
                var result: CFTypeRef?
                #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
                let attributes = try #require(result as? [String: Any])
                #expect(attributes[kSecAttrLabel as String] as? String == "api_key")
                #expect(attributes[kSecAttrComment as String] as? String == "3")
                #expect(attributes[kSecAttrAccessGroup as String] as? String == "com.example.shared")
                #expect(
                    attributes[kSecAttrAccessible as String] as? String
                        == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String)
            }
        }

        @Test func storingAnExistingVersionReplacesItsBytes() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("first".utf8), for: "k", version: "2024.07.01")
                try source.store(Data("second".utf8), for: "k", version: "2024.7.1")  // the same version
                let records = try source.lookup("k")
                #expect(records.count == 1)
                #expect(records.first?.string() == "second")
                #expect(records.first?.version == "2024.07.01")
            }
        }

        @Test func removeOneVersionAllVersionsAndOlderVersions() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                for version in ["1", "2", "3"] {
                    try source.store(Data("v\(version)".utf8), for: "k", version: version)
                }
                #expect(try source.remove("k", version: "2") == 1)
                #expect(try source.versions(of: "k") == ["1", "3"])
                #expect(try source.removeVersions(of: "k", olderThan: "3") == 1)
                #expect(try source.versions(of: "k") == ["3"])
                #expect(try source.remove("k") == 1)
                #expect(try source.lookup("k").isEmpty)
                #expect(try source.remove("k") == 0)  // nothing left is not an error
            }
        }

        @Test func lookupIsExactAndEmptyForUnknownNames() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("x".utf8), for: "api_key", version: "1")
                #expect(try source.lookup("API_KEY").isEmpty)
                #expect(try source.lookup("api").isEmpty)
                #expect(try source.lookup("missing").isEmpty)
                #expect(try source.lookup("").isEmpty)
            }
        }

        @Test func servicesAreIsolated() throws {
            try withRetrievalKeychain {
                let a = KeychainKeySource(service: retrievalService("a"))
                let b = KeychainKeySource(service: retrievalService("b"))
                try a.store(Data("x".utf8), for: "k", version: "1")
                #expect(try b.lookup("k").isEmpty)
                #expect(try b.identifiers().isEmpty)
            }
        }

        @Test func readsTheOneItemPerKeyLayoutOfSeed000() throws {
            try withRetrievalKeychain {
                let service = retrievalService()
                let attributes: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: service,
                    kSecAttrAccount as String: "legacy_key",
                    kSecAttrComment as String: "2024.06.01",
                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                    kSecValueData as String: Data("legacy".utf8),
                ]
                #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
                let source = KeychainKeySource(service: service)
                let records = try source.lookup("legacy_key")
                #expect(records.count == 1)
                #expect(records.first?.version == "2024.06.01")
                #expect(records.first?.string() == "legacy")
                #expect(try source.identifiers() == ["legacy_key"])
            }
        }

        @Test func rejectsUnusableVersionsAndNames() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                #expect(throws: KeyRetrievalError.self) { try source.store(Data("x".utf8), for: "k", version: "a@b") }
                #expect(throws: KeyRetrievalError.self) { try source.store(Data("x".utf8), for: "k", version: "") }
                #expect(throws: KeyRetrievalError.self) { try source.store(Data("x".utf8), for: "", version: "1") }
                #expect(throws: KeyRetrievalError.self) { try source.store(Data(), for: "k", version: "1") }
            }
        }

        @Test func aGroupTheAppIsNotEntitledToIsAClearError() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService(), accessGroup: "com.other.team")
                do {
                    try source.store(Data("x".utf8), for: "k", version: "1")
                    Issue.record("expected an error")
                } catch let error as KeyRetrievalError {
                    #expect(error.status == errSecMissingEntitlement)
                    #expect(error.description.contains("entitle"))
                }
            }
        }

        @Test func conformsToTheSourceContract() async throws {
            try await withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("secret-1".utf8), for: "api_key", version: "2024.06.01")
                try source.store(Data("secret-2".utf8), for: "api_key", version: "2024.07.01")
                try source.store(Data("other".utf8), for: "signing_key", version: "1")
                try await SourceConformance.check(
                    source, expecting: ["api_key": ["2024.06.01", "2024.07.01"], "signing_key": []])
            }
        }
    }
#endif
