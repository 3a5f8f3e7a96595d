#if os(Linux)
    import Foundation
    @testable import KeychainServices
    import Keysmith
    import Testing

    /// KeyRetriever's cache and the keychain's lock: a key of a keychain with a passphrase is
    /// not served from memory after the keychain was locked (here, or by another process:
    /// the lock state is in the kernel keyring, so locking here is what another process's
    /// `keysmith lock --all` does).
    struct RetrievalLockedKeychainCacheTests {
        init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

        @Test func aLockedKeychainsKeyIsNotServedFromTheCache() throws {
            try withRetrievalKeychain {
                defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
                try KeychainEnvironment.setPassphrase("retriever pass", old: nil)
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("secret-key".utf8), for: "db_key", version: "1")
                let retriever = KeyRetriever(sources: [source], cacheTimeToLive: nil)
                #expect(try retriever.retrieve("db_key")?.string() == "secret-key")
                // Locked as after a restart (the keychain source stores keys accessible
                // after the first unlock).
                try KeychainEnvironment.lock(evictingFirstUnlock: true)
                let afterLock = Result { try retriever.retrieve("db_key") }
                switch afterLock {
                case .success(let info): #expect(info == nil, "served after the lock: \(String(describing: info))")
                case .failure: break  // the keychain says it is locked
                }
                try KeychainEnvironment.unlock(passphrase: "retriever pass")
                #expect(try retriever.retrieve("db_key")?.string() == "secret-key")
            }
        }

        /// Without a passphrase the keychain never locks: its keys are cached as before.
        @Test func aKeychainWithoutPassphraseIsCachedAsBefore() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("k".utf8), for: "api_key", version: "1")
                let retriever = KeyRetriever(sources: [source], cacheTimeToLive: nil)
                #expect(try retriever.retrieve("api_key")?.string() == "k")
                _ = try source.remove("api_key")
                #expect(try retriever.retrieve("api_key")?.string() == "k")  // from the cache
            }
        }
    }
#endif
