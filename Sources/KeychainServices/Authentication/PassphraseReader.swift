#if !canImport(Security)
import Foundation

/// How ``KeychainPassphraseAuthenticator`` gets a passphrase typed: a function of the
/// prompt and whether interaction is allowed, returning the passphrase or throwing
/// ``AuthenticationFailure/notInteractive`` (no terminal, no askpass program, interaction
/// not allowed) or ``AuthenticationFailure/userCancel`` (end of input, Ctrl-C).
struct PassphraseReader: Sendable {
    let read: @Sendable (_ prompt: String, _ interactionAllowed: Bool) throws(AuthenticationFailure) -> String

    init(_ read: @escaping @Sendable (_ prompt: String, _ interactionAllowed: Bool) throws(AuthenticationFailure) -> String) {
        self.read = read
    }

    /// The reader of the shipped authenticator: ``PassphrasePrompt`` (the controlling
    /// terminal without echo, or the `KEYSMITH_ASKPASS` program), with the environment of the
    /// moment it asks.
    static let standard = PassphraseReader { prompt, interactionAllowed throws(AuthenticationFailure) in
        let typed = try PassphrasePrompt().read(prompt: prompt, interactionAllowed: interactionAllowed)
        return typed.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// A reader that answers from a list, for tests; an exhausted list is a cancel.
    static func scripted(_ answers: [String]) -> (reader: PassphraseReader, prompts: ScriptedPrompts) {
        let prompts = ScriptedPrompts(answers)
        return (PassphraseReader { prompt, interactionAllowed throws(AuthenticationFailure) in
            guard interactionAllowed else { throw .notInteractive }
            return try prompts.next(prompt)
        }, prompts)
    }
}

/// The answers of a scripted passphrase reader and the prompts it was shown.
final class ScriptedPrompts: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [String]
    private var shown: [String] = []

    init(_ answers: [String]) { self.answers = answers }

    func next(_ prompt: String) throws(AuthenticationFailure) -> String {
        lock.lock()
        defer { lock.unlock() }
        shown.append(prompt)
        guard !answers.isEmpty else { throw .userCancel }
        return answers.removeFirst()
    }

    /// The prompts shown so far.
    var prompts: [String] {
        lock.lock()
        defer { lock.unlock() }
        return shown
    }
}
#endif
