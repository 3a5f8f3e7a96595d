#if !canImport(Security)
import CTerminalGuard
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Asks the user for a secret (the keychain passphrase, the login password) without showing it.
///
/// Two ways, in this order:
/// - **An askpass program**, when `KEYSMITH_ASKPASS` names one (the convention of `ssh`'s
///   `SSH_ASKPASS` and `sudo`'s `SUDO_ASKPASS`): it is run with the prompt text as its only
///   argument and standard input from `/dev/null`; what it prints on standard output is the
///   secret (one trailing newline removed); a non-zero exit means the user canceled.
/// - **The controlling terminal** (`/dev/tty`): the prompt is written there, never to standard
///   output, and the secret is read with echo off. Backspace and Ctrl-U edit, Enter ends,
///   Ctrl-C, and Ctrl-D on an empty line, cancel. The terminal's mode is put back on every way
///   out, including SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGTSTP sent meanwhile (they are
///   raised again afterwards, so the process reacts to them as usual).
///
/// The secret is kept only in zeroing buffers (``SecretKey``, `sodium_malloc` memory), never in
/// a `String`.
struct PassphrasePrompt: Sendable {
    /// The askpass program (`KEYSMITH_ASKPASS`), or `nil`.
    let askpassProgram: String?
    /// `PATH` when the prompt was made: a program name without a slash is looked up in its
    /// absolute directories, as `ssh` does for `SSH_ASKPASS`; never in the current directory.
    let searchPath: String?
    /// The terminal to prompt on.
    let terminalPath: String

    /// The longest secret accepted (bytes); longer input cancels, as no real passphrase is that long.
    static let maximumLength = 64 * 1024

    /// Creates a prompt.
    /// - Parameters:
    ///   - environment: Where `KEYSMITH_ASKPASS` is read (an empty value counts as unset).
    ///   - terminalPath: The terminal to prompt on.
    init(environment: [String: String], terminalPath: String = "/dev/tty") {
        self.init(askpass: environment["KEYSMITH_ASKPASS"], searchPath: environment["PATH"], terminalPath: terminalPath)
    }

    /// Creates a prompt with `KEYSMITH_ASKPASS` from this process's environment (read alone:
    /// every process that opens a keychain makes one, and converting the whole environment
    /// costs far more than reading one variable).
    /// - Parameter terminalPath: The terminal to prompt on.
    init(terminalPath: String = "/dev/tty") {
        self.init(
            askpass: getenv("KEYSMITH_ASKPASS").map { String(cString: $0) }, searchPath: getenv("PATH").map { String(cString: $0) },
            terminalPath: terminalPath)
    }

    private init(askpass: String?, searchPath: String?, terminalPath: String) {
        let askpass = askpass ?? ""
        self.askpassProgram = askpass.isEmpty ? nil : askpass
        self.searchPath = searchPath
        self.terminalPath = terminalPath
    }

    /// The file to run for `program`: itself when it holds a slash (a path, as given), else
    /// the first executable regular file of that name in an absolute directory of ``searchPath``
    /// (empty and relative entries, which would mean the current directory, are skipped);
    /// `nil` when there is none.
    func resolvedAskpass(_ program: String) -> String? {
        if program.utf8.contains(UInt8(ascii: "/")) { return program }
        for directory in (searchPath ?? "").split(separator: ":", omittingEmptySubsequences: true)
        where directory.hasPrefix("/") {
            let candidate = directory.hasSuffix("/") ? String(directory) + program : String(directory) + "/" + program
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Asks for a secret and returns it.
    /// - Parameters:
    ///   - prompt: The text shown (with the reason the app gave); not a secret.
    ///   - interactionAllowed: When `false`, nothing is shown and ``AuthenticationFailure/notInteractive`` is thrown.
    /// - Returns: The secret's bytes, without the ending newline.
    /// - Throws: ``AuthenticationFailure/notInteractive`` when interaction is not allowed or
    ///   neither the askpass program nor a terminal can be used; ``AuthenticationFailure/userCancel``
    ///   on Ctrl-C, end of input, or an askpass program that exits with an error;
    ///   ``AuthenticationFailure/systemCancel`` when a signal interrupts the prompt.
    func read(prompt: String, interactionAllowed: Bool) throws(AuthenticationFailure) -> SecretKey {
        guard interactionAllowed else { throw .notInteractive }
        if let askpassProgram, let secret = try runAskpass(askpassProgram, prompt: prompt) {
            return secret
        }
        let terminal = open(terminalPath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { throw .notInteractive }
        defer { close(terminal) }
        guard isatty(terminal) == 1 else { throw .notInteractive }
        return try readFromTerminal(terminal, prompt: prompt)
    }

    // MARK: - Terminal

    private func readFromTerminal(_ terminal: Int32, prompt: String) throws(AuthenticationFailure) -> SecretKey {
        // Echo goes off before the prompt appears, so nothing typed after it is shown.
        guard keysmith_terminal_quiet_begin(terminal) == 0 else { throw .notInteractive }
        let line = SecretAccumulator()
        var outcome: AuthenticationFailure?
        write(prompt, to: terminal)
        var byte: UInt8 = 0
        reading: while true {
            let count = keysmith_terminal_read_byte(&byte)
            if count == -2 {
                outcome = .systemCancel
                break
            }
            // End of input, a hangup or a read error before Enter: not the secret the user meant.
            guard count == 1 else {
                outcome = .userCancel
                break
            }
            switch byte {
            case 0x0A, 0x0D:
                break reading
            case 0x03:  // Ctrl-C
                outcome = .userCancel
                break reading
            case 0x04:  // Ctrl-D: end of input on an empty line
                if line.isEmpty {
                    outcome = .userCancel
                    break reading
                }
            case 0x7F, 0x08:  // Backspace: one character, with its UTF-8 continuation bytes
                line.removeLastCharacter()
            case 0x15:  // Ctrl-U
                line.removeAll()
            default:
                if !line.append(byte) {
                    outcome = .userCancel
                    break reading
                }
            }
        }
        byte = 0
        let interrupting = keysmith_terminal_quiet_end()
        if interrupting == 0 { write("\n", to: terminal) }
        if let outcome { throw outcome }
        return line.secret(strippingNewline: false)
    }

    private func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { break }
            offset += written
        }
        bytes.removeAll()
    }

    // MARK: - Askpass

    /// Runs the askpass program. `nil` when it cannot be started (then the terminal is tried).
    private func runAskpass(_ name: String, prompt: String) throws(AuthenticationFailure) -> SecretKey? {
        guard let program = resolvedAskpass(name) else { return nil }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return nil }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        // Not inherited by other programs this process starts meanwhile (the child gets the
        // write end as its standard output through dup2, which clears the flag).
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup(prompt)]
        defer { arguments.forEach { free($0) } }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments + [nil]
        var child: pid_t = 0
        var spawned = posix_spawn(&child, program, &actions, nil, &argv, environ)
        // ETXTBSY: the program was just written and another thread's child still holds it
        // open for a moment (until that child runs exec); the file is fine, try again.
        var attempts = 1
        while spawned == ETXTBSY && attempts < 200 {
            sched_yield()
            spawned = posix_spawn(&child, program, &actions, nil, &argv, environ)
            attempts += 1
        }
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            return nil
        }
        let output = SecretAccumulator()
        var tooLong = false
        let chunk = SecretKey(uninitializedCount: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            chunk.withUnsafeBytes { bytes in
                for byte in bytes.prefix(count) where !tooLong {
                    if !output.append(byte) { tooLong = true }
                }
            }
        }
        close(readEnd)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        // Exited normally with status 0: WIFEXITED and WEXITSTATUS == 0 is a status of 0.
        guard status == 0, !tooLong else { throw .userCancel }
        return output.secret(strippingNewline: true)
    }
}

/// A growing buffer of secret bytes in `sodium_malloc` memory; every buffer it leaves
/// behind is zeroed when freed.
private final class SecretAccumulator {
    private var storage = SecretKey(uninitializedCount: 256)
    private var count = 0

    var isEmpty: Bool { count == 0 }

    /// Appends a byte; `false` when the secret would exceed ``PassphrasePrompt/maximumLength``.
    func append(_ byte: UInt8) -> Bool {
        guard count < PassphrasePrompt.maximumLength else { return false }
        if count == storage.count {
            let larger = SecretKey(uninitializedCount: storage.count * 2)
            larger.withUnsafeMutableBytes { target in
                storage.withUnsafeBytes { source in
                    target.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: count)
                }
            }
            storage = larger  // the old buffer is zeroed by sodium_free
        }
        storage.withUnsafeMutableBytes { $0[count] = byte }
        count += 1
        return true
    }

    /// Drops the last character (a UTF-8 lead byte and its continuation bytes).
    func removeLastCharacter() {
        while count > 0 {
            count -= 1
            let byte = storage.withUnsafeMutableBytes { bytes -> UInt8 in
                let value = bytes[count]
                bytes[count] = 0
                return value
            }
            if byte & 0xC0 != 0x80 { break }
        }
    }

    func removeAll() {
        storage.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: count) }
        count = 0
    }

    /// The bytes as a key of their exact length.
    func secret(strippingNewline: Bool) -> SecretKey {
        var length = count
        if strippingNewline, length > 0 {
            storage.withUnsafeBytes { bytes in
                if bytes[length - 1] == 0x0A {
                    length -= 1
                    if length > 0 && bytes[length - 1] == 0x0D { length -= 1 }
                }
            }
        }
        return storage.withUnsafeBytes { SecretKey(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }
}
#endif
