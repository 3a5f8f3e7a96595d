import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// How `keysmith` takes a secret: from standard input (`--stdin`, or `-w -`), from a prompt
// on the terminal with echo off (`-w` as the last argument), or, discouraged, from the
// command line (`-w VALUE`, which prints a warning).

/// Where a command was told to take its secret from.
public enum SecretSource: Sendable, Hashable {
    /// The value was on the command line (`-w VALUE`): works, with a warning.
    case argument(String)
    /// Standard input (`--stdin` or `-w -`), one trailing newline removed.
    case standardInput
    /// A prompt on the terminal, without echo (`-w` with no value).
    case prompt

    /// The warning printed when a secret is passed on the command line.
    public static let argumentWarning =
        "a password given as '-w VALUE' lands in your shell history and is visible to other users in "
        + "the process list; prefer --stdin (printf '%s' \"$SECRET\" | keysmith ... --stdin) or put -w "
        + "last to be prompted without echo."
}

/// Reads secrets for commands. The standard-input reader can be replaced (the demo feeds
/// its own secret), the terminal prompt always talks to a real terminal.
public final class SecretInput {
    /// The largest secret read from standard input (16 MiB).
    public static let maximumLength = 16 * 1024 * 1024

    private let readAllStandardInput: () -> Data?
    private let standardInputIsTerminal: () -> Bool

    /// Creates a reader.
    /// - Parameters:
    ///   - readAllStandardInput: Reads standard input to its end (`nil` when it cannot be
    ///     read or is larger than ``maximumLength``).
    ///   - standardInputIsTerminal: Whether standard input is a terminal.
    public init(
        readAllStandardInput: @escaping () -> Data? = SecretInput.readDescriptorToEnd,
        standardInputIsTerminal: @escaping () -> Bool = { isatty(STDIN_FILENO) == 1 }
    ) {
        self.readAllStandardInput = readAllStandardInput
        self.standardInputIsTerminal = standardInputIsTerminal
    }

    /// Reads the secret from the given source.
    /// - Parameters:
    ///   - source: Where to read it from.
    ///   - promptText: The prompt, for example `password data for new item: `.
    ///   - confirmText: A second prompt asking to type it again (for new secrets), if any.
    ///   - output: Where the `-w VALUE` warning goes.
    /// - Returns: The secret's bytes.
    /// - Throws: ``CommandLineError`` when nothing could be read, the input was empty, the
    ///   two typed secrets differ, or there is no terminal to prompt on.
    public func read(_ source: SecretSource, promptText: String, confirmText: String?, output: Output)
        throws(CommandLineError) -> Data
    {
        switch source {
        case .argument(let value):
            output.warning(SecretSource.argumentWarning)
            guard !value.isEmpty else {
                throw .failure("the password given with -w is empty.", recovery: "give a password, or put -w last to be prompted.")
            }
            return Data(value.utf8)
        case .standardInput:
            if standardInputIsTerminal() {
                // Typing a secret into a terminal with echo on shows it; prompt instead.
                return try TerminalPrompt.read(promptText: promptText, confirmText: confirmText)
            }
            guard var data = readAllStandardInput() else {
                throw .failure(
                    "standard input could not be read, or is larger than 16 MiB.",
                    recovery: "pipe the secret itself: printf '%s' \"$SECRET\" | keysmith ... --stdin")
            }
            if data.last == 0x0A {
                data.removeLast()
                if data.last == 0x0D { data.removeLast() }
            }
            guard !data.isEmpty else {
                throw .failure(
                    "standard input was empty: no secret to store.",
                    recovery: "pipe the secret: printf '%s' \"$SECRET\" | keysmith ... --stdin, or put -w last to be prompted.")
            }
            return data
        case .prompt:
            return try TerminalPrompt.read(promptText: promptText, confirmText: confirmText)
        }
    }

    /// Reads file descriptor 0 to its end, up to ``maximumLength`` bytes.
    /// - Returns: The bytes, or `nil` on a read error or when the input is too long.
    public static func readDescriptorToEnd() -> Data? {
        var collected = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { readDescriptor(STDIN_FILENO, $0.baseAddress!, $0.count) }
            if count > 0 {
                collected.append(contentsOf: buffer[0..<count])
                if collected.count > maximumLength { return nil }
            } else if count == 0 {
                return collected
            } else if errno != EINTR {
                return nil
            }
        }
    }
}

/// The C `read`, renamed so it does not clash with ``SecretInput/read(_:promptText:confirmText:output:)``.
private func readDescriptor(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// A prompt on the terminal with echo off (termios), as `security` and `ssh` do.
///
/// The terminal is standard input when that is a terminal, else `/dev/tty`. The prompt is
/// written to the same terminal. Input is read a byte at a time in non-canonical mode with
/// echo and signals off, so Backspace, Ctrl-U (erase), Ctrl-C and Ctrl-D (cancel) are
/// handled here and the terminal settings are always restored before returning.
enum TerminalPrompt {
    static func read(promptText: String, confirmText: String?) throws(CommandLineError) -> Data {
        let terminal = try openTerminal()
        defer { if terminal.shouldClose { close(terminal.descriptor) } }
        let first = try readOnce(promptText, terminal: terminal.descriptor)
        guard !first.isEmpty else {
            throw .failure("no password was entered.", recovery: "type the password at the prompt, or use --stdin.")
        }
        if let confirmText {
            let second = try readOnce(confirmText, terminal: terminal.descriptor)
            guard second == first else {
                throw .failure("the two passwords typed differ; nothing was stored.", recovery: "run the command again and type the same password twice.")
            }
        }
        return first
    }

    private static func openTerminal() throws(CommandLineError) -> (descriptor: Int32, shouldClose: Bool) {
        if isatty(STDIN_FILENO) == 1 { return (STDIN_FILENO, false) }
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY)
        if descriptor >= 0 { return (descriptor, true) }
        throw .failure(
            "cannot prompt for the password: there is no terminal.",
            recovery: "pipe the secret with --stdin: printf '%s' \"$SECRET\" | keysmith ... --stdin")
    }

    private static func readOnce(_ promptText: String, terminal: Int32) throws(CommandLineError) -> Data {
        var original = termios()
        guard tcgetattr(terminal, &original) == 0 else {
            throw .failure("cannot turn off echo on the terminal.", recovery: "use --stdin instead of the prompt.")
        }
        var quiet = original
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        withUnsafeMutableBytes(of: &quiet.c_cc) { controlCharacters in
            controlCharacters[Int(VMIN)] = 1
            controlCharacters[Int(VTIME)] = 0
        }
        // Echo goes off before the prompt appears, so nothing typed after it is shown.
        guard tcsetattr(terminal, TCSANOW, &quiet) == 0 else {
            throw .failure("cannot turn off echo on the terminal.", recovery: "use --stdin instead of the prompt.")
        }
        writeText(promptText, to: terminal)
        var typed: [UInt8] = []
        defer {
            var original = original
            _ = tcsetattr(terminal, TCSANOW, &original)
            writeText("\n", to: terminal)
            typed.withUnsafeMutableBytes { buffer in
                for index in buffer.indices { buffer[index] = 0 }
            }
        }
        var byte: UInt8 = 0
        reading: while true {
            let count = readDescriptor(terminal, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { break reading }
            switch byte {
            case 0x0A, 0x0D:
                break reading
            case 0x03:  // Ctrl-C
                throw .failure("cancelled; nothing was stored.")
            case 0x04:  // Ctrl-D
                if typed.isEmpty { throw .failure("cancelled; nothing was stored.") }
            case 0x7F, 0x08:  // Backspace: drop one character (its UTF-8 continuation bytes too)
                while let last = typed.popLast(), last & 0xC0 == 0x80 {}
            case 0x15:  // Ctrl-U
                typed.removeAll()
            default:
                typed.append(byte)
            }
        }
        return Data(typed)
    }

    private static func writeText(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        if written < 0 {
            FileDescriptorSink(STDERR_FILENO).write(bytes)
        }
    }
}
