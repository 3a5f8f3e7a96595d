// The protection records (wrapped class keys, passphrase parameters, access-control key
// pairs) as an attacker with the user's files would attack them: records taken from a
// copy of the keychain and planted, swapped or put back into the real one. And a passphrase
// change that replaces the keys, so that a copy from before the change never opens what
// was written after it.
import CSQLite
import Foundation
import KeychainAuthentication
@testable import KeychainServices
import Testing

@Suite(.serialized) struct ProtectionRecordTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    private let secret = Data("protection-canary-51c7".utf8)

    private func passcodeControl(_ accessibility: CFString = kSecAttrAccessibleWhenUnlocked) -> SecAccessControl {
        SecAccessControlCreateWithFlags(nil, accessibility, .devicePasscode, nil)!
    }

    private func read(_ query: [String: Any]) -> (status: OSStatus, data: Data?) {
        let found = secCopy(query.with(kSecReturnData, true))
        return (found.status, asData(found.result))
    }

    /// Copies the keychain directory (what `cp -a` gives: same keychain id, same key file).
    private func copyDirectory(_ directory: URL) throws -> URL {
        let copy = directory.deletingLastPathComponent().appendingPathComponent("copy-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: directory, to: copy)
        return copy
    }

    /// Runs SQL on a keychain database file (the `sqlite3` tool, as in the reproductions).
    private func sql(_ path: String, _ statement: String) {
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        sqlite3_busy_timeout(handle, 5000)
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, statement, nil, nil, &message)
        #expect(code == SQLITE_OK, "\(statement): \(message.map { String(cString: $0) } ?? "")")
        sqlite3_free(message)
    }

    private func database(_ directory: URL) -> String { directory.appendingPathComponent("keychain.db").path }

    /// What the owner does to accept a database as it is (the anchor's way out).
    private func acceptAsItIs(_ directory: URL) {
        FileManager.default.createFile(atPath: directory.appendingPathComponent(RollbackAnchor.resetFileName).path, contents: nil)
    }

    // MARK: Planted protection records

    /// The review's reproduction: an unbound `acl.p` made in a copy without the passphrase
    /// row, planted in the real keychain while it is open and unlocked. Storing a
    /// `.devicePasscode` item must not seal it to that key; an authenticator that always says
    /// yes must not read it.
    @Test func passcodeKeyPlantedFromACopyIsRefused() throws {
        try TemporaryKeychain.with { keychain in
            let victim = keychain.directory
            try KeychainEnvironment.setPassphrase("victimpass", old: nil)
            #expect(secAdd(genp("s", "before").with(kSecValueData, Data("x".utf8))) == errSecSuccess)
            // The attacker's copy: no passphrase row, no passcode key; the copy is accepted
            // as it is by its owner (the attacker) and gets an unbound passcode key.
            let copy = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: copy) }
            sql(database(copy), "DELETE FROM protection WHERE name IN ('passphrase', 'acl.p')")
            acceptAsItIs(copy)
            try KeychainEnvironment.withEnvironment(KeychainEnvironment(directory: copy, accessGroups: keychain.accessGroups)) {
                let added = secAdd(genp("j", "j").with([
                    kSecAttrAccessControl as String: passcodeControl(kSecAttrAccessibleAlways), kSecValueData as String: Data("j".utf8),
                ]))
                #expect(added == errSecSuccess)
            }
            KeychainEngine.close(directory: copy)
            sql(database(victim), """
                ATTACH '\(database(copy))' AS m;
                DELETE FROM protection WHERE name = 'acl.p';
                INSERT INTO protection SELECT * FROM m.protection WHERE name = 'acl.p';
                """)
            // Still open in this process: the planted key is not used.
            let stored = secAdd(genp("bank", "pin").with([
                kSecAttrAccessControl as String: passcodeControl(), kSecValueData as String: secret,
            ]))
            #expect(stored == errSecDecode)
            let yes = ScriptedAuthenticator(factor: .passcode, outcomes: [.success, .success, .success])
            KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([yes])) {
                #expect(read(genp("bank", "pin")).data != secret)
            }
            // A new open refuses the database as a whole.
            KeychainEngine.close(directory: victim)
            #expect(read(genp("s", "before")).status == errSecDecode)
            KeychainEngine.close(directory: victim)
        }
    }

    /// An unbound passcode key record in a keychain with a passphrase is damage even when
    /// the owner accepted the database as it is (the anchor then vouches for it).
    @Test func unboundPasscodeKeyInAPassphraseKeychainIsDamageEvenWhenAccepted() throws {
        try TemporaryKeychain.with { keychain in
            let victim = keychain.directory
            // acl.p made before the passphrase (unbound), kept aside.
            #expect(secAdd(genp("early", "early").with([
                kSecAttrAccessControl as String: passcodeControl(kSecAttrAccessibleAlways), kSecValueData as String: Data("e".utf8),
            ])) == errSecSuccess)
            let before = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: before) }
            try KeychainEnvironment.setPassphrase("victimpass", old: nil)
            KeychainEngine.close(directory: victim)
            sql(database(victim), """
                ATTACH '\(database(before))' AS old;
                DELETE FROM protection WHERE name = 'acl.p';
                INSERT INTO protection SELECT * FROM old.protection WHERE name = 'acl.p';
                """)
            acceptAsItIs(victim)
            let stored = secAdd(genp("bank", "pin").with([
                kSecAttrAccessControl as String: passcodeControl(), kSecValueData as String: secret,
            ]))
            #expect(stored == errSecDecode)
            let yes = ScriptedAuthenticator(factor: .passcode, outcomes: [.success])
            KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([yes])) {
                #expect(read(genp("early", "early")).data == nil)
            }
            KeychainEngine.close(directory: victim)
        }
    }

    /// A class key record from a copy without the passphrase, accepted by the owner, opens
    /// nothing in a keychain with a passphrase, and nothing is written under it.
    @Test func unboundClassKeyInAPassphraseKeychainIsDamage() throws {
        try TemporaryKeychain.with { keychain in
            let victim = keychain.directory
            #expect(secAdd(genp("s", "first").with(kSecValueData, Data("x".utf8))) == errSecSuccess)
            let before = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: before) }
            try KeychainEnvironment.setPassphrase("victimpass", old: nil)
            KeychainEngine.close(directory: victim)
            sql(database(victim), """
                ATTACH '\(database(before))' AS old;
                DELETE FROM protection WHERE name = 'key.a';
                INSERT INTO protection SELECT * FROM old.protection WHERE name = 'key.a';
                """)
            acceptAsItIs(victim)
            #expect(read(genp("s", "first")).status == errSecDecode)
            let added = secAdd(genp("s", "after").with(kSecValueData, secret))
            #expect(added == errSecDecode)
            KeychainEngine.close(directory: victim)
        }
    }

    /// Records put back from an older copy of the same keychain, while the keychain is not
    /// open: the next open refuses the database (the anchor covers the records).
    @Test func recordsPutBackAloneAreRefusedAtOpen() throws {
        try TemporaryKeychain.with { keychain in
            let victim = keychain.directory
            try KeychainEnvironment.setPassphrase("first", old: nil)
            #expect(secAdd(genp("s", "a").with(kSecValueData, Data("x".utf8))) == errSecSuccess)
            let before = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: before) }
            try KeychainEnvironment.setPassphrase("second", old: "first")
            KeychainEngine.close(directory: victim)
            sql(database(victim), """
                ATTACH '\(database(before))' AS old;
                DELETE FROM protection;
                INSERT INTO protection SELECT * FROM old.protection;
                """)
            let status = read(genp("s", "a")).status
            #expect(status == errSecDecode)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("rolled back or changed outside Keysmith") == true)
            KeychainEngine.close(directory: victim)
        }
    }

    // MARK: A passphrase change replaces the keys

    /// First reproduction: the first passphrase set after items exist. With the old
    /// protection rows put back, an item written after the change does not read, not even
    /// with the lock state kept in the process (nothing unlocked).
    @Test func firstPassphraseReplacesTheKeys() throws {
        try TemporaryKeychain.with { keychain in
            let victim = keychain.directory
            #expect(secAdd(genp("s", "first").with(kSecValueData, Data("x".utf8))) == errSecSuccess)
            let old = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: old) }
            try KeychainEnvironment.setPassphrase("newpass", old: nil)
            #expect(secAdd(genp("s", "after").with([
                kSecValueData as String: secret, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
            ])) == errSecSuccess)
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            KeychainEngine.close(directory: victim)
            sql(database(victim), """
                ATTACH '\(database(old))' AS old;
                DELETE FROM protection WHERE name IN ('key.a', 'key.c', 'passphrase', 'acl.p');
                INSERT INTO protection SELECT * FROM old.protection WHERE name IN ('key.a', 'key.c', 'passphrase', 'acl.p');
                """)
            // Even accepted on purpose (so the anchor is out of the way), the old keys do not
            // open what was written after the change.
            acceptAsItIs(victim)
            let found = read(genp("s", "after"))
            #expect(found.data != secret)
            #expect(found.status != errSecSuccess)
            KeychainEngine.close(directory: victim)
        }
    }

    /// Second reproduction: the passphrase changed (it leaked). A copy from before the
    /// change, with the old passphrase, opens nothing written after it; the current files
    /// open nothing with the old passphrase.
    @Test func changedPassphraseReplacesTheKeys() throws {
        try TemporaryKeychain.with { keychain in
            let victim = keychain.directory
            try KeychainEnvironment.setPassphrase("leaked", old: nil)
            #expect(secAdd(genp("s", "before").with(kSecValueData, Data("b".utf8))) == errSecSuccess)
            #expect(secAdd(genp("s", "pin-before").with([
                kSecAttrAccessControl as String: passcodeControl(kSecAttrAccessibleAlways), kSecValueData as String: Data("p".utf8),
            ])) == errSecSuccess)
            let old = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: old) }
            let oldRecords = try ProtectionStore(path: database(old)).load()
            try KeychainEnvironment.setPassphrase("fresh", old: "leaked")
            let newRecords = try ProtectionStore(path: database(victim)).load()
            // Fresh class A and C keys and a fresh passcode key pair.
            #expect(oldRecords.wrapped[.a] != newRecords.wrapped[.a])
            #expect(oldRecords.wrapped[.c] != newRecords.wrapped[.c])
            #expect(oldRecords.wrapped[.d] == newRecords.wrapped[.d])
            #expect(AccessControlKeys.publicKey(oldRecords.accessControl[.passcode]!) != AccessControlKeys.publicKey(newRecords.accessControl[.passcode]!))
            #expect(secAdd(genp("s", "after").with(kSecValueData, secret)) == errSecSuccess)
            #expect(secAdd(genp("s", "pin-after").with([
                kSecAttrAccessControl as String: passcodeControl(kSecAttrAccessibleAlways), kSecValueData as String: secret,
            ])) == errSecSuccess)
            // Everything reads with the new passphrase.
            #expect(read(genp("s", "before")).data == Data("b".utf8))
            #expect(read(genp("s", "after")).data == secret)
            let (fresh, _) = PassphraseReader.scripted(["fresh", "fresh"])
            KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([KeychainPassphraseAuthenticator(reader: fresh)])) {
                #expect(read(genp("s", "pin-before")).data == Data("p".utf8))
                #expect(read(genp("s", "pin-after")).data == secret)
            }

            // The old copy's records put into today's database, with the old passphrase.
            let victimRows = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: victimRows) }
            sql(database(victimRows), """
                ATTACH '\(database(old))' AS old;
                DELETE FROM protection;
                INSERT INTO protection SELECT * FROM old.protection;
                """)
            acceptAsItIs(victimRows)
            try KeychainEnvironment.withEnvironment(KeychainEnvironment(directory: victimRows, accessGroups: keychain.accessGroups)) {
                try KeychainEnvironment.unlock(passphrase: "leaked")
                #expect(read(genp("s", "after")).data == nil)
                #expect(read(genp("s", "before")).data == nil)  // sealed again under the new keys
                let (leaked, _) = PassphraseReader.scripted(["leaked"])
                KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([KeychainPassphraseAuthenticator(reader: leaked)])) {
                    #expect(read(genp("s", "pin-after")).data == nil)
                }
            }
            KeychainEngine.close(directory: victimRows)
            // Today's files open nothing with the old passphrase.
            KeychainEngine.close(directory: victim)
            #expect(throws: (any Error).self) { try KeychainEnvironment.unlock(passphrase: "leaked") }
            KeychainEngine.close(directory: victim)
        }
    }

    /// Removing the passphrase replaces the keys too: a copy with the passphrase cannot
    /// open what is written afterwards, and every item stays readable.
    @Test func removingThePassphraseReplacesTheKeys() throws {
        try TemporaryKeychain.with { keychain in
            let victim = keychain.directory
            try KeychainEnvironment.setPassphrase("gone", old: nil)
            #expect(secAdd(genp("s", "before").with(kSecValueData, Data("b".utf8))) == errSecSuccess)
            let old = try ProtectionStore(path: database(victim)).load()
            let copy = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: copy) }
            try KeychainEnvironment.setPassphrase(nil, old: "gone")
            let now = try ProtectionStore(path: database(victim)).load()
            #expect(now.passphrase == nil)
            #expect(old.wrapped[.a] != now.wrapped[.a])
            #expect(old.wrapped[.c] != now.wrapped[.c])
            #expect(AccessControlKeys.isBound(now.accessControl[.passcode]!) == false)
            #expect(read(genp("s", "before")).data == Data("b".utf8))
            #expect(secAdd(genp("s", "after").with(kSecValueData, secret)) == errSecSuccess)
            #expect(read(genp("s", "after")).data == secret)
            // Today's rows with the copy's records (the passphrase's wraps): with the old
            // passphrase, the item written after the removal does not open.
            KeychainEngine.close(directory: victim)
            let today = try copyDirectory(victim)
            defer { try? FileManager.default.removeItem(at: today) }
            sql(database(today), """
                ATTACH '\(database(copy))' AS old;
                DELETE FROM protection;
                INSERT INTO protection SELECT * FROM old.protection;
                """)
            acceptAsItIs(today)
            try KeychainEnvironment.withEnvironment(KeychainEnvironment(directory: today, accessGroups: keychain.accessGroups)) {
                try KeychainEnvironment.unlock(passphrase: "gone")
                #expect(read(genp("s", "after")).data == nil)
            }
            KeychainEngine.close(directory: today)
        }
    }

    /// An item whose passcode route also needs an application password cannot be moved
    /// to a new passphrase: the change is refused and nothing changes.
    @Test func passcodeRouteThatAlsoNeedsAnApplicationPasswordRefusesTheChange() throws {
        try TemporaryKeychain.with { keychain in
            try KeychainEnvironment.setPassphrase("one", old: nil)
            let context = LAContext()
            _ = context.setCredential(Data("app-pw".utf8), type: .applicationPassword)
            let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.devicePasscode, .and, .applicationPassword], nil)!
            #expect(secAdd(genp("s", "both").with([
                kSecAttrAccessControl as String: control, kSecValueData as String: secret,
                kSecUseAuthenticationContext as String: context,
            ])) == errSecSuccess)
            let before = try ProtectionStore(path: database(keychain.directory)).load()
            #expect(throws: (any Error).self) { try KeychainEnvironment.setPassphrase("two", old: "one") }
            #expect(try ProtectionStore(path: database(keychain.directory)).load() == before)
            try KeychainEnvironment.unlock(passphrase: "one")
        }
    }
}
