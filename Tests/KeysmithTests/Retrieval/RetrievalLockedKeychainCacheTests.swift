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

        /// A key cached while the keychain had no passphrase: the passphrase set since, and the
        /// keychain locked, it is not served from memory either.
        @Test func aKeyCachedBeforeThePassphraseIsNotServedAfterALock() throws {
            try withRetrievalKeychain {
                defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("secret-key".utf8), for: "db_key", version: "1")
                let retriever = KeyRetriever(sources: [source], cacheTimeToLive: nil)
                #expect(try retriever.retrieve("db_key")?.string() == "secret-key")
                try KeychainEnvironment.setPassphrase("retriever pass", old: nil)
                try KeychainEnvironment.lock(evictingFirstUnlock: true)
                switch Result(catching: { try retriever.retrieve("db_key") }) {
                case .success(let info): #expect(info == nil, "served after the lock: \(String(describing: info))")
                case .failure: break
                }
            }
        }

        /// Without a passphrase the keychain never locks: its keys are cached as before.
        @Test func aKeychainWithoutPassphraseIsCachedAsBefore() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("k".utf8), for: "api_key", version: "1")
                // Its own notification center: a lock in a test running alongside (which
                // clears the caches of retrievers on the process's center) cannot reach it.
                let retriever = KeyRetriever(sources: [source], cacheTimeToLive: nil, notificationCenter: NotificationCenter())
                #expect(try retriever.retrieve("api_key")?.string() == "k")
                _ = try source.remove("api_key")
                #expect(try retriever.retrieve("api_key")?.string() == "k")  // from the cache
            }
        }

        /// A key behind access control is never served from the cache: each lookup is an
        /// evaluation of its policy, even in a keychain without a passphrase and with a time
        /// to live. A refused evaluation refuses the lookup that follows a good one.
        @Test func anAccessControlledKeyIsEvaluatedAtEveryLookup() throws {
            let finger = ScriptedAuthenticator(outcomes: [.success, .success, .cancel])
            try withRetrievalKeychain {
                try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) { () throws in
                    let service = retrievalService()
                    let control = SecAccessControlCreateWithFlags(
                        nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .userPresence, nil)!
                    let add: [String: Any] = [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                        kSecAttrAccount as String: "payment_pin", kSecAttrAccessControl as String: control,
                        kSecValueData as String: Data("4711".utf8),
                    ]
                    #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
                    let retriever = KeyRetriever(
                        sources: [KeychainKeySource(service: service)], cacheTimeToLive: .seconds(300))
                    #expect(try retriever.retrieve("payment_pin")?.string() == "4711")
                    #expect(try retriever.retrieve("payment_pin")?.string() == "4711")
                    #expect(finger.promptCount == 2, "the second lookup was served without an evaluation")
                    let refused = Result { try retriever.retrieve("payment_pin") }
                    if case .success(let info?) = refused {
                        Issue.record("served after a refused evaluation: \(info)")
                    }
                    #expect(finger.promptCount == 3)
                }
            }
        }
    }
#endif
