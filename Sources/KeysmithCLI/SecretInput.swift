import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// How `keysmith` takes a secret: from standard input as a line (`--stdin`, or `-w -`: one
// trailing newline, LF or CR LF, is removed, for people and `echo`), from standard input
// byte for byte (`--stdin-exact`, for programs), from a prompt on the terminal with echo off
// (`-w` as the last argument), or, discouraged, from the command line (`-w VALUE`, which
// prints a warning).

/// Where a command was told to take its secret from.
public enum SecretSource: Sendable, Hashable {
    /// The value was on the command line (`-w VALUE`): works, with a warning.
    case argument(String)
    /// Standard input as a line (`--stdin` or `-w -`): one trailing newline, LF or CR LF, is
    /// removed. On a terminal, a prompt without echo.
    case standardInput
    /// Standard input byte for byte (`--stdin-exact`): nothing is removed, and a terminal is
    /// refused (it would end the secret at Enter).
    case exactStandardInput
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
    /// The `--stdin-exact` option of a command that stores a secret.
    /// - Parameter what: What the command stores, for the help ("secret", "key").
    /// - Returns: The option.
    public static func exactOption(of what: String) -> OptionSpec {
        OptionSpec(
            name: "stdin-exact", long: "stdin-exact",
            help: "Read the \(what) from standard input byte for byte, for programs: nothing is removed, a trailing "
                + "newline or carriage return included. A terminal is refused (use --stdin to be prompted).")
    }

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
    ///   - otherWay: The other way this command takes a secret, for the hint when standard
    ///     input is empty (default: the `-w` prompt of the item commands).
    /// - Returns: The secret's bytes.
    /// - Throws: ``CommandLineError`` when nothing could be read, the input was empty, the
    ///   two typed secrets differ, or there is no terminal to prompt on.
    public func read(
        _ source: SecretSource, promptText: String, confirmText: String?, output: Output,
        otherWay: String = "or put -w last to be prompted"
    ) throws(CommandLineError) -> Data {
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
                    recovery: "pipe the secret: printf '%s' \"$SECRET\" | keysmith ... --stdin, \(otherWay).")
            }
            return data
        case .exactStandardInput:
            if standardInputIsTerminal() {
                throw .failure(
                    "--stdin-exact reads a pipe or a file, not a terminal: typing would end the secret at Enter.",
                    recovery: "pipe the bytes (keysmith ... --stdin-exact < FILE), or use --stdin to be prompted without echo.")
            }
            guard let data = readAllStandardInput() else {
                throw .failure(
                    "standard input could not be read, or is larger than 16 MiB.",
                    recovery: "pipe the secret itself: keysmith ... --stdin-exact < FILE")
            }
            guard !data.isEmpty else {
                throw .failure(
                    "standard input was empty: no secret to store.",
                    recovery: "pipe the secret's bytes: keysmith ... --stdin-exact < FILE, \(otherWay).")
            }
            return data
        case .prompt:
            return try TerminalPrompt.read(promptText: promptText, confirmText: confirmText)
        }
    }

    /// Standard input to its end, as this reader gets it (the demo feeds its own), up to
    /// ``maximumLength`` bytes; `nil` when it cannot be read or is too long.
    public func readStandardInputToEnd() -> Data? { readAllStandardInput() }

    /// Reads file descriptor 0 to its end, up to ``maximumLength`` bytes.
    /// - Returns: The bytes, or `nil` on a read error or when the input is too long.
    public static func readDescriptorToEnd() -> Data? {
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        return readToEnd(STDIN_FILENO, scratch: &scratch)
    }

    /// Reads `descriptor` to its end, up to ``maximumLength`` bytes, through `scratch`.
    ///
    /// Every buffer that held secret bytes is zeroed before it is let go: `scratch` on
    /// return, and the collected bytes whenever they move to a larger buffer (or are
    /// dropped because the input is too long or could not be read).
    /// - Parameters:
    ///   - descriptor: The file descriptor to read.
    ///   - scratch: The chunk buffer (not empty); all zeros on return.
    /// - Returns: The bytes, or `nil` on a read error or when the input is too long.
    static func readToEnd(_ descriptor: Int32, scratch: inout [UInt8]) -> Data? {
        precondition(!scratch.isEmpty, "the scratch buffer may not be empty")
        defer { scratch.withUnsafeMutableBytes { wipeMemory($0) } }
        var collected = SecretBytes(capacity: scratch.count)
        while true {
            let count = scratch.withUnsafeMutableBytes { readDescriptor(descriptor, $0.baseAddress!, $0.count) }
            if count > 0 {
                guard collected.count + count <= maximumLength else {
                    collected.wipe()
                    return nil
                }
                scratch.withUnsafeBytes { collected.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            } else if count == 0 {
                defer { collected.wipe() }
                return collected.data()
            } else if errno != EINTR {
                collected.wipe()
                return nil
            }
        }
    }
}

/// Zeroes memory in a way the optimiser does not remove (the bytes are read back).
func wipeMemory(_ buffer: UnsafeMutableRawBufferPointer) {
    guard !buffer.isEmpty else { return }
    buffer.initializeMemory(as: UInt8.self, repeating: 0)
    withExtendedLifetime(buffer) {
        var sum: UInt8 = 0
        for byte in buffer { sum |= byte }
        precondition(sum == 0)
    }
}

/// A growable byte buffer for secrets: when it grows, the old storage is zeroed before it
/// is released, and ``wipe()`` zeroes everything it ever held (capacity included), so no
/// copy of a secret is left behind in freed memory.
struct SecretBytes {
    /// The storage; only the first ``count`` bytes are in use, the rest are zero.
    private(set) var storage: [UInt8]
    /// The number of bytes held.
    private(set) var count = 0

    init(capacity: Int = 256) {
        storage = [UInt8](repeating: 0, count: max(capacity, 16))
    }

    var isEmpty: Bool { count == 0 }

    /// The bytes held.
    var bytes: ArraySlice<UInt8> { storage[0..<count] }

    private mutating func reserve(_ needed: Int) {
        guard needed > storage.count else { return }
        var larger = [UInt8](repeating: 0, count: max(needed, storage.count * 2))
        larger.withUnsafeMutableBytes { target in
            storage.withUnsafeMutableBytes { source in
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<count]))
                wipeMemory(source)
            }
        }
        storage = larger
    }

    mutating func append(_ byte: UInt8) {
        reserve(count + 1)
        storage[count] = byte
        count += 1
    }

    mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        reserve(count + bytes.count)
        storage.withUnsafeMutableBytes { target in
            UnsafeMutableRawBufferPointer(rebasing: target[count..<(count + bytes.count)]).copyMemory(from: bytes)
        }
        count += bytes.count
    }

    /// Removes the last byte (zeroing it) and returns it.
    mutating func popLast() -> UInt8? {
        guard count > 0 else { return nil }
        count -= 1
        let byte = storage[count]
        storage[count] = 0
        return byte
    }

    /// Zeroes every byte and empties the buffer (the storage is kept).
    mutating func wipe() {
        storage.withUnsafeMutableBytes { wipeMemory($0) }
        count = 0
    }

    /// A copy of the bytes (the caller zeroes it after use).
    func data() -> Data { Data(storage[0..<count]) }
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
        var first = try readOnce(promptText, terminal: terminal.descriptor)
        guard !first.isEmpty else {
            throw .failure("no password was entered.", recovery: "type the password at the prompt, or use --stdin.")
        }
        if let confirmText {
            var second: Data
            do {
                second = try readOnce(confirmText, terminal: terminal.descriptor)
            } catch {
                first.resetBytes(in: 0..<first.count)
                throw error
            }
            defer { second.resetBytes(in: 0..<second.count) }
            guard second == first else {
                first.resetBytes(in: 0..<first.count)
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
        var line = PromptLine()
        var byte: UInt8 = 0
        defer {
            var original = original
            _ = tcsetattr(terminal, TCSANOW, &original)
            writeText("\n", to: terminal)
            line.wipe()
            byte = 0
        }
        reading: while true {
            let count = readDescriptor(terminal, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            // The terminal went away (hangup, read error) before Enter: what was typed so far
            // is not the secret the person meant, so nothing is stored.
            guard count == 1 else {
                throw .failure("the terminal closed before the secret was entered; nothing was stored.",
                               recovery: "run the command again, or pass the secret with --stdin.")
            }
            switch line.feed(byte) {
            case .more: continue
            case .done: break reading
            case .cancelled: throw .failure("cancelled; nothing was stored.")
            }
        }
        return line.data()
    }

    private static func writeText(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        if written < 0 {
            FileDescriptorSink(STDERR_FILENO).write(bytes)
        }
    }
}

/// The line typed at a prompt, with the prompt's editing keys. Kept in ``SecretBytes``, so
/// erased characters, the buffer left behind when it grows and the whole line at the end
/// are zeroed.
struct PromptLine {
    enum Step: Equatable { case more, done, cancelled }

    private(set) var typed = SecretBytes()

    var isEmpty: Bool { typed.isEmpty }

    /// Takes one byte typed at the prompt.
    mutating func feed(_ byte: UInt8) -> Step {
        switch byte {
        case 0x0A, 0x0D:
            return .done
        case 0x03:  // Ctrl-C
            return .cancelled
        case 0x04:  // Ctrl-D
            return typed.isEmpty ? .cancelled : .more
        case 0x7F, 0x08:  // Backspace: drop one character (its UTF-8 continuation bytes too)
            while let last = typed.popLast(), last & 0xC0 == 0x80 {}
            return .more
        case 0x15:  // Ctrl-U
            typed.wipe()
            return .more
        default:
            typed.append(byte)
            return .more
        }
    }

    /// A copy of the line (the caller zeroes it after use).
    func data() -> Data { typed.data() }

    /// Zeroes the line.
    mutating func wipe() { typed.wipe() }
}
