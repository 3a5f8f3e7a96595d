#if !canImport(Security)
import Foundation
import Testing

@testable import KeychainServices

/// The login-password authenticator against a real Linux-PAM stack read from a private
/// configuration directory: `pam_userdb` over a test database (made with Berkeley DB's
/// `db5.3_load`), so no account of the machine is ever involved.
@Suite struct PAMLoginAuthenticatorTests {
    /// A private PAM configuration: user alice, password "open sesame".
    struct PrivateStack {
        let directory: URL
        let scripts: AskpassScripts

        static var isInstalled: Bool {
            FileManager.default.isExecutableFile(atPath: "/usr/bin/db5.3_load")
        }

        /// - Parameter serviceName: The service file written (`keysmith`, `other`), or `nil` for none.
        init(serviceName: String? = "keysmith") throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-pam-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            scripts = try AskpassScripts()
            let load = Process()
            load.executableURL = URL(fileURLWithPath: "/usr/bin/db5.3_load")
            load.arguments = ["-T", "-t", "hash", directory.appendingPathComponent("users.db").path]
            let input = Pipe()
            load.standardInput = input
            try load.run()
            input.fileHandleForWriting.write(Data("alice\nopen sesame\n".utf8))
            try input.fileHandleForWriting.close()
            load.waitUntilExit()
            guard load.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
            if let serviceName {
                let stack = """
                    auth required pam_userdb.so crypt=none db=\(directory.appendingPathComponent("users").path)
                    account required pam_permit.so

                    """
                try Data(stack.utf8).write(to: directory.appendingPathComponent(serviceName))
            }
        }

        /// The authenticator for `user`, whose prompt answers through an askpass script.
        func authenticator(user: String = "alice", askpass body: String) throws -> PAMLoginAuthenticator {
            let askpass = try scripts.make(body)
            return PAMLoginAuthenticator(
                user: user, configurationDirectory: directory.path,
                prompt: PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": askpass], terminalPath: "/nonexistent/tty"))
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
            scripts.remove()
        }
    }

    static let request = AuthenticationRequest(factor: .passcode, reason: "Show the payment PIN")

    @Test(.enabled(if: PrivateStack.isInstalled))
    func theRightPasswordSucceeds() throws {
        let stack = try PrivateStack()
        defer { stack.remove() }
        let authenticator = try stack.authenticator(askpass: "printf '%s' \"$1\" > \(stack.directory.path)/asked; printf 'open sesame\\n'")
        #expect(authenticator.unavailability() == nil)
        #expect(authenticator.service == "keysmith")
        let evidence = try authenticator.authenticate(Self.request)
        #expect(evidence.factor == .passcode)
        #expect(evidence.authenticatorName == "login password (PAM)")
        #expect(evidence.releasedKey == nil)
        #expect(try authenticator.enrolledSetIdentity() == nil)
        // PAM's own question, after the app's reason.
        let asked = try String(contentsOfFile: stack.directory.path + "/asked", encoding: .utf8)
        #expect(asked.hasPrefix("Show the payment PIN\n"))
        #expect(asked.contains("assword"))
        // Which password: the account's, not the keychain passphrase.
        #expect(asked.contains("login password for alice"))
    }

    @Test(.enabled(if: PrivateStack.isInstalled))
    func aWrongPasswordOrAnUnknownUserFails() throws {
        let stack = try PrivateStack()
        defer { stack.remove() }
        let wrong = try stack.authenticator(askpass: "printf 'open sesame!\\n'")
        #expect(throws: AuthenticationFailure.authenticationFailed) { try wrong.authenticate(Self.request) }
        let prefix = try stack.authenticator(askpass: "printf 'open\\n'")
        #expect(throws: AuthenticationFailure.authenticationFailed) { try prefix.authenticate(Self.request) }
        let stranger = try stack.authenticator(user: "mallory", askpass: "printf 'open sesame\\n'")
        #expect(throws: AuthenticationFailure.authenticationFailed) { try stranger.authenticate(Self.request) }
    }

    @Test(.enabled(if: PrivateStack.isInstalled))
    func aCanceledPromptOrNoInteractionIsNotAFailure() throws {
        let stack = try PrivateStack()
        defer { stack.remove() }
        let canceling = try stack.authenticator(askpass: "exit 1")
        #expect(throws: AuthenticationFailure.userCancel) { try canceling.authenticate(Self.request) }
        let answering = try stack.authenticator(askpass: "printf 'open sesame\\n'")
        var silent = Self.request
        silent.interactionAllowed = false
        #expect(throws: AuthenticationFailure.notInteractive) { try answering.authenticate(silent) }
        let nothingToPromptWith = PAMLoginAuthenticator(
            user: "alice", configurationDirectory: stack.directory.path,
            prompt: PassphrasePrompt(environment: [:], terminalPath: "/nonexistent/tty"))
        #expect(throws: AuthenticationFailure.notInteractive) { try nothingToPromptWith.authenticate(Self.request) }
    }

    /// Debian's `common-auth` jumps over `pam_deny` on success, so a prompt that could not be
    /// shown ends as PAM_AUTH_ERR, not PAM_CONV_ERR: still not a wrong password.
    @Test(.enabled(if: PrivateStack.isInstalled))
    func aPromptThatCouldNotBeShownIsNotAWrongPasswordBehindPamDeny() throws {
        let stack = try PrivateStack(serviceName: nil)
        defer { stack.remove() }
        let commonAuth = """
            auth [success=1 default=ignore] pam_userdb.so crypt=none db=\(stack.directory.appendingPathComponent("users").path)
            auth requisite pam_deny.so
            auth required pam_permit.so
            account required pam_permit.so

            """
        try Data(commonAuth.utf8).write(to: stack.directory.appendingPathComponent("keysmith"))
        let nothingToPromptWith = PAMLoginAuthenticator(
            user: "alice", configurationDirectory: stack.directory.path,
            prompt: PassphrasePrompt(environment: [:], terminalPath: "/nonexistent/tty"))
        #expect(throws: AuthenticationFailure.notInteractive) { try nothingToPromptWith.authenticate(Self.request) }
        let canceling = try stack.authenticator(askpass: "exit 1")
        #expect(throws: AuthenticationFailure.userCancel) { try canceling.authenticate(Self.request) }
        let wrong = try stack.authenticator(askpass: "printf 'open sesame!\\n'")
        #expect(throws: AuthenticationFailure.authenticationFailed) { try wrong.authenticate(Self.request) }
        let right = try stack.authenticator(askpass: "printf 'open sesame\\n'")
        #expect(try right.authenticate(Self.request).factor == .passcode)
    }

    @Test(.enabled(if: PrivateStack.isInstalled))
    func withoutAKeysmithServiceTheOtherServiceIsUsed() throws {
        let stack = try PrivateStack(serviceName: "other")
        defer { stack.remove() }
        let authenticator = try stack.authenticator(askpass: "printf 'open sesame\\n'")
        #expect(authenticator.service == "other")
        #expect(authenticator.unavailability() == nil)
        #expect(try authenticator.authenticate(Self.request).factor == .passcode)
    }

    @Test(.enabled(if: PrivateStack.isInstalled))
    func aServiceThatCannotStartIsUnavailable() throws {
        let empty = try PrivateStack(serviceName: nil)
        defer { empty.remove() }
        let authenticator = try empty.authenticator(askpass: "printf 'open sesame\\n'")
        #expect(authenticator.service == nil)
        #expect(authenticator.unavailability() == .passcodeNotSet)
        #expect(throws: AuthenticationFailure.passcodeNotSet) { try authenticator.authenticate(Self.request) }

        // A service file naming a module that does not exist: PAM cannot check anything.
        let broken = try PrivateStack(serviceName: nil)
        defer { broken.remove() }
        try Data("auth required pam_keysmith_missing_module.so\naccount required pam_permit.so\n".utf8)
            .write(to: broken.directory.appendingPathComponent("keysmith"))
        let brokenAuthenticator = try broken.authenticator(askpass: "printf 'open sesame\\n'")
        #expect(throws: AuthenticationFailure.passcodeNotSet) { try brokenAuthenticator.authenticate(Self.request) }
    }

    /// The account check follows the password check: an expired or locked account (here a
    /// stack whose account step is `pam_deny`) is refused even with the right password,
    /// which the asked prompt shows was typed and accepted by the auth step.
    @Test(.enabled(if: PrivateStack.isInstalled))
    func anAccountTheStackRefusesFailsWithTheRightPassword() throws {
        let stack = try PrivateStack(serviceName: nil)
        defer { stack.remove() }
        let refusingAccounts = """
            auth required pam_userdb.so crypt=none db=\(stack.directory.appendingPathComponent("users").path)
            account required pam_deny.so

            """
        try Data(refusingAccounts.utf8).write(to: stack.directory.appendingPathComponent("keysmith"))
        let right = try stack.authenticator(askpass: "printf '%s' \"$1\" > \(stack.directory.path)/asked; printf 'open sesame\\n'")
        #expect(right.unavailability() == nil)
        #expect(throws: AuthenticationFailure.authenticationFailed) { try right.authenticate(Self.request) }
        let asked = try String(contentsOfFile: stack.directory.path + "/asked", encoding: .utf8)
        #expect(asked.contains("login password for alice"), "the password was asked: the refusal came after it")

        // The same password through the same auth step, with accounts permitted, succeeds.
        try Data(refusingAccounts.replacingOccurrences(of: "pam_deny.so", with: "pam_permit.so").utf8)
            .write(to: stack.directory.appendingPathComponent("keysmith"))
        #expect(try right.authenticate(Self.request).factor == .passcode)
    }

    @Test func pamStatusesMapToTheFailuresAppsHandle() {
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 7, conversation: nil) == .authenticationFailed)  // PAM_AUTH_ERR
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 10, conversation: nil) == .authenticationFailed)  // PAM_USER_UNKNOWN
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 13, conversation: nil) == .authenticationFailed)  // PAM_ACCT_EXPIRED
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 11, conversation: nil) == .biometryLockout)  // PAM_MAXTRIES
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 9, conversation: nil) == .passcodeNotSet)  // PAM_AUTHINFO_UNAVAIL
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 28, conversation: nil) == .passcodeNotSet)  // PAM_MODULE_UNKNOWN
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 4, conversation: nil) == .systemCancel)  // PAM_SYSTEM_ERR
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 19, conversation: .userCancel) == .userCancel)  // PAM_CONV_ERR
        #expect(PAMLoginAuthenticator.failure(forPAMStatus: 19, conversation: nil) == .systemCancel)
    }
}
#endif
