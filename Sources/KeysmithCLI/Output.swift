import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Everything `keysmith` writes goes through `Output`: data and tables to standard output,
// errors, warnings and progress to standard error. Nothing here ever sees a secret unless a
// command was asked to reveal one (-w, -g, -d), and then only through `writeSecret`.

/// Where text goes: a file descriptor, or a buffer (the demo and tests capture output).
public protocol TextSink: AnyObject {
    /// Writes bytes as they are.
    /// - Parameter bytes: The bytes to write.
    func write(_ bytes: [UInt8])
    /// Whether the sink is a terminal (progress is shown only on terminals).
    var isTerminal: Bool { get }
    /// Why a write failed (`No space left on device`), or `nil` while every write succeeded.
    var writeFailure: String? { get }
}

extension TextSink {
    /// A sink that cannot fail never reports a failure.
    public var writeFailure: String? { nil }
}

/// A sink writing to a file descriptor (1 or 2), retrying short and interrupted writes, and
/// remembering the first write that failed.
public final class FileDescriptorSink: TextSink {
    private let descriptor: Int32
    /// Why the first failed write failed (`strerror` of its `errno`), or `nil`.
    public private(set) var writeFailure: String?

    /// Creates a sink for a file descriptor.
    /// - Parameter descriptor: The descriptor, for example `STDOUT_FILENO`.
    public init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Writes every byte, retrying after `EINTR`. Any other error stops the write and is
    /// remembered in ``writeFailure`` (the run then ends with exit status 1: a script must
    /// never take a failed write for output); later writes are not attempted.
    public func write(_ bytes: [UInt8]) {
        guard writeFailure == nil else { return }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    let code = written < 0 ? errno : EIO
                    writeFailure = String(cString: strerror(code))
                    return
                }
            }
        }
    }

    /// Whether the descriptor is a terminal (`isatty`).
    public var isTerminal: Bool { isatty(descriptor) == 1 }
}

/// The C `write`, renamed so it does not clash with ``TextSink/write(_:)``.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

/// A sink that keeps what is written, for the demo's indented transcript.
public final class BufferSink: TextSink {
    /// Everything written so far.
    public private(set) var bytes: [UInt8] = []
    /// Always `false`: a buffer is not a terminal.
    public var isTerminal: Bool { false }

    /// Creates an empty buffer.
    public init() {}

    /// Appends bytes.
    /// - Parameter bytes: The bytes to keep.
    public func write(_ bytes: [UInt8]) {
        self.bytes.append(contentsOf: bytes)
    }

    /// The text written so far (invalid UTF-8 is repaired).
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// The output channels of one `keysmith` run, with the `--json` and `--quiet` settings.
public final class Output {
    /// Where data goes.
    public let standardOutput: TextSink
    /// Where errors, warnings and progress go.
    public let standardError: TextSink
    /// `--json`: data is printed as JSON instead of tables.
    public var json: Bool
    /// `--quiet`: informational output is left out (data asked for with -w still prints).
    public var quiet: Bool
    private var pending: [UInt8] = []

    /// Creates the output channels.
    /// - Parameters:
    ///   - standardOutput: The sink for data.
    ///   - standardError: The sink for errors, warnings and progress.
    ///   - json: Whether data is printed as JSON.
    ///   - quiet: Whether informational output is left out.
    public init(standardOutput: TextSink, standardError: TextSink, json: Bool = false, quiet: Bool = false) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.json = json
        self.quiet = quiet
    }

    /// The process's own standard output and standard error.
    public static func process() -> Output {
        Output(standardOutput: FileDescriptorSink(STDOUT_FILENO), standardError: FileDescriptorSink(STDERR_FILENO))
    }

    /// Prints one line of data on standard output (always, even with `--quiet`). Control
    /// characters in it are shown escaped (see ``TerminalText``), so no value can drive the
    /// terminal or start a line of its own.
    /// - Parameter line: The text, without the newline.
    public func data(_ line: String) {
        pending.append(contentsOf: Array(TerminalText.escaped(line).utf8))
        pending.append(0x0A)
        if pending.count >= 64 * 1024 { flush() }
    }

    /// Prints lines of the tool's own text (help, a JSON document) on standard output, always:
    /// each line as ``data(_:)`` prints it, so only the line breaks of `text` itself count.
    /// - Parameter text: The lines, separated by newlines, without a final newline.
    public func block(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { data(String(line)) }
    }

    /// Prints one informational line on standard output, unless `--quiet`.
    /// - Parameter line: The text, without the newline.
    public func info(_ line: String) {
        guard !quiet else { return }
        data(line)
    }

    /// Prints one line that a reveal flag (`-d`) asked for: like ``info(_:)``, but also with
    /// `--quiet`.
    /// - Parameter line: The text, without the newline.
    public func revealed(_ line: String) {
        data(line)
    }

    /// Why writing standard output failed, or `nil` when every write succeeded (call after
    /// ``flush()``).
    public var standardOutputFailure: String? { standardOutput.writeFailure }

    /// Prints a secret the user explicitly asked for (`-w`): its exact bytes plus a newline.
    ///
    /// A secret is written by whoever stored the item (any program in a shared access
    /// group), so on a terminal it could hold escape sequences that drive the terminal. When
    /// standard output is a terminal and the secret holds control characters (or bytes that
    /// are not UTF-8), it is shown escaped instead (``TerminalText``; `0x…` hexadecimal for
    /// bytes that are not UTF-8, as macOS `security` prints such passwords), with a note on
    /// standard error. Redirected or piped, the exact bytes are written, so
    /// `KEY=$(keysmith … -w)` and `… -w > key.file` get the secret itself.
    /// - Parameter secret: The bytes.
    public func writeSecret(_ secret: Data) {
        if standardOutput.isTerminal, let shown = Self.terminalForm(ofSecret: secret) {
            warning(
                "the secret holds control characters or bytes that are not UTF-8, so it is shown escaped on the "
                    + "terminal; redirect or pipe standard output (> FILE, | COMMAND) to get its exact bytes.")
            pending.append(contentsOf: Array(shown.utf8))
        } else {
            pending.append(contentsOf: secret)
        }
        pending.append(0x0A)
        flush()
    }

    /// How a secret is shown on a terminal, or `nil` when its bytes are safe to show as they
    /// are (UTF-8 without control characters).
    static func terminalForm(ofSecret secret: Data) -> String? {
        guard let text = String(data: secret, encoding: .utf8) else {
            return "0x" + secret.map { String(format: "%02x", $0) }.joined()
        }
        guard text.unicodeScalars.contains(where: TerminalText.isControl) else { return nil }
        return TerminalText.escaped(text)
    }

    /// Prints a JSON document on standard output (sorted keys, two-space indentation),
    /// unless `--quiet` (or also then, when a reveal flag asked for it).
    /// - Parameters:
    ///   - object: A JSON-compatible tree of dictionaries, arrays, strings, numbers and
    ///     booleans.
    ///   - revealed: Whether a reveal flag (`-d`) asked for this document.
    public func printJSON(_ object: Any, revealed: Bool = false) {
        guard !quiet || revealed else { return }
        block(JSONText.render(object))
    }

    /// Prints a line on standard error (flushing standard output first, so the two stay in
    /// order on a terminal); control characters are shown escaped.
    /// - Parameter line: The text, without the newline.
    public func error(_ line: String) {
        flush()
        standardError.write(Array(TerminalText.escaped(line).utf8) + [0x0A])
    }

    /// Prints a warning on standard error: `keysmith: warning: …`.
    /// - Parameter text: The warning.
    public func warning(_ text: String) {
        error("keysmith: warning: \(text)")
    }

    /// Writes everything buffered for standard output.
    public func flush() {
        guard !pending.isEmpty else { return }
        standardOutput.write(pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// A progress line for a long operation: drawn on standard error only when it is a
    /// terminal and `--quiet` is off; otherwise every call does nothing.
    /// - Parameters:
    ///   - label: What is happening, for example `Reading items`.
    ///   - total: The number of steps, if known.
    /// - Returns: The progress line.
    public func progress(_ label: String, total: Int? = nil) -> ProgressLine {
        ProgressLine(label: label, total: total, sink: (standardError.isTerminal && !quiet) ? standardError : nil)
    }
}

/// A one-line progress display on a terminal (`Reading items 1200/5000 (24%)`), first drawn
/// when the operation has taken 0.3 s, redrawn at most ten times a second, and erased by
/// ``finish()``.
public final class ProgressLine {
    private let label: String
    private let total: Int?
    private let sink: TextSink?
    private let started = DispatchTime.now().uptimeNanoseconds
    private var lastDraw: UInt64 = 0
    private var drawn = false

    /// Nothing is drawn for operations that end within this time (no flicker).
    private static let delayBeforeFirstDraw: UInt64 = 300_000_000

    init(label: String, total: Int?, sink: TextSink?) {
        self.label = label
        self.total = total
        self.sink = sink
    }

    /// Whether anything is drawn at all (a terminal, not `--quiet`).
    public var isVisible: Bool { sink != nil }

    /// Reports progress.
    /// - Parameter completed: Steps done so far.
    public func update(_ completed: Int) {
        draw(completed: completed, force: false)
    }

    /// Erases the line.
    public func finish() {
        guard let sink, drawn else { return }
        sink.write(Array("\r\u{1B}[K".utf8))
        drawn = false
    }

    private func draw(completed: Int, force: Bool) {
        guard let sink else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        if now - started < Self.delayBeforeFirstDraw { return }
        if !force && now - lastDraw < 100_000_000 { return }
        lastDraw = now
        var text = "\r\u{1B}[K\(label)"
        if let total, total > 0 {
            text += " \(completed)/\(total) (\(completed * 100 / total)%)"
        } else {
            text += "..."
        }
        sink.write(Array(text.utf8))
        drawn = true
    }
}

/// Aligned two-column text: `name  value` rows whose values start in one column.
public struct KeyValueTable: Sendable {
    /// The rows, in order.
    public var rows: [(key: String, value: String)] = []

    /// Creates an empty table.
    public init() {}

    /// Adds a row.
    /// - Parameters:
    ///   - key: The label.
    ///   - value: The value.
    public mutating func add(_ key: String, _ value: String) {
        rows.append((key, value))
    }

    /// The table as lines: each key padded to the longest key, two spaces, the value.
    /// - Parameter indent: Spaces before each line.
    /// - Returns: One line per row.
    public func lines(indent: Int = 0) -> [String] {
        let width = rows.map(\.key.count).max() ?? 0
        let prefix = String(repeating: " ", count: indent)
        return rows.map { row in
            prefix + row.key + String(repeating: " ", count: width - row.key.count + 2) + row.value
        }
    }
}

/// Aligned columns with a header row, for listings.
public struct ColumnTable: Sendable {
    /// The column titles.
    public let headers: [String]
    /// The rows; each has one cell per header.
    public var rows: [[String]] = []

    /// Creates a table with the given column titles.
    /// - Parameter headers: The titles.
    public init(headers: [String]) {
        self.headers = headers
    }

    /// Adds a row (missing cells are blank).
    /// - Parameter cells: The cells, left to right.
    public mutating func add(_ cells: [String]) {
        rows.append(cells)
    }

    /// The table as lines, columns separated by two spaces, trailing spaces removed.
    /// - Parameter indent: Spaces before each line.
    /// - Returns: The header line followed by one line per row.
    public func lines(indent: Int = 0) -> [String] {
        var widths = headers.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        let prefix = String(repeating: " ", count: indent)
        func render(_ cells: [String]) -> String {
            var line = ""
            for column in headers.indices {
                let cell = column < cells.count ? cells[column] : ""
                line += cell
                if column < headers.count - 1 {
                    line += String(repeating: " ", count: widths[column] - cell.count + 2)
                }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return prefix + line
        }
        return [render(headers)] + rows.map(render)
    }
}

/// Stable JSON text: sorted keys, two-space indentation, `/` not escaped.
public enum JSONText {
    /// Renders a JSON-compatible tree.
    /// - Parameter object: Dictionaries with string keys, arrays, strings, numbers, booleans
    ///   and `NSNull`.
    /// - Returns: The JSON text (without a trailing newline); `null` when the tree is not
    ///   valid JSON (which is a programming error in the caller, never a crash).
    public static func render(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        else { return "null" }
        // JSON escapes only C0 controls; DEL, C1 controls and bidirectional overrides would
        // reach a terminal raw, so they become \u escapes too (same string for a parser).
        let text = String(decoding: data, as: UTF8.self)
        guard text.unicodeScalars.contains(where: { $0.value >= 0x7F && TerminalText.isControl($0) }) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x7F && TerminalText.isControl(scalar) {
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// Text made safe for a terminal: control characters shown as escapes.
///
/// Attribute values come from whoever wrote the item (any program in a shared access group),
/// so they may hold escape sequences that retitle, clear or recolour the terminal, or a
/// newline that forges an extra output line (a fake `password:` row). Human output shows
/// them as `\e`, `\n`, `\r`, `\t`, `\xHH` (other C0 and C1 controls, DEL) and `\u{HHHH}`
/// (the bidirectional overrides that reorder what is shown). JSON output needs none of
/// this: its strings are escaped by construction.
public enum TerminalText {
    /// `text` with every control character replaced by its escape.
    /// - Parameter text: The text.
    /// - Returns: The text as it is safe to print.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x1B: result += "\\e"
            case 0..<0x100: result += "\\x" + hex(scalar.value, digits: 2)
            default: result += "\\u{" + hex(scalar.value, digits: 4) + "}"
            }
        }
        return result
    }

    /// Whether a scalar is a control character a terminal could act on.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
