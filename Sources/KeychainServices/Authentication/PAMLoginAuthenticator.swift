#if !canImport(Security)
import CPAM
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Confirms the user's presence with their login password, checked by Linux-PAM: what a Mac
/// does when it asks for the account password.
///
/// The password is asked through `KEYSMITH_ASKPASS` or on the terminal (see the keychain's
/// documentation on prompts), handed to PAM's conversation and zeroed afterwards. The check is
/// `pam_authenticate` followed by `pam_acct_mgmt` (an expired or locked account fails).
///
/// The PAM service is `keysmith` when its file exists (`/etc/pam.d/keysmith`), else `other`,
/// the service Linux-PAM uses for programs without their own file. A system administrator can
/// therefore decide what "login password" means for Keysmith, for example:
///
/// ```
/// # /etc/pam.d/keysmith
/// auth    include common-auth
/// account include common-account
/// ```
///
/// This authenticator only checks: it releases no key, so an item protected by it is as
/// strong as the check in front of it (see docs/SECURITY.md). A process that is not root can
/// check only its own user's password through `pam_unix` (its `unix_chkpwd` helper refuses
/// other users), and `pam_unix` waits about two seconds after a wrong password.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public struct PAMLoginAuthenticator: KeychainAuthenticator {
    /// "login password (PAM)".
    public var name: String { "login password (PAM)" }

    /// ``AuthenticationFactor/passcode``.
    public var factor: AuthenticationFactor { .passcode }

    /// The account whose password is checked; `nil` means the user running the process.
    public let user: String?

    /// The directory of PAM service files; `nil` means the system's (`/etc/pam.d`).
    public let configurationDirectory: String?

    let prompt: PassphrasePrompt

    /// Creates the authenticator.
    /// - Parameters:
    ///   - user: The account whose password is checked; `nil` (the default) is the user
    ///     running the process.
    ///   - configurationDirectory: A directory of PAM service files to use instead of
    ///     `/etc/pam.d` (Linux-PAM 1.4 and later), for tests with a private PAM stack.
    public init(user: String? = nil, configurationDirectory: String? = nil) {
        self.init(user: user, configurationDirectory: configurationDirectory, prompt: PassphrasePrompt())
    }

    init(user: String?, configurationDirectory: String?, prompt: PassphrasePrompt) {
        self.user = user
        self.configurationDirectory = configurationDirectory
        self.prompt = prompt
    }

    /// The PAM service used: `keysmith` when its file exists, else `other`; `nil` when
    /// neither exists.
    public var service: String? {
        let directory = configurationDirectory ?? "/etc/pam.d"
        for candidate in ["keysmith", "other"] where FileManager.default.fileExists(atPath: directory + "/" + candidate) {
            return candidate
        }
        return nil
    }

    /// ``AuthenticationFailure/passcodeNotSet`` when the account cannot be named or the PAM
    /// service cannot start; `nil` otherwise.
    public func unavailability() -> AuthenticationFailure? {
        guard let service, let account = accountName() else { return .passcodeNotSet }
        let conversation = PAMConversation(prompt: prompt, reason: "", interactionAllowed: false)
        var handle: OpaquePointer?
        let started = start(service: service, account: account, conversation: conversation, handle: &handle)
        if let handle { pam_end(handle, started) }
        return started == PAM_SUCCESS ? nil : .passcodeNotSet
    }

    /// `nil`: a password has no enrolled set.
    public func enrolledSetIdentity() throws(AuthenticationFailure) -> Data? { nil }

    /// Asks for the login password and checks it with PAM.
    /// - Throws: ``AuthenticationFailure/notInteractive`` when `request.interactionAllowed` is
    ///   `false` or nothing can prompt; ``AuthenticationFailure/userCancel`` when the user
    ///   cancels the prompt; ``AuthenticationFailure/authenticationFailed`` for a wrong
    ///   password, an unknown user or an account PAM refuses (expired, locked, password
    ///   change required); ``AuthenticationFailure/biometryLockout`` (the code for "locked
    ///   after too many attempts") when PAM reports the maximum number of tries;
    ///   ``AuthenticationFailure/passcodeNotSet`` when PAM cannot check this account's
    ///   password (the service cannot start, a module does not load); ``AuthenticationFailure/systemCancel`` for other
    ///   PAM errors.
    public func authenticate(_ request: AuthenticationRequest) throws(AuthenticationFailure) -> AuthenticationEvidence {
        guard request.interactionAllowed else { throw .notInteractive }
        guard let service, let account = accountName() else { throw .passcodeNotSet }
        let conversation = PAMConversation(prompt: prompt, reason: request.reason, interactionAllowed: true, account: account)
        var handle: OpaquePointer?
        var status = start(service: service, account: account, conversation: conversation, handle: &handle)
        defer { if let handle { pam_end(handle, status) } }
        guard status == PAM_SUCCESS, let handle else { throw .passcodeNotSet }
        status = pam_authenticate(handle, 0)
        if status == PAM_SUCCESS { status = pam_acct_mgmt(handle, 0) }
        if status == PAM_SUCCESS {
            return AuthenticationEvidence(factor: .passcode, authenticatorName: name)
        }
        throw Self.failure(forPAMStatus: status, conversation: conversation.failure)
    }

    /// The failure a PAM status stands for.
    ///
    /// When the conversation could not answer (the user canceled, no prompt could be shown),
    /// that is the failure, whatever status the stack ends with: a stack such as Debian's
    /// `common-auth` turns a module's conversation error into `PAM_AUTH_ERR` through
    /// `pam_deny`, though no password was ever typed.
    static func failure(forPAMStatus status: Int32, conversation: AuthenticationFailure?) -> AuthenticationFailure {
        if let conversation, status != PAM_SUCCESS { return conversation }
        switch status {
        case PAM_AUTH_ERR, PAM_USER_UNKNOWN, PAM_CRED_INSUFFICIENT, PAM_PERM_DENIED, PAM_ACCT_EXPIRED,
            PAM_NEW_AUTHTOK_REQD, PAM_CRED_EXPIRED:
            return .authenticationFailed
        case PAM_MAXTRIES:
            return .biometryLockout
        case PAM_AUTHINFO_UNAVAIL, PAM_MODULE_UNKNOWN, PAM_OPEN_ERR, PAM_SYMBOL_ERR, PAM_SERVICE_ERR:
            // The password cannot be checked here: a module that does not load or cannot
            // reach its data (unix_chkpwd asked about another user, a missing database).
            return .passcodeNotSet
        default:
            return conversation ?? .systemCancel
        }
    }

    private func start(
        service: String, account: String, conversation: PAMConversation, handle: inout OpaquePointer?
    ) -> Int32 {
        var callbacks = pam_conv(
            conv: { count, messages, responses, context in
                guard let context else { return PAM_CONV_ERR }
                let conversation = Unmanaged<PAMConversation>.fromOpaque(context).takeUnretainedValue()
                return conversation.answer(count: Int(count), messages: messages, responses: responses)
            },
            appdata_ptr: Unmanaged.passUnretained(conversation).toOpaque())
        // PAM keeps a copy of the pam_conv structure; the conversation object outlives the
        // handle (the caller holds it until pam_end).
        return pam_start_confdir(service, account, &callbacks, configurationDirectory, &handle)
    }

    private func accountName() -> String? {
        if let user { return user.isEmpty ? nil : user }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let name = entry.pw_name
        else { return nil }
        return String(cString: name)
    }
}

/// One PAM transaction's conversation: answers the password prompts PAM's modules send by
/// asking the user through a ``PassphrasePrompt``.
final class PAMConversation {
    let prompt: PassphrasePrompt
    let reason: String
    let interactionAllowed: Bool
    /// The account whose password is asked, named in the prompt so that the user does not
    /// type the keychain passphrase instead; `nil` when not known.
    let account: String?
    /// Why the conversation could not answer (the user canceled, no prompt possible).
    private(set) var failure: AuthenticationFailure?

    init(prompt: PassphrasePrompt, reason: String, interactionAllowed: Bool, account: String? = nil) {
        self.prompt = prompt
        self.reason = reason
        self.interactionAllowed = interactionAllowed
        self.account = account
    }

    /// Fills in one `pam_response` per message (allocated with `malloc`, as PAM frees them with
    /// `free`), or returns `PAM_CONV_ERR` having allocated nothing.
    func answer(
        count: Int, messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
        responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?
    ) -> Int32 {
        guard count > 0, count <= Int(PAM_MAX_NUM_MSG), let messages, let responses else { return PAM_CONV_ERR }
        guard let replies = calloc(count, MemoryLayout<pam_response>.stride)?.bindMemory(to: pam_response.self, capacity: count)
        else { return PAM_BUF_ERR }
        for index in 0..<count {
            guard let message = messages[index]?.pointee else { continue }
            switch message.msg_style {
            case PAM_PROMPT_ECHO_OFF:
                let text = message.msg.map { String(cString: $0) } ?? "Password: "
                let question = account.map { "(login password for \($0)) " + text } ?? text
                let promptText = reason.isEmpty ? question : reason + "\n" + question
                do {
                    let secret = try prompt.read(prompt: promptText, interactionAllowed: interactionAllowed)
                    guard let copy = malloc(secret.count + 1) else {
                        Self.discard(replies, count: count)
                        return PAM_BUF_ERR
                    }
                    secret.withUnsafeBytes { bytes in
                        if bytes.count > 0 { copy.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                    }
                    copy.storeBytes(of: 0, toByteOffset: secret.count, as: UInt8.self)
                    replies[index].resp = copy.assumingMemoryBound(to: CChar.self)
                } catch {
                    failure = error
                    Self.discard(replies, count: count)
                    return PAM_CONV_ERR
                }
            case PAM_ERROR_MSG, PAM_TEXT_INFO:
                continue  // nothing to answer
            default:
                // A visible question (a user name, a one-time code) or a binary prompt: this
                // conversation answers only secret prompts.
                failure = .authenticationFailed
                Self.discard(replies, count: count)
                return PAM_CONV_ERR
            }
        }
        responses.pointee = replies
        return PAM_SUCCESS
    }

    /// Zeroes and frees the answers given so far.
    private static func discard(_ replies: UnsafeMutablePointer<pam_response>, count: Int) {
        for index in 0..<count {
            if let text = replies[index].resp {
                Sodium.zero(text, count: strlen(text))
                free(text)
            }
        }
        free(replies)
    }
}
#endif
