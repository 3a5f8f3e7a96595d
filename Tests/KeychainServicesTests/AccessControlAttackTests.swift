import Foundation
import KeychainAuthentication
import Testing
@testable import KeychainServices

/// An attacker's attempts to get an access-controlled secret without a satisfied
/// evaluation, through the other doors of the API, and the read pool seen from another
/// thread right after a write.
@Suite struct AccessControlAttackTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    private let secretBytes = Data("attack-canary-9d41".utf8)

    private func control(_ flags: SecAccessControlCreateFlags) -> SecAccessControl {
        SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, flags, nil)!
    }

    private func add(_ flags: SecAccessControlCreateFlags, account: String = "alice", extra: [String: Any] = [:]) -> OSStatus {
        secAdd(genp("com.example.pay", account).with([
            kSecAttrAccessControl as String: control(flags), kSecValueData as String: secretBytes,
        ]).with(extra))
    }

    private func with<Result>(_ authenticators: [any KeychainAuthenticator], _ body: () throws -> Result) rethrows -> Result {
        try TemporaryKeychain.with { _ in try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators(authenticators), body) }
    }

    @Test func persistentReferenceThenReadByReferenceStillNeedsTheUser() {
        let finger = ScriptedAuthenticator(outcomes: [.failure])
        with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            let found = secCopy(genp("com.example.pay", "alice").with(kSecReturnPersistentRef, true))
            #expect(found.status == errSecSuccess)
            #expect(finger.promptCount == 0)
            guard let reference = asData(found.result) else { Issue.record("no persistent reference"); return }
            let byReference = secCopy([
                kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference,
                kSecReturnData as String: true,
            ])
            #expect(byReference.status == errSecAuthFailed)
            #expect(byReference.result == nil)
            #expect(finger.promptCount == 1)
        }
    }

    @Test func matchLimitAllWithAProtectedItemGivesNoDataWhenTheUserFails() {
        let finger = ScriptedAuthenticator(outcomes: [.failure])
        with([finger]) {
            #expect(secAdd(genp("com.example.pay", "plain").with(kSecValueData, Data("open".utf8))) == errSecSuccess)
            #expect(add(.biometryAny) == errSecSuccess)
            let all = secCopy([
                kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecReturnData as String: true, kSecReturnAttributes as String: true,
            ])
            #expect(all.status == errSecAuthFailed)
            #expect(all.result == nil)
            // With the skip mode the plain item comes back alone, without a prompt.
            let skipped = secCopy([
                kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecReturnData as String: true, kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip,
            ])
            #expect(skipped.status == errSecSuccess)
            #expect((skipped.result as? [Any])?.compactMap(asData) == [Data("open".utf8)])
            #expect(finger.promptCount == 1)
        }
    }

    @Test func updateWithoutTheUserChangesNothing() {
        let finger = ScriptedAuthenticator(outcomes: [.failure, .failure, .failure, .success])
        with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            let query = genp("com.example.pay", "alice")
            #expect(secUpdate(query, [kSecAttrAccessControl as String: control([])]) == errSecAuthFailed)
            #expect(secUpdate(query, [kSecValueData as String: Data("attacker".utf8)]) == errSecAuthFailed)
            #expect(secUpdate(query, [kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock]) == errSecAuthFailed)
            let read = secCopy(query.with([kSecReturnData as String: true]))
            #expect(asData(read.result) == secretBytes)
            #expect(finger.promptCount == 4)
        }
    }

    @Test func aBiometryEvaluationDoesNotOpenAPasscodeItem() {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        let passcode = ScriptedAuthenticator(factor: .passcode, outcomes: [])
        with([finger, passcode]) {
            #expect(add(.biometryAny, account: "finger") == errSecSuccess)
            #expect(add(.devicePasscode, account: "passcode") == errSecSuccess)
            let context = LAContext()
            let withContext: [String: Any] = [kSecUseAuthenticationContext as String: context, kSecReturnData as String: true]
            #expect(asData(secCopy(genp("com.example.pay", "finger").with(withContext)).result) == secretBytes)
            let stricter = secCopy(genp("com.example.pay", "passcode").with(withContext))
            #expect(stricter.status == errSecAuthFailed)
            #expect(stricter.result == nil)
            #expect(passcode.promptCount == 1)
        }
    }

    @Test func anInvalidatedContextDoesNotOpenAnApplicationPasswordItem() {
        with([]) {
            let creating = LAContext()
            creating.setCredential(Data("right horse".utf8), type: .applicationPassword)
            #expect(add(.applicationPassword, extra: [kSecUseAuthenticationContext as String: creating]) == errSecSuccess)
            let context = LAContext()
            context.invalidate()
            context.setCredential(Data("right horse".utf8), type: .applicationPassword)
            let read = secCopy(genp("com.example.pay", "alice").with([
                kSecReturnData as String: true, kSecUseAuthenticationContext as String: context,
            ]))
            #expect(read.status == errSecAuthFailed)
            #expect(read.result == nil)
        }
    }

    @Test func aContextEvaluatedBeforeTheEnrolledSetChangedDoesNotOpenACurrentSetItem() {
        let finger = ScriptedAuthenticator(outcomes: [.success])
        with([finger]) {
            #expect(add(.biometryCurrentSet) == errSecSuccess)
            let context = LAContext()
            let withContext: [String: Any] = [kSecUseAuthenticationContext as String: context, kSecReturnData as String: true]
            #expect(asData(secCopy(genp("com.example.pay", "alice").with(withContext)).result) == secretBytes)
            finger.enrolledSet = Data("scripted-enrolled-set-2".utf8)  // someone added a finger
            let after = secCopy(genp("com.example.pay", "alice").with(withContext))
            #expect(after.status == errSecAuthFailed)
            #expect(after.result == nil)
        }
    }

    @Test func anUpdateDoesNotWriteBackASecretChangedWhileTheUserAuthenticated() {
        // While the first update waits for the user, another call replaces the secret.
        let finger = InterleavingFinger {
            _ = secUpdate(genp("com.example.pay", "alice"), [kSecValueData as String: Data("newer-pin".utf8)])
        }
        with([finger]) {
            #expect(add(.biometryAny) == errSecSuccess)
            let status = secUpdate(genp("com.example.pay", "alice"), [kSecAttrLabel as String: "renamed"])
            let read = secCopy(genp("com.example.pay", "alice").with([kSecReturnData as String: true]))
            #expect(asData(read.result) == Data("newer-pin".utf8))
            #expect(status == errSecAuthFailed)  // "changed while the user was authenticating; nothing was changed"
        }
    }

    @Test func failuresNeverCarryTheSecret() {
        let finger = ScriptedAuthenticator(outcomes: [.failure])
        with([finger]) {
            let creating = LAContext()
            creating.setCredential(secretBytes, type: .applicationPassword)
            #expect(add(.applicationPassword, extra: [kSecUseAuthenticationContext as String: creating]) == errSecSuccess)
            let wrong = LAContext()
            wrong.setCredential(Data("wrong".utf8), type: .applicationPassword)
            let read = secCopy(genp("com.example.pay", "alice").with([
                kSecReturnData as String: true, kSecUseAuthenticationContext as String: wrong,
            ]))
            #expect(read.status == errSecAuthFailed)
            let description = KeychainDiagnostics.lastFailureDescription ?? ""
            #expect(!description.isEmpty)
            #expect(!description.contains(String(decoding: secretBytes, as: UTF8.self)))
            #expect(!description.contains("wrong"))
            #expect(!control(.applicationPassword).description.contains(String(decoding: secretBytes, as: UTF8.self)))
        }
    }

    @Test func aWriteIsSeenByTheNextReadOnAnotherThread() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let query = genp("com.example.pool", "alice")
        try keychain.run {
            #expect(secAdd(query.with(kSecValueData, Data("0".utf8))) == errSecSuccess)
        }
        for round in 1...60 {
            let value = Data("\(round)".utf8)
            keychain.run { _ = secUpdate(query, [kSecValueData as String: value]) }
            let seen = ReadResult()
            let done = DispatchSemaphore(value: 0)
            let reader = Thread {
                keychain.run { seen.set(asData(secCopy(genp("com.example.pool", "alice").with(kSecReturnData, true)).result)) }
                done.signal()
            }
            reader.start()
            done.wait()
            #expect(seen.value == value, "round \(round)")
            if seen.value != value { break }
        }
    }
}

/// A value handed from the reading thread back to the test.
private final class ReadResult: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Data?
    var value: Data? { lock.withLock { stored } }
    func set(_ data: Data?) { lock.withLock { stored = data } }
}

/// A fingerprint that always matches, and runs `interleaved` (once) inside its first prompt.
private final class InterleavingFinger: KeychainAuthenticator, @unchecked Sendable {
    let name = "interleaving fingerprint"
    let factor = AuthenticationFactor.biometry
    private let lock = NSLock()
    private var interleaved: (() -> Void)?

    init(_ interleaved: @escaping () -> Void) { self.interleaved = interleaved }

    func unavailability() -> AuthenticationFailure? { nil }
    func enrolledSetIdentity() throws(AuthenticationFailure) -> Data? { Data("set".utf8) }
    func authenticate(_ request: AuthenticationRequest) throws(AuthenticationFailure) -> AuthenticationEvidence {
        let pending = lock.withLock { () -> (() -> Void)? in
            defer { interleaved = nil }
            return interleaved
        }
        pending?()
        return AuthenticationEvidence(factor: .biometry, authenticatorName: name, enrolledSetIdentity: Data("set".utf8))
    }
}
