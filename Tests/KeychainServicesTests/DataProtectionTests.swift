import Foundation
import Testing
@testable import KeychainServices
import CSQLite

/// Lock state, class keys and the passphrase: what each accessibility promises, checked
/// through the public SecItem API on real keychains in temporary directories.
@Suite struct DataProtectionTests {
    init() {
        // Tests set many passphrases: the minimum Argon2id cost keeps them fast.
        PassphraseKey.fastForTesting.store(true, ordering: .relaxed)
    }

    static let classA = ["ak", "aku", "akpu"]
    static let classC = ["ck", "cku"]
    static let classD = ["dk", "dku"]
    static let all = classA + classC + classD

    enum State: String, CaseIterable { case beforeFirstUnlock, locked, unlocked }

    static func available(_ pdmn: String, _ state: State) -> Bool {
        switch state {
        case .unlocked: return true
        case .locked: return !classA.contains(pdmn)
        case .beforeFirstUnlock: return classD.contains(pdmn)
        }
    }

    func item(_ pdmn: String, _ account: String, _ data: String? = nil) -> [String: Any] {
        var query = genp("com.example.protection", "\(account)-\(pdmn)")
        if let data {
            query[kSecAttrAccessible as String] = pdmn
            query[kSecValueData as String] = Data(data.utf8)
        }
        return query
    }

    func read(_ query: [String: Any]) -> (OSStatus, String?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query.with(kSecReturnData, true) as CFDictionary, &result)
        return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
    }

    func enter(_ state: State, passphrase: String) throws {
        switch state {
        case .unlocked:
            try KeychainEnvironment.unlock(passphrase: passphrase)
        case .locked:
            try KeychainEnvironment.unlock(passphrase: passphrase)
            try KeychainEnvironment.lock()
        case .beforeFirstUnlock:
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
        }
        #expect(KeychainEnvironment.lockState == {
            switch state {
            case .unlocked: return .unlocked
            case .locked: return .locked
            case .beforeFirstUnlock: return .beforeFirstUnlock
            }
        }())
    }

    /// Every class × lock state × operation, as on iOS: unavailable classes answer
    /// errSecInteractionNotAllowed (before any duplicate check) and nothing changes.
    @Test func lockMatrix() throws {
        try TemporaryKeychain.with { _ in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            try KeychainEnvironment.setPassphrase("correct horse", old: nil)
            #expect(KeychainEnvironment.lockState == .unlocked)
            for state in State.allCases {
                // Set up while unlocked: one item to read, update and collide with, one to delete.
                try enter(.unlocked, passphrase: "correct horse")
                for pdmn in Self.all {
                    #expect(SecItemAdd(item(pdmn, "existing-\(state)", "original") as CFDictionary, nil) == errSecSuccess)
                    #expect(SecItemAdd(item(pdmn, "victim-\(state)", "victim") as CFDictionary, nil) == errSecSuccess)
                }
                try enter(state, passphrase: "correct horse")
                for pdmn in Self.all {
                    let ok = Self.available(pdmn, state)
                    let context = Comment(rawValue: "\(pdmn) \(state)")
                    // add (new), and add of an existing item: the lock comes before the duplicate.
                    #expect(SecItemAdd(item(pdmn, "new-\(state)", "new") as CFDictionary, nil)
                        == (ok ? errSecSuccess : errSecInteractionNotAllowed), context)
                    #expect(SecItemAdd(item(pdmn, "existing-\(state)", "again") as CFDictionary, nil)
                        == (ok ? errSecDuplicateItem : errSecInteractionNotAllowed), context)
                    let (status, value) = read(item(pdmn, "existing-\(state)"))
                    #expect(status == (ok ? errSecSuccess : errSecInteractionNotAllowed), context)
                    #expect(value == (ok ? "original" : nil), context)
                    let update = SecItemUpdate(
                        item(pdmn, "existing-\(state)") as CFDictionary, [kSecValueData as String: Data("updated".utf8)] as CFDictionary)
                    #expect(update == (ok ? errSecSuccess : errSecInteractionNotAllowed), context)
                    #expect(SecItemDelete(item(pdmn, "victim-\(state)") as CFDictionary)
                        == (ok ? errSecSuccess : errSecInteractionNotAllowed), context)
                }
                // Nothing changed for the refused calls.
                try enter(.unlocked, passphrase: "correct horse")
                for pdmn in Self.all {
                    let ok = Self.available(pdmn, state)
                    let context = Comment(rawValue: "\(pdmn) \(state) afterwards")
                    #expect(read(item(pdmn, "existing-\(state)")).1 == (ok ? "updated" : "original"), context)
                    #expect(read(item(pdmn, "victim-\(state)")).0 == (ok ? errSecItemNotFound : errSecSuccess), context)
                    #expect(read(item(pdmn, "new-\(state)")).0 == (ok ? errSecSuccess : errSecItemNotFound), context)
                }
            }
        }
    }

    /// A search over several classes while locked fails as a whole (as on iOS) rather than
    /// returning part of the matches.
    @Test func lockedSearchAcrossClassesFails() throws {
        try TemporaryKeychain.with { _ in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            #expect(SecItemAdd(item("dk", "x", "d") as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(item("ak", "x", "a") as CFDictionary, nil) == errSecSuccess)
            try KeychainEnvironment.lock()
            let all = genp("com.example.protection").filter { $0.key != kSecAttrAccount as String }
                .with([kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true])
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecInteractionNotAllowed)
        }
    }

    @Test func withoutPassphraseEverythingIsAvailableAndLockChangesNothing() throws {
        try TemporaryKeychain.with { _ in
            #expect(KeychainEnvironment.lockState == .unlocked)
            #expect(!KeychainEnvironment.hasPassphrase)
            for pdmn in Self.classA.filter({ $0 != "akpu" }) + Self.classC + Self.classD {
                #expect(SecItemAdd(item(pdmn, "x", "v") as CFDictionary, nil) == errSecSuccess)
            }
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            #expect(KeychainEnvironment.lockState == .unlocked)
            #expect(read(item("ak", "x")).1 == "v")
            // WhenPasscodeSetThisDeviceOnly needs a passphrase.
            #expect(SecItemAdd(item("akpu", "x", "v") as CFDictionary, nil) == errSecNotAvailable)
        }
    }

    @Test func wrongPassphraseThrowsAndChangesNothing() throws {
        try TemporaryKeychain.with { _ in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            try KeychainEnvironment.setPassphrase("right", old: nil)
            #expect(SecItemAdd(item("ak", "x", "v") as CFDictionary, nil) == errSecSuccess)
            try KeychainEnvironment.lock()
            #expect(throws: KeychainStateError.self) { try KeychainEnvironment.unlock(passphrase: "wrong") }
            do {
                try KeychainEnvironment.unlock(passphrase: "wrong")
            } catch let error as KeychainStateError {
                #expect(error.status == errSecAuthFailed)
                #expect(!error.description.contains("wrong"))
            }
            #expect(KeychainEnvironment.lockState == .locked)
            #expect(read(item("ak", "x")).0 == errSecInteractionNotAllowed)
            // A wrong old passphrase cannot change or remove it either.
            #expect(throws: KeychainStateError.self) { try KeychainEnvironment.setPassphrase("new", old: "wrong") }
            #expect(throws: KeychainStateError.self) { try KeychainEnvironment.setPassphrase(nil, old: "wrong") }
            #expect(throws: KeychainStateError.self) { try KeychainEnvironment.setPassphrase("new", old: nil) }
            try KeychainEnvironment.unlock(passphrase: "right")
            #expect(read(item("ak", "x")).1 == "v")
        }
    }

    /// Changing the passphrase replaces the class A and C keys: those items' stored bytes
    /// are sealed again (class D rows stay as they were), the old passphrase stops working,
    /// the new one works.
    @Test func changingPassphraseSealsClassAAndCItemsAgain() throws {
        try TemporaryKeychain.with { keychain in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            try KeychainEnvironment.setPassphrase("first", old: nil)
            for pdmn in Self.all {
                #expect(SecItemAdd(item(pdmn, "x", "value-\(pdmn)") as CFDictionary, nil) == errSecSuccess)
            }
            let before = try rows(keychain)
            try KeychainEnvironment.setPassphrase("second", old: "first")
            #expect(KeychainEnvironment.lockState == .unlocked)
            let after = try rows(keychain)
            #expect(after.count == before.count)
            for (old, new) in zip(before, after) {
                let pdmn = String(old.split(separator: "|")[1].split(separator: "@")[0])
                if Self.classD.contains(pdmn) { #expect(old == new, "\(pdmn)") } else { #expect(old != new, "\(pdmn)") }
            }
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            #expect(throws: KeychainStateError.self) { try KeychainEnvironment.unlock(passphrase: "first") }
            try KeychainEnvironment.unlock(passphrase: "second")
            for pdmn in Self.all { #expect(read(item(pdmn, "x")).1 == "value-\(pdmn)") }
        }
    }

    /// Removing the passphrase deletes the WhenPasscodeSetThisDeviceOnly items and only
    /// those; the keychain is then always unlocked.
    @Test func removingPassphraseDeletesOnlyPasscodeItems() throws {
        try TemporaryKeychain.with { _ in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            for pdmn in Self.all {
                #expect(SecItemAdd(item(pdmn, "x", "value-\(pdmn)") as CFDictionary, nil) == errSecSuccess)
            }
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            try KeychainEnvironment.setPassphrase(nil, old: "pw")
            #expect(!KeychainEnvironment.hasPassphrase)
            #expect(KeychainEnvironment.lockState == .unlocked)
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            #expect(KeychainEnvironment.lockState == .unlocked)
            for pdmn in Self.all where pdmn != "akpu" { #expect(read(item(pdmn, "x")).1 == "value-\(pdmn)") }
            #expect(read(item("akpu", "x")).0 == errSecItemNotFound)
            #expect(try KeychainEnvironment.itemCountsByAccessibility()["akpu"] == nil)
            #expect(SecItemAdd(item("akpu", "y", "v") as CFDictionary, nil) == errSecNotAvailable)
        }
    }

    /// The unlock secret lives outside the process: a second engine on the same keychain
    /// (as another process would open it) sees the same lock state.
    @Test func lockStateIsSharedAcrossEngines() throws {
        try TemporaryKeychain.with { keychain in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            #expect(SecItemAdd(item("ak", "x", "v") as CFDictionary, nil) == errSecSuccess)
            try KeychainEnvironment.lock()
            KeychainEngine.close(directory: keychain.directory)
            #expect(KeychainEnvironment.lockState == .locked)
            let other = try KeychainEngine(directory: keychain.directory)
            try KeychainEnvironment.unlock(passphrase: "pw")
            #expect(other.keys.lockState == .unlocked)
            other.lock(evictingFirstUnlock: false)
            #expect(KeychainEnvironment.lockState == .locked)
            #expect(read(item("ak", "x")).0 == errSecInteractionNotAllowed)
        }
    }

    /// A passphrase set by another process (an engine of its own on the same keychain)
    /// reaches the read connections of a process that read class A items before it: they
    /// read the new protection records, so a lock then refuses those items at once.
    @Test func passphraseSetByAnotherProcessReachesReadConnectionsThatReadBefore() throws {
        try TemporaryKeychain.with { keychain in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            #expect(SecItemAdd(item("ak", "x", "v") as CFDictionary, nil) == errSecSuccess)
            for _ in 0..<3 { #expect(read(item("ak", "x")) == (errSecSuccess, "v")) }
            let other = try KeychainEngine(directory: keychain.directory)
            try other.keys.setPassphrase("pw", old: nil, timeout: nil, transaction: other.writeTransaction)
            #expect(read(item("ak", "x")) == (errSecSuccess, "v"))
            other.keys.lock(evictingFirstUnlock: false)
            #expect(read(item("ak", "x")).0 == errSecInteractionNotAllowed)
            #expect(read(item("ak", "x")).0 == errSecInteractionNotAllowed)
            try other.keys.unlock(passphrase: "pw", timeout: nil)
            #expect(read(item("ak", "x")) == (errSecSuccess, "v"))
            // Removed again by the other process: readable without the keyring's secret.
            try other.keys.setPassphrase(nil, old: "pw", timeout: nil, transaction: other.writeTransaction)
            other.keys.lock(evictingFirstUnlock: true)
            #expect(read(item("ak", "x")) == (errSecSuccess, "v"))
        }
    }

    /// The items' stored rows (id, label, nonce, ciphertext), to compare before and after.
    /// - Throws: when the database cannot be opened or read (never an empty answer instead).
    func rows(_ keychain: TemporaryKeychain) throws -> [String] {
        var handle: OpaquePointer?
        let path = keychain.directory.appendingPathComponent("keychain.db").path
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, "cannot open \(path)")
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        try #require(
            sqlite3_prepare_v2(handle, "SELECT id, pdmn, hex(nonce), hex(ciphertext) FROM items ORDER BY id", -1, &statement, nil) == SQLITE_OK,
            "cannot read the items of \(path)")
        var rows: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append((0..<4).map { String(cString: sqlite3_column_text(statement, $0)) }.joined(separator: "|"))
        }
        return rows
    }
}

extension KeychainEngine {
    /// Locks through this engine's hierarchy (a test shorthand).
    func lock(evictingFirstUnlock: Bool) { keys.lock(evictingFirstUnlock: evictingFirstUnlock) }
}

extension DataProtectionTests {
    /// The wrapped class keys are kept in a table indexed by class: every class has its own
    /// position, and a keychain's records round-trip through it.
    @Test func everyKeyClassHasItsOwnPositionInTheTables() {
        let classes = KeyHierarchy.KeyClass.allCases
        #expect(classes.map(\.index) == Array(0..<classes.count))
        var wrapped = WrappedClassKeys()
        for keyClass in classes { wrapped[keyClass] = Data(keyClass.rawValue.utf8) }
        for keyClass in classes { #expect(wrapped[keyClass] == Data(keyClass.rawValue.utf8)) }
        var other = wrapped
        other[classes[0]] = nil
        #expect(other != wrapped)
        #expect(other[classes[0]] == nil)
    }
}
