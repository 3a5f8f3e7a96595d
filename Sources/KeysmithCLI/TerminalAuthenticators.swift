import Foundation
import KeychainServices
#if canImport(Glibc)
import Glibc
#endif

#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
/// The authenticators the tool's keychain calls use: those Keysmith ships, with the keychain
/// passphrase asked on the terminal (without echo) when an item's access control needs the
/// user.
enum TerminalAuthenticators {
    /// The list in force (the shipped one, unless a caller scoped its own), its keychain
    /// passphrase authenticator reading from the terminal.
    static var list: KeychainAuthenticators {
        let terminal = KeychainPassphraseAuthenticator { text, interactionAllowed throws(AuthenticationFailure) in
            guard interactionAllowed, hasTerminal else { throw .notInteractive }
            let typed: Data
            do {
                typed = try TerminalPrompt.read(promptText: text, confirmText: nil)
            } catch {
                throw .userCancel
            }
            return String(decoding: typed, as: UTF8.self)
        }
        let current = KeychainAuthenticators.current
        return KeychainAuthenticators(
            current.authenticators.map { $0 is KeychainPassphraseAuthenticator ? terminal : $0 }, now: current.now)
    }

    /// Whether a prompt can be shown: standard input is a terminal, or `/dev/tty` opens.
    private static var hasTerminal: Bool {
        if isatty(STDIN_FILENO) == 1 { return true }
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }
}
#endif
