import Foundation
import KeychainAuthentication
import Synchronization
import Testing
@testable import KeychainServices

/// A clock the test advances by hand: reuse windows are checked without waiting.
final class ManualClock: Sendable {
    private let current = Mutex(Date(timeIntervalSinceReferenceDate: 800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

/// Access control enforced by the real engine, with scripted authenticators, on temporary
/// keychains: the outcomes of an evaluation, the UI modes, context reuse, enrolled sets,
/// application passwords, combinations, and the cryptographic binding (a copy of the files
/// without an evaluation does not give the secret).
@Suite struct AccessControlEnforcementTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    private let secretBytes = Data("payment-pin-4711".utf8)

    private func control(
        _ flags: SecAccessControlCreateFlags, _ protection: CFString = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
    ) -> SecAccessControl {
        SecAccessControlCreateWithFlags(nil, protection, flags, nil)!
    }

    private func add(
        _ flags: SecAccessControlCreateFlags, account: String = "alice", data: Data? = nil, extra: [String: Any] = [:]
    ) -> OSStatus {
        secAdd(genp("com.example.pay", account).with([
            kSecAttrAccessControl as String: control(flags), kSecValueData as String: data ?? secretBytes,
        ]).with(extra))
    }

    private func read(account: String = "alice", _ extra: [String: Any] = [:]) -> (status: OSStatus, data: Data?) {
        let result = secCopy(genp("com.example.pay", account).with([kSecReturnData as String: true]).with(extra))
        return (result.status, asData(result.result))
    }

    private func with<Result>(
        _ authenticators: [any KeychainAuthenticator], clock: ManualClock? = nil, _ body: () throws -> Result
    ) rethrows -> Result {
        let list = clock.map { clock in KeychainAuthenticators(authenticators, now: { clock.now }) }
            ?? KeychainAuthenticators(authenticators)
        return try TemporaryKeychain.with { _ in try KeychainAuthenticators.withAuthenticators(list, body) }
    }

    // MARK: Outcomes

    @Test func successfulEvaluationReadsAndEveryReadWithoutAContextAsksAgain() {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            #expect(finger.promptCount == 0)  // storing never prompts
            let first = read(["u_OpPrompt": "Pay 12 EUR"])
            #expect(first.status == errSecSuccess)
            #expect(first.data == secretBytes)
            #expect(finger.requests.map(\.reason) == ["Pay 12 EUR"])
            // Attributes alone need no evaluation.
            #expect(attrsOf(genp("com.example.pay", "alice")) != nil)
            #expect(finger.promptCount == 1)
            // A second read asks again (the queue is empty now: not recognized).
            #expect(read().status == errSecAuthFailed)
            #expect(finger.promptCount == 2)
        }
    }

    @Test func promptComesFromTheOperationPromptElseTheContextNeverTheCallerName() {
        let finger = ScriptedAuthenticator(outcomes: [.success, .success, .success])
        with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            let context = LAContext()
            context.localizedReason = "Unlock your PIN"
            context.touchIDAuthenticationAllowableReuseDuration = 0
            #expect(read([kSecUseAuthenticationContext as String: context, "u_CallerName": "com.example.caller"]).status == errSecSuccess)
            #expect(read(["u_CallerName": "com.example.caller"]).status == errSecSuccess)
            #expect(finger.requests.map(\.reason) == ["Unlock your PIN", AccessControlGate.defaultPrompt])
        }
    }

    @Test func cancelIsUserCanceledAndFailureIsAuthFailed() {
        let finger = ScriptedAuthenticator(outcomes: [.cancel, .failure, .lockout, .success])
        with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            #expect(read() == (errSecUserCanceled, nil))
            #expect(read() == (errSecAuthFailed, nil))
            #expect(read() == (errSecAuthFailed, nil))
            #expect(read().data == secretBytes)
        }
    }

    @Test func noAuthenticatorAnswersAsAppleDoes() {
        with([]) {
            #expect(add(.biometryAny) == errSecSuccess)
            #expect(read().status == errSecAuthFailed)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("biometry") == true)
            #expect(add(.devicePasscode, account: "bob") == errSecSuccess)
            #expect(read(account: "bob").status == errSecAuthFailed)
        }
    }

    @Test func uiFailIsInteractionNotAllowedWithoutAPrompt() {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        with([finger]) {
            #expect(add(.userPresence) == errSecSuccess)
            #expect(read([kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]).status == errSecInteractionNotAllowed)
            let quiet = LAContext()
            quiet.interactionNotAllowed = true
            #expect(read([kSecUseAuthenticationContext as String: quiet]).status == errSecInteractionNotAllowed)
            #expect(finger.promptCount == 0)
            #expect(read().data == secretBytes)
        }
    }

    @Test func uiSkipLeavesProtectedItemsOut() throws {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        try with([finger]) {
            #expect(add(.biometryAny, account: "protected") == errSecSuccess)
            #expect(secAdd(genp("com.example.pay", "plain").with(kSecValueData, Data("open".utf8))) == errSecSuccess)
            let all = secCopy([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.pay",
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnData as String: true,
                kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip,
            ])
            #expect(all.status == errSecSuccess)
            let items = try #require(asArray(all.result))
            #expect(items.compactMap(asData) == [Data("open".utf8)])
            #expect(read(account: "protected", [kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip]).status == errSecItemNotFound)
            #expect(finger.promptCount == 0)
            #expect(add(.biometryAny, account: "other", extra: [kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip]) == errSecParam)
        }
    }

    // MARK: Contexts

    @Test func contextIsReusedInsideItsWindowAndAsksAgainAfter() {
        let clock = ManualClock()
        let finger = ScriptedAuthenticator(outcomes: [.success, .success])
        with([finger], clock: clock) {
            #expect(add(.biometryAny) == errSecSuccess)
            let context = LAContext()
            context.localizedReason = "Unlock your PIN"
            context.touchIDAuthenticationAllowableReuseDuration = 10
            let withContext = [kSecUseAuthenticationContext as String: context]
            #expect(read(withContext).data == secretBytes)
            #expect(finger.requests.map(\.reason) == ["Unlock your PIN"])
            clock.advance(9)
            #expect(read(withContext).data == secretBytes)
            #expect(finger.promptCount == 1)
            clock.advance(2)  // 11 s after the evaluation
            #expect(read(withContext).data == secretBytes)
            #expect(finger.promptCount == 2)
            // A context without a duration is reused until invalidated, as on Apple platforms.
            let lasting = LAContext()
            finger.enqueue(.success)
            #expect(read([kSecUseAuthenticationContext as String: lasting]).data == secretBytes)
            clock.advance(3600)
            #expect(read([kSecUseAuthenticationContext as String: lasting]).data == secretBytes)
            #expect(finger.promptCount == 3)
            lasting.invalidate()
            #expect(read([kSecUseAuthenticationContext as String: lasting]).status == errSecAuthFailed)
            #expect(finger.promptCount == 3)
        }
    }

    @Test func evaluatedContextReadsWithoutAnotherPrompt() async throws {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        try await KeychainEnvironment.withEnvironment(keychain.environment) {
            try await KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) { () async throws in
                #expect(add(.biometryCurrentSet) == errSecSuccess)
                let context = LAContext()
                let evaluated = try await context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "Sign in")
                #expect(evaluated)
                #expect(read([kSecUseAuthenticationContext as String: context]).data == secretBytes)
                #expect(finger.promptCount == 1)
            }
        }
    }

    // MARK: Enrolled sets

    @Test func changedEnrolledSetInvalidatesCurrentSetItemsButNotAnyItems() {
        let finger = ScriptedAuthenticator(outcomes: [.success, .success, .success])
        with([finger]) {
            #expect(add(.biometryCurrentSet, account: "current") == errSecSuccess)
            #expect(add(.biometryAny, account: "any") == errSecSuccess)
            finger.enrolledSet = Data("scripted-enrolled-set-2".utf8)  // a finger was added
            #expect(read(account: "current").status == errSecAuthFailed)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("enrolled fingers changed") == true)
            #expect(read(account: "any").data == secretBytes)
            // Items stored now bind the new set.
            #expect(add(.biometryCurrentSet, account: "new") == errSecSuccess)
            #expect(read(account: "new").data == secretBytes)
        }
    }

    @Test func currentSetNeedsAnEnrolledFinger() {
        with([ScriptedAuthenticator(enrolledSet: nil)]) {
            #expect(add(.biometryCurrentSet) == errSecAuthFailed)
            #expect(matchCount(genp("com.example.pay", "alice")) == 0)
        }
    }

    // MARK: Application passwords

    @Test func applicationPasswordIsPartOfTheKey() {
        with([ScriptedAuthenticator(outcomes: [.success, .success])]) {
            let creating = LAContext()
            creating.setCredential(Data("right horse".utf8), type: .applicationPassword)
            #expect(add(.applicationPassword, extra: [kSecUseAuthenticationContext as String: creating]) == errSecSuccess)
            #expect(add(.applicationPassword, account: "nopassword") == errSecAuthFailed)

            let wrong = LAContext()
            wrong.setCredential(Data("wrong horse".utf8), type: .applicationPassword)
            #expect(read([kSecUseAuthenticationContext as String: wrong]).status == errSecAuthFailed)
            #expect(read().status == errSecAuthFailed)
            let right = LAContext()
            right.setCredential(Data("right horse".utf8), type: .applicationPassword)
            #expect(read([kSecUseAuthenticationContext as String: right]).data == secretBytes)

            // With biometry as well: both are needed.
            #expect(add([.biometryAny, .applicationPassword], account: "both", extra: [kSecUseAuthenticationContext as String: creating]) == errSecSuccess)
            #expect(read(account: "both", [kSecUseAuthenticationContext as String: wrong]).status == errSecAuthFailed)
            #expect(read(account: "both", [kSecUseAuthenticationContext as String: right]).data == secretBytes)
        }
    }

    // MARK: Combinations

    @Test func orIsSatisfiedByEitherFactor() {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        let passcode = ScriptedAuthenticator(factor: .passcode, outcomes: [.success])
        with([finger, passcode]) {
            #expect(add([.biometryAny, .or, .devicePasscode]) == errSecSuccess)
            #expect(read().data == secretBytes)
            #expect((finger.promptCount, passcode.promptCount) == (1, 0))
            finger.forcedUnavailability = .biometryNotAvailable
            #expect(read().data == secretBytes)
            #expect((finger.promptCount, passcode.promptCount) == (1, 1))
            // userPresence: biometry, then the passcode when biometry fails.
            finger.forcedUnavailability = nil
            finger.enqueue(.failure)
            passcode.enqueue(.success)
            #expect(add(.userPresence, account: "presence") == errSecSuccess)
            #expect(read(account: "presence").data == secretBytes)
            #expect((finger.promptCount, passcode.promptCount) == (2, 2))
        }
    }

    @Test func andNeedsEveryFactor() {
        let finger = ScriptedAuthenticator(outcomes: [.success, .success])
        let passcode = ScriptedAuthenticator(factor: .passcode, outcomes: [.failure, .success])
        with([finger, passcode]) {
            #expect(add([.biometryAny, .and, .devicePasscode]) == errSecSuccess)
            #expect(read().status == errSecAuthFailed)
            #expect(read().data == secretBytes)
            #expect((finger.promptCount, passcode.promptCount) == (2, 2))
        }
    }

    @Test func privateKeyUsageAloneNeedsNoEvaluation() {
        let finger = ScriptedAuthenticator()
        with([finger]) {
            #expect(add(.privateKeyUsage) == errSecSuccess)
            #expect(read().data == secretBytes)
            #expect(finger.promptCount == 0)
        }
    }

    // MARK: Update and delete

    @Test func updateNeedsAnEvaluationAndDeleteDoesNot() {
        let finger = ScriptedAuthenticator(outcomes: [.cancel, .success, .success])
        with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            let changes: [String: Any] = [kSecValueData as String: Data("new-pin".utf8)]
            #expect(secUpdate(genp("com.example.pay", "alice"), changes) == errSecUserCanceled)
            #expect(secUpdate(genp("com.example.pay", "alice"), changes) == errSecSuccess)
            #expect(read().data == Data("new-pin".utf8))
            #expect(finger.promptCount == 3)
            #expect(secDelete(genp("com.example.pay", "alice")) == errSecSuccess)
            #expect(finger.promptCount == 3)
        }
    }

    @Test func updateCanAddAndRemoveAccessControl() {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        with([finger]) {
            #expect(secAdd(genp("com.example.pay", "alice").with(kSecValueData, secretBytes)) == errSecSuccess)
            #expect(secUpdate(genp("com.example.pay", "alice"), [kSecAttrAccessControl as String: control(.biometryAny)]) == errSecSuccess)
            #expect(finger.promptCount == 0)
            #expect(read([kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]).status == errSecInteractionNotAllowed)
            #expect(secUpdate(genp("com.example.pay", "alice"), [kSecAttrAccessControl as String: control([])]) == errSecSuccess)
            #expect(finger.promptCount == 1)
            #expect(read([kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]).data == secretBytes)
        }
    }

    @Test func exportLeavesItemsThatNeedTheUserBehindWithoutAPrompt() throws {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        try with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            #expect(secAdd(genp("com.example.pay", "plain").with(kSecValueData, Data("open".utf8))) == errSecSuccess)
            let exported = try KeychainArchive.export(passphrase: "archive pass")
            #expect(exported.count == 1)
            #expect(finger.promptCount == 0)
        }
    }

    // MARK: errSecParam rules

    @Test func constraintsAreNotSynchronizableAndAccessibilityMustAgree() {
        with([ScriptedAuthenticator(outcomes: [.success])]) {
            #expect(add(.biometryAny, extra: [kSecAttrSynchronizable as String: true]) == errSecParam)
            #expect(add(.biometryAny, extra: [kSecAttrAccessible as String: kSecAttrAccessibleAlways]) == errSecParam)
            #expect(add(.privateKeyUsage, extra: [kSecAttrSynchronizable as String: true]) == errSecSuccess)
            #expect(add(.biometryAny, account: "bob") == errSecSuccess)
            #expect(secUpdate(genp("com.example.pay", "bob"), [kSecAttrSynchronizable as String: true]) == errSecParam)
        }
    }

    // MARK: Not only a check

    /// Reads the item's row from a copy of the keychain files with everything the files
    /// and the unlock state give (device key, class key), as a program that patched the
    /// check out would.
    private func rowFromCopy(of directory: URL) throws -> (decoded: (attributes: AttributeTable, secret: SecretData?, sealedForAccessControl: Bool), keys: KeyHierarchy, reference: Data, protection: ProtectionClass) {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-copy-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: directory, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let engine = try KeychainEngine(directory: copy)
        let database = try Database(path: copy.appendingPathComponent("keychain.db").path, create: false)
        let row = try database.cachedStatement("SELECT class, pk, pdmn, ref, nonce, ciphertext FROM items ORDER BY id")
        defer { row.reset() }
        while try row.step() {
            let label = try #require(row.string(at: 2))
            let protection = try #require(try engine.keys.protection(forLabel: label))
            let key = try engine.keys.itemKey(for: protection)
            let associated = KeyHierarchy.associatedData(
                prefix: KeyHierarchy.associatedDataPrefix(keychainID: engine.keys.keychainID), itemClass: row.string(at: 0) ?? "",
                reference: row.data(at: 3), primaryKey: row.data(at: 1), protection: label)
            let nonce = row.data(at: 4)
            let ciphertext = row.data(at: 5)
            let opened = try #require(ciphertext.withUnsafeBytes { c in
                nonce.withUnsafeBytes { n in associated.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: key) } }
            })
            let decoded = try ItemCodec.decode(opened)
            if decoded.attributes["svce"] == .string("com.example.pay") {
                return (decoded, engine.keys, row.data(at: 3), protection)
            }
        }
        throw KeychainFailure.notFound
    }

    private func contains(_ secret: SecretData?, _ needle: Data) -> Bool {
        guard let secret else { return false }
        return secret.withUnsafeBytes { Data($0) }.range(of: needle) != nil
    }

    @Test func copiedFilesWithTheClassKeyDoNotOpenTheSecret() throws {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        try with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            let row = try rowFromCopy(of: KeychainEnvironment.current.directory)
            // The class key opens the attributes and the sealed envelope, not the secret.
            #expect(row.decoded.sealedForAccessControl)
            #expect(row.decoded.attributes["acct"] == .string("alice"))
            #expect(!contains(row.decoded.secret, secretBytes))
            let envelope = try AccessControlEnvelope(decoding: try #require(row.decoded.secret))
            let classKey = try row.keys.itemKey(for: row.protection)
            #expect(try envelope.open(path: envelope.paths[0], secrets: .init(), reference: row.reference, classKey: classKey) == nil)
            // The biometry key, released after an evaluation, opens it.
            let released = try row.keys.accessControlSecret(.biometry, releasedKey: nil)
            let opened = try envelope.open(
                path: envelope.paths[0], secrets: .init(biometrySecret: released), reference: row.reference, classKey: classKey)
            #expect(opened.map { $0.withUnsafeBytes { Data($0) } } == secretBytes)
        }
    }

    @Test func passcodeItemsOfAPassphraseKeychainNeedThePassphraseItself() throws {
        let (reader, prompts) = PassphraseReader.scripted(["wrong", "correct horse"])
        let passphrase = KeychainPassphraseAuthenticator(reader: reader)
        let checkOnly = ScriptedAuthenticator(factor: .passcode, outcomes: [.success])
        try with([checkOnly, passphrase]) {
            #expect(secAdd(genp("com.example.other", "x").with(kSecValueData, Data("x".utf8))) == errSecSuccess)
            try KeychainEnvironment.setPassphrase("correct horse", old: nil)
            #expect(add(.devicePasscode) == errSecSuccess)
            // A check-only passcode authenticator comes first in the list, but the item's key
            // opens only with the passphrase: the keychain passphrase authenticator is asked.
            #expect(read(["u_OpPrompt": "Show the PIN"]).data == secretBytes)
            #expect(checkOnly.promptCount == 0)
            #expect(prompts.prompts.count == 2)
            #expect(prompts.prompts.last?.contains("Show the PIN") == true)

            // The files plus the unlocked keychain's keys (the class key, the unlock state) do
            // not open it; the passphrase does.
            let row = try rowFromCopy(of: KeychainEnvironment.current.directory)
            #expect(try row.keys.accessControlSecret(.passcode, releasedKey: nil) == nil)
            let envelope = try AccessControlEnvelope(decoding: try #require(row.decoded.secret))
            let classKey = try row.keys.itemKey(for: row.protection)
            let viaUnlockState = try row.keys.accessControlSecret(.biometry, releasedKey: nil)
            #expect(try envelope.open(path: envelope.paths[0], secrets: .init(passcodeSecret: viaUnlockState), reference: row.reference, classKey: classKey) == nil)
            let sP = try #require(try row.keys.passcodeKey(passphrase: "correct horse"))
            #expect(try row.keys.passcodeKey(passphrase: "wrong") == nil)
            let released = try row.keys.accessControlSecret(.passcode, releasedKey: sP)
            let opened = try envelope.open(
                path: envelope.paths[0], secrets: .init(passcodeSecret: released), reference: row.reference, classKey: classKey)
            #expect(opened.map { $0.withUnsafeBytes { Data($0) } } == secretBytes)

            // Three wrong passphrases fail; a changed passphrase keeps the item readable.
            let (wrongReader, _) = PassphraseReader.scripted(["a", "b", "c"])
            try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([KeychainPassphraseAuthenticator(reader: wrongReader)])) {
                #expect(read().status == errSecAuthFailed)
                try KeychainEnvironment.setPassphrase("battery staple", old: "correct horse")
            }
            let (newReader, _) = PassphraseReader.scripted(["battery staple"])
            KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([KeychainPassphraseAuthenticator(reader: newReader)])) {
                #expect(read().data == secretBytes)
            }
            // Without a terminal or askpass program the read is not interactive.
            KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([KeychainPassphraseAuthenticator(reader: PassphraseReader { _, _ throws(AuthenticationFailure) in throw .notInteractive })])) {
                #expect(read().status == errSecInteractionNotAllowed)
            }
        }
    }

    /// An item stored with access control before it was enforced: its plain secret sits in
    /// the class encryption. It is checked on reads, and sealed at its next update.
    @Test func itemsFromBeforeEnforcementAreCheckedAndSealedAtTheirNextUpdate() throws {
        let finger = ScriptedAuthenticator(outcomes: [.success, .success, .success])
        try with([finger]) {
            #expect(secAdd(genp("com.example.pay", "alice").with(kSecValueData, secretBytes)) == errSecSuccess)
            let directory = KeychainEnvironment.current.directory
            let keys = try KeychainEngine.engine(for: directory).keys
            let database = try Database(path: directory.appendingPathComponent("keychain.db").path, create: false)

            func storedRow() throws -> (id: Int64, decoded: (attributes: AttributeTable, secret: SecretData?, sealedForAccessControl: Bool), associated: [UInt8], key: SecretKey) {
                let row = try database.cachedStatement("SELECT id, class, pk, pdmn, ref, nonce, ciphertext FROM items")
                defer { row.reset() }
                #expect(try row.step())
                let label = try #require(row.string(at: 3))
                let key = try keys.itemKey(for: try #require(try keys.protection(forLabel: label)))
                let associated = KeyHierarchy.associatedData(
                    prefix: KeyHierarchy.associatedDataPrefix(keychainID: keys.keychainID), itemClass: row.string(at: 1) ?? "",
                    reference: row.data(at: 4), primaryKey: row.data(at: 2), protection: label)
                let nonce = row.data(at: 5)
                let ciphertext = row.data(at: 6)
                let opened = try #require(ciphertext.withUnsafeBytes { c in
                    nonce.withUnsafeBytes { n in associated.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: key) } }
                })
                return (row.int64(at: 0), try ItemCodec.decode(opened), associated, key)
            }

            // Write the row as an earlier version did: access control in the attributes, the
            // secret itself beside them.
            var legacy = try storedRow()
            legacy.decoded.attributes["accc"] = .accessControl(protection: "ak", flags: SecAccessControlCreateFlags.biometryAny.rawValue)
            let plaintext = ItemCodec.encode(attributes: legacy.decoded.attributes, secret: legacy.decoded.secret)
            let sealed = plaintext.withUnsafeBytes { text in legacy.associated.withUnsafeBytes { Sodium.seal(text, associatedData: $0, key: legacy.key) } }
            let rewrite = try database.cachedStatement("UPDATE items SET nonce = ?, ciphertext = ? WHERE id = ?")
            rewrite.bind(sealed.nonce, at: 1)
            rewrite.bind(sealed.ciphertext, at: 2)
            rewrite.bind(legacy.id, at: 3)
            try rewrite.run()
            #expect(try !storedRow().decoded.sealedForAccessControl)
            // An earlier version wrote it: the keychain is opened as that version left it
            // (accepted as it is, so the anchor vouches for the row).
            FileManager.default.createFile(atPath: directory.appendingPathComponent(RollbackAnchor.resetFileName).path, contents: nil)
            KeychainEngine.close(directory: directory)

            // Checked: no prompt, no secret; an evaluation reads it.
            #expect(read([kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]).status == errSecInteractionNotAllowed)
            #expect(read().data == secretBytes)
            // An update seals it for its access control.
            #expect(secUpdate(genp("com.example.pay", "alice"), [kSecAttrLabel as String: "PIN"]) == errSecSuccess)
            let upgraded = try storedRow()
            #expect(upgraded.decoded.sealedForAccessControl)
            #expect(!contains(upgraded.decoded.secret, secretBytes))
            #expect(read().data == secretBytes)
            #expect(finger.promptCount == 3)
        }
    }

    // MARK: LAContext

    @Test func contextAnswersFromTheAuthenticators() {
        let finger = ScriptedAuthenticator(enrolledSet: Data("left-index".utf8))
        KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([])) {
            let context = LAContext()
            var error: NSError?
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.code == LAError.Code.biometryNotAvailable.rawValue)
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
            #expect(error?.code == LAError.Code.passcodeNotSet.rawValue)
            #expect(context.biometryType == .none)
            #expect(context.evaluatedPolicyDomainState == nil)
        }
        KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
            let context = LAContext()
            var error: NSError?
            #expect(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error == nil)
            #expect(context.biometryType == .touchID)
            #expect(context.evaluatedPolicyDomainState == Data("left-index".utf8))
            finger.enrolledSet = nil
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.code == LAError.Code.biometryNotEnrolled.rawValue)
            #expect(context.biometryType == .none)
        }
    }

    @Test func evaluatePolicyReportsTheOutcome() async {
        let finger = ScriptedAuthenticator(outcomes: [.cancel, .success])
        let passcode = ScriptedAuthenticator(factor: .passcode, outcomes: [.success])
        await KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger, passcode])) {
            let context = LAContext()
            await #expect(throws: LAError(.userCancel)) {
                try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Sign in")
            }
            let outcome: (Bool, Int?) = await withCheckedContinuation { continuation in
                context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "Sign in") { success, error in
                    continuation.resume(returning: (success, (error as? LAError)?.code.rawValue))
                }
            }
            #expect(outcome.0 && outcome.1 == nil)
            // Biometry locked out: the passcode is the fallback of deviceOwnerAuthentication.
            finger.forcedUnavailability = .biometryLockout
            #expect((try? await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Sign in")) == true)
            #expect(passcode.promptCount == 1)
            context.invalidate()
            await #expect(throws: LAError(.invalidContext)) {
                try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Sign in")
            }
        }
    }
}
