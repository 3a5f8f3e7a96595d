import Foundation
import KeychainServices

/// Why a credential helper could not do what it was asked: what happened and what to do,
/// never a secret.
///
/// Helpers print ``message`` (on standard error for git, on standard output for Docker,
/// which reads it there) and exit with status 1.
public struct HelperFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The whole message: what happened, why, and what to do.
    public let message: String

    /// Creates a failure with a message.
    /// - Parameter message: What happened, why and what to do; never a secret.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }

    /// The failure of a keychain call: the action, the `OSStatus` with Apple's text, and
    /// the keychain's own cause and fix when it has them.
    /// - Parameters:
    ///   - action: What the helper was doing, such as `store the credential`.
    ///   - status: The `OSStatus` the call returned.
    /// - Returns: The failure to report.
    static func keychain(_ action: String, _ status: OSStatus) -> HelperFailure {
        var text = "keysmith: could not \(action): "
        let apple = (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
        text += "\(apple) (\(status))."
        var explained = false
        #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
        if let cause = KeychainDiagnostics.lastFailureDescription, !cause.isEmpty { text += " \(cause)" }
        if let recovery = KeychainDiagnostics.lastFailureRecovery, !recovery.isEmpty {
            text += " \(recovery)"
            explained = true
        }
        #endif
        if status == errSecInteractionNotAllowed, !explained {
            text += " The keychain is locked or cannot be used from this session; unlock it and try again."
        }
        return HelperFailure(text)
    }
}
