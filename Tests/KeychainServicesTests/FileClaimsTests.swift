// The keychain files' promises, each checked against the real files: symbolic links are
// refused, a newer schema is refused and left as it is, a database others can read is
// refused, names and descriptive attributes are not stored in plaintext, and edits of the
// plaintext columns (class, protection class, sync flag, access group hash) never make an
// item show up as something it is not.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct FileClaimsTests {
    private func readData(_ query: [String: Any]) -> (OSStatus, Data?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query.with(kSecReturnData, true) as CFDictionary, &result)
        return (status, result as? Data)
    }

    private func databasePath(_ keychain: TemporaryKeychain) -> String {
        keychain.directory.appendingPathComponent("keychain.db").path
    }

    /// Creates the keychain with one item, closes it and folds the log into the main file.
    private func makeClosedKeychain(_ keychain: TemporaryKeychain, secret: String = "kept") {
        keychain.run {
            #expect(SecItemAdd(genp().with(kSecValueData, Data(secret.utf8)) as CFDictionary, nil) == errSecSuccess)
        }
        KeychainEngine.close(directory: keychain.directory)
        RawKeychainFile(keychain).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    // MARK: Symbolic links

    @Test func symbolicLinkAsTheDatabaseIsRefusedAndItsTargetUntouched() throws {
        let keychain = TemporaryKeychain()
        let elsewhere = TemporaryKeychain()
        defer { keychain.remove(); elsewhere.remove() }
        makeClosedKeychain(keychain)
        try FileManager.default.createDirectory(at: elsewhere.directory, withIntermediateDirectories: true)
        let database = databasePath(keychain)
        let target = elsewhere.directory.appendingPathComponent("moved.db").path
        try FileManager.default.moveItem(atPath: database, toPath: target)
        try FileManager.default.createSymbolicLink(atPath: database, withDestinationPath: target)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        keychain.run {
            let (status, data) = readData(genp())
            #expect(status == errSecNotAvailable, "a database that is a symbolic link was opened: \(status)")
            #expect(data == nil)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("symbolic link") == true,
                    "\(KeychainDiagnostics.lastFailureDescription ?? "no diagnostic")")
            #expect(SecItemAdd(genp("s", "new").with(kSecValueData, Data("x".utf8)) as CFDictionary, nil) != errSecSuccess)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before, "the link's target was modified")
        #expect(!FileManager.default.fileExists(atPath: target + "-wal"), "a log was created next to the link's target")
    }

    @Test func danglingSymbolicLinkAsTheDatabaseCreatesNothingAtItsTarget() throws {
        let keychain = TemporaryKeychain()
        let elsewhere = TemporaryKeychain()
        defer { keychain.remove(); elsewhere.remove() }
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        chmod(keychain.directory.path, 0o700)
        try FileManager.default.createDirectory(at: elsewhere.directory, withIntermediateDirectories: true)
        let target = elsewhere.directory.appendingPathComponent("planted.db").path
        try FileManager.default.createSymbolicLink(atPath: databasePath(keychain), withDestinationPath: target)
        keychain.run {
            #expect(SecItemAdd(genp().with(kSecValueData, Data("x".utf8)) as CFDictionary, nil) != errSecSuccess)
        }
        #expect(!FileManager.default.fileExists(atPath: target), "the keychain was created at the link's target")
    }

    @Test func symbolicLinkAsTheKeyFileIsRefused() throws {
        let keychain = TemporaryKeychain()
        let elsewhere = TemporaryKeychain()
        defer { keychain.remove(); elsewhere.remove() }
        makeClosedKeychain(keychain)
        try FileManager.default.createDirectory(at: elsewhere.directory, withIntermediateDirectories: true)
        let keyFile = keychain.directory.appendingPathComponent("device.key").path
        let target = elsewhere.directory.appendingPathComponent("device.key").path
        try FileManager.default.moveItem(atPath: keyFile, toPath: target)
        try FileManager.default.createSymbolicLink(atPath: keyFile, withDestinationPath: target)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        keychain.run {
            let (status, data) = readData(genp())
            #expect(status != errSecSuccess, "a key file that is a symbolic link was used")
            #expect(data == nil)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
        #expect(FileManager.default.fileExists(atPath: keyFile), "the link was replaced")
    }

    // MARK: Schema and modes

    @Test func newerSchemaIsRefusedAndLeftAsItIs() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        makeClosedKeychain(keychain)
        RawKeychainFile(keychain).execute("PRAGMA user_version=\(KeychainDatabase.schemaVersion + 1)")
        RawKeychainFile(keychain).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let database = URL(fileURLWithPath: databasePath(keychain))
        let before = try Data(contentsOf: database)
        keychain.run {
            let (status, data) = readData(genp())
            #expect(status == errSecNotAvailable, "\(status)")
            #expect(data == nil)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("newer") == true,
                    "\(KeychainDiagnostics.lastFailureDescription ?? "no diagnostic")")
            #expect(SecItemAdd(genp("s", "new").with(kSecValueData, Data("x".utf8)) as CFDictionary, nil) == errSecNotAvailable)
            #expect(SecItemDelete(genp() as CFDictionary) == errSecNotAvailable)
        }
        KeychainEngine.close(directory: keychain.directory)
        #expect(try Data(contentsOf: database) == before, "the newer database was modified")
        let log = (try? FileManager.default.attributesOfItem(atPath: database.path + "-wal")[.size] as? Int) ?? 0
        #expect(log == 0, "the newer database's log grew by \(log) bytes")
        #expect(RawKeychainFile(keychain).rowIDs().count == 1)
    }

    @Test func databaseReadableByOthersIsRefused() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        makeClosedKeychain(keychain)
        let database = databasePath(keychain)
        chmod(database, 0o644)
        keychain.run {
            let (status, data) = readData(genp())
            #expect(status == errSecWrPerm, "\(status)")
            #expect(data == nil)
            #expect(KeychainDiagnostics.lastFailureRecovery == "Run: chmod 600 \(database)")
        }
        chmod(database, 0o600)
        KeychainEngine.close(directory: keychain.directory)
        keychain.run { #expect(readData(genp()) == (errSecSuccess, Data("kept".utf8))) }
    }

    // MARK: Plaintext

    @Test func descriptiveAttributesAreNotStoredInPlaintext() {
        TemporaryKeychain.with { keychain in
            let words = [
                "label-Zq81", "comment-Wx52", "description-Vb93", "generic-Ut14", "server-Rs75.example",
                "path-Pq36", "inet-account-On47", "security-domain-Ml58",
            ]
            var generic = genp("com.example.claims", "account-Kj69").with([
                kSecAttrLabel as String: words[0], kSecAttrComment as String: words[1],
                kSecAttrDescription as String: words[2], kSecAttrGeneric as String: Data(words[3].utf8),
            ])
            generic[kSecValueData as String] = Data("secret-Hg70".utf8)
            #expect(SecItemAdd(generic as CFDictionary, nil) == errSecSuccess)
            let internet: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: words[4],
                kSecAttrPath as String: words[5], kSecAttrAccount as String: words[6],
                kSecAttrSecurityDomain as String: words[7], kSecAttrLabel as String: words[0] + "-inet",
                kSecValueData as String: Data("secret-Fe81".utf8),
            ]
            #expect(SecItemAdd(internet as CFDictionary, nil) == errSecSuccess)
            let file = RawKeychainFile(keychain)
            var scanned = 0
            for text in words + ["account-Kj69", "com.example.claims", "secret-Hg70", "secret-Fe81"] {
                #expect(!file.contains(text), "\(text) is in the database file in plaintext")
                scanned += 1
            }
            // The scan sees what is there: the plaintext columns are found.
            #expect(file.contains("genp") && file.contains("inet"), "the scan does not see the file's contents")
            #expect(scanned == 12)
        }
    }

    // MARK: Edited plaintext columns

    @Test func editedClassColumnNeverServesTheItemAsAnotherClass() {
        TemporaryKeychain.with { keychain in
            #expect(SecItemAdd(genp().with(kSecValueData, Data("generic-secret".utf8)) as CFDictionary, nil) == errSecSuccess)
            RawKeychainFile(keychain).execute("UPDATE items SET class='inet'")
            let (status, data) = readData([kSecClass as String: kSecClassInternetPassword])
            #expect(status == errSecDecode, "\(status)")
            #expect(data == nil)
            #expect(readData(genp()).1 == nil)
        }
    }

    @Test func editedProtectionClassColumnIsRejected() {
        TemporaryKeychain.with { keychain in
            #expect(SecItemAdd(genp().with(kSecValueData, Data("protected".utf8)) as CFDictionary, nil) == errSecSuccess)
            RawKeychainFile(keychain).execute("UPDATE items SET pdmn = CASE pdmn WHEN 'ak' THEN 'cku' ELSE 'ak' END")
            let (status, data) = readData(genp())
            #expect(status == errSecDecode, "\(status)")
            #expect(data == nil)
        }
    }

    @Test func editedSyncColumnNeverMakesAnItemSynchronizable() {
        TemporaryKeychain.with { keychain in
            #expect(SecItemAdd(genp().with(kSecValueData, Data("local-only".utf8)) as CFDictionary, nil) == errSecSuccess)
            RawKeychainFile(keychain).execute("UPDATE items SET sync = 1 - sync")
            var result: CFTypeRef?
            let status = SecItemCopyMatching(
                genp().with([kSecAttrSynchronizable as String: true, kSecReturnData as String: true,
                             kSecReturnAttributes as String: true]) as CFDictionary, &result)
            #expect(status != errSecSuccess, "an edited sync column made the item synchronizable: \(status)")
            #expect(result == nil)
            // Asked for either kind, it is never reported as synchronizable.
            var any: CFTypeRef?
            _ = SecItemCopyMatching(
                genp().with([kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
                             kSecReturnAttributes as String: true]) as CFDictionary, &any)
            let reported = (any as? [String: Any])?[kSecAttrSynchronizable as String] as? Bool
            #expect(reported != true)
        }
    }

    @Test func editedAccessGroupColumnNeverServesTheItemToAnotherGroup() {
        TemporaryKeychain.with(accessGroups: ["com.example.app", "com.example.shared"]) { keychain in
            #expect(SecItemAdd(genp("svc", "private").with([kSecValueData as String: Data("app-only".utf8),
                kSecAttrAccessGroup as String: "com.example.app"]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(genp("svc", "shared").with([kSecValueData as String: Data("shared-data".utf8),
                kSecAttrAccessGroup as String: "com.example.shared"]) as CFDictionary, nil) == errSecSuccess)
            let file = RawKeychainFile(keychain)
            let ids = file.rowIDs()
            #expect(ids.count == 2)
            // The first item's group hash becomes the shared group's.
            file.execute("UPDATE items SET agrp = (SELECT agrp FROM items WHERE id = \(ids[1])) WHERE id = \(ids[0])")
            KeychainEngine.close(directory: keychain.directory)
            // The owner accepts the edited file, so the keychain-wide rollback check lets it
            // open and the check of each item's own group is what answers.
            #expect(FileManager.default.createFile(
                atPath: keychain.directory.appendingPathComponent("keychain.anchor.reset").path, contents: Data()))
            keychain.withGroups(["com.example.shared"]).run {
                var result: CFTypeRef?
                let status = SecItemCopyMatching(
                    [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                     kSecReturnData as String: true, kSecReturnAttributes as String: true] as CFDictionary, &result)
                let items = (result as? [[String: Any]]) ?? []
                let leaked = items.contains { ($0[kSecValueData as String] as? Data) == Data("app-only".utf8) }
                #expect(!leaked, "the shared group was served the app group's item")
                #expect(status == errSecSuccess, "\(status)")
                #expect(items.contains { ($0[kSecValueData as String] as? Data) == Data("shared-data".utf8) })
                // And never under the shared group's name.
                let (privateStatus, privateData) = readData(genp("svc", "private"))
                #expect(privateData == nil, "\(privateStatus)")
            }
        }
    }

    // MARK: Special files

    /// A FIFO where a keychain file belongs is refused at once; opening it would wait for a
    /// writer forever. Checked in a child process with a generous deadline, so that a hang
    /// fails the test instead of stopping the suite.
    @Test(arguments: ["keychain.anchor", "device.key", "keychain.db"])
    func fifoInPlaceOfAKeychainFileIsRefusedNotWaitedOn(name: String) throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        makeClosedKeychain(keychain)
        let path = keychain.directory.appendingPathComponent(name).path
        #expect(unlink(path) == 0)
        #expect(mkfifo(path, 0o600) == 0)
        let process = Process()
        process.executableURL = workloadExecutable()
        process.arguments = ["ack-log", "fifo", "1"]
        var environment = ProcessInfo.processInfo.environment
        environment["KEYSMITH_HOME"] = keychain.directory.path
        environment["KEYSMITH_ACCESS_GROUPS"] = keychain.accessGroups.joined(separator: ",")
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let finished = ended.wait(timeout: .now() + 60) == .success
        if !finished { kill(process.processIdentifier, SIGKILL); ended.wait() }
        #expect(finished, "opening the keychain with a FIFO as \(name) did not return")
        #expect(process.terminationReason == .exit && process.terminationStatus == 1)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("status \(errSecNotAvailable)"), "\(message)")
    }
}
