import Foundation
import KeychainServices
#if canImport(Glibc)
import Glibc
#endif

#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
/// The authenticators the tool's keychain calls use: those Keysmith ships, with the keychain
/// passphrase asked on the tool's standard input when that is a terminal (the shipped
/// prompt asks on the controlling terminal, or through `KEYSMITH_ASKPASS`).
enum TerminalAuthenticators {
    /// The list in force (the shipped one, unless a caller scoped its own); when standard
    /// input is a terminal, its keychain passphrase authenticator reads from it.
    static var list: KeychainAuthenticators {
        let current = KeychainAuthenticators.current
        guard isatty(STDIN_FILENO) == 1 else { return current }
        let terminal = KeychainPassphraseAuthenticator { text, interactionAllowed throws(AuthenticationFailure) in
            guard interactionAllowed else { throw .notInteractive }
            let typed: Data
            do {
                typed = try TerminalPrompt.read(promptText: text, confirmText: nil)
            } catch {
                throw .userCancel
            }
            return String(decoding: typed, as: UTF8.self)
        }
        return KeychainAuthenticators(
            current.authenticators.map { $0 is KeychainPassphraseAuthenticator ? terminal : $0 }, now: current.now)
    }
}
#endif
