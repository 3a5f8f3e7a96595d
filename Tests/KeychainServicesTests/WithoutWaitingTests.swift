// Reads inside KeychainWithoutWaiting.run answer at once or report KeychainWouldWaitStatus:
// they answer (the same as an ordinary read) when the keychain is open and idle, and report
// would-wait when the keychain is not open yet, when another thread holds the write lock
// the read needs, and when an item needs authentication; they never return other data.
import Foundation
import KeychainAuthentication
import Testing
@_spi(Keysmith) @testable import KeychainServices

struct WithoutWaitingTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    private func add(_ account: String, _ value: String, _ extra: [String: Any] = [:]) {
        let status = SecItemAdd(
            genp("svc", account).with([kSecValueData as String: Data(value.utf8)]).with(extra) as CFDictionary, nil)
        #expect(status == errSecSuccess)
    }

    /// One typed read of `account`: its status and data.
    private func read(_ account: String, withoutWaiting: Bool) -> (status: OSStatus, data: Data?) {
        let search = GenericPasswordSearch(service: "svc", account: account, matchesAll: false, returnsData: true)
        var items: [GenericPasswordItem] = []
        let status =
            withoutWaiting
            ? KeychainWithoutWaiting.run { KeychainCopyGenericPasswords(search, &items) }
            : KeychainCopyGenericPasswords(search, &items)
        return (status, items.first?.data)
    }

    /// ``read(_:withoutWaiting:)`` without waiting, made again while it reports
    /// would-wait for the registry lock alone: other tests running in parallel open their
    /// keychains under that process-wide lock, and a read then (rightly) refuses to wait
    /// for it. Every other answer is returned as it came.
    private func readNow(_ account: String) -> (status: OSStatus, data: Data?) {
        var answer = read(account, withoutWaiting: true)
        var attempts = 1
        while answer.status == KeychainWouldWaitStatus,
            KeychainDiagnostics.lastFailureDescription?.contains("registry") == true, attempts < 10_000
        {
            #expect(answer.data == nil)
            Thread.sleep(forTimeInterval: 0.001)
            answer = read(account, withoutWaiting: true)
            attempts += 1
        }
        return answer
    }

    @Test func answersLikeAnOrdinaryReadWhenTheKeychainIsOpenAndIdle() {
        TemporaryKeychain.with { _ in
            add("a", "data-a")
            #expect(read("a", withoutWaiting: false).data == Data("data-a".utf8))  // a read connection in the pool
            for _ in 0..<3 {
                let answer = readNow("a")
                #expect(answer.status == errSecSuccess)
                #expect(answer.data == Data("data-a".utf8))
            }
            #expect(readNow("missing").status == errSecItemNotFound)
            #expect(!KeychainWithoutWaiting.isRequested)
        }
    }

    @Test func wouldWaitWhenTheKeychainIsNotOpenYet() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            add("a", "data-a")
            KeychainEngine.close(directory: keychain.directory)
            let refused = readNow("a")
            #expect(refused.status == KeychainWouldWaitStatus)
            #expect(refused.data == nil)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("not open") == true)
            // The ordinary read opens it; then reads answer without waiting.
            #expect(read("a", withoutWaiting: false).data == Data("data-a".utf8))
            let answered = readNow("a")
            #expect(answered.data == Data("data-a".utf8), "\(answered.status) \(KeychainDiagnostics.lastFailureDescription ?? "")")
        }
    }

    @Test(.timeLimit(.minutes(1))) func wouldWaitWhenAnotherThreadHoldsTheWriteLock() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        try keychain.run {
            add("seed", "x")
            KeychainEngine.close(directory: keychain.directory)
            // A fresh engine, opened by a write: no read connection in its pool, so a read
            // without waiting is answered on the writer, under its lock.
            add("a", "data-a")
            let engine = try KeychainEngine.engine(for: keychain.directory)
            #expect(readNow("a").data == Data("data-a".utf8))

            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let writer = Thread {
                try? engine.writeTransaction { _ in
                    holding.signal()
                    release.wait()
                }
            }
            writer.start()
            holding.wait()
            let refused = readNow("a")
            release.signal()
            #expect(refused.status == KeychainWouldWaitStatus)
            #expect(refused.data == nil)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("write lock") == true)
            // Once the lock is free, the same read answers.
            #expect(read("a", withoutWaiting: false).data == Data("data-a".utf8))
        }
    }

    @Test func wouldWaitWhenTheItemNeedsAuthentication() {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        TemporaryKeychain.with { _ in
            KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
                let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .biometryAny, nil)!
                add("guarded", "pin", [kSecAttrAccessControl as String: control])
                add("plain", "open")
                #expect(read("plain", withoutWaiting: false).data == Data("open".utf8))
                let refused = readNow("guarded")
                #expect(refused.status == KeychainWouldWaitStatus)
                #expect(refused.data == nil)
                #expect(finger.promptCount == 0)  // no prompt from the read that must not wait
                // The ordinary read prompts and answers.
                #expect(read("guarded", withoutWaiting: false).data == Data("pin".utf8))
                #expect(finger.promptCount == 1)
            }
        }
    }

    @Test func aLockedKeychainRefusesAsAnOrdinaryReadDoes() throws {
        try TemporaryKeychain.with { _ in
            add("a", "data-a", [kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked])
            add("b", "data-b", [kSecAttrAccessible as String: kSecAttrAccessibleAlways])
            try KeychainEnvironment.setPassphrase("correct horse", old: nil)
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            #expect(read("b", withoutWaiting: false).data == Data("data-b".utf8))
            let locked = readNow("a")
            #expect(locked.status == errSecInteractionNotAllowed)
            #expect(locked.data == nil)
            #expect(readNow("b").data == Data("data-b".utf8))
            try KeychainEnvironment.unlock(passphrase: "correct horse")
            #expect(readNow("a").data == Data("data-a".utf8))
        }
    }
}
