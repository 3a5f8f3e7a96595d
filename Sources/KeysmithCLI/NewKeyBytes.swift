import Foundation

/// Where the bytes of a new key version come from, for `rotate` and `fleet put`: standard
/// input as a line (`--stdin`, or a prompt), standard input byte for byte (`--stdin-exact`)
/// or a random draw (`--generate BYTES`).
package enum NewKeyBytes {
    /// Read from standard input as a line (one trailing newline removed), or typed at a prompt.
    case standardInput
    /// Read from standard input byte for byte.
    case exactStandardInput
    /// Drawn at random: this many bytes (1 to 4096).
    case generated(count: Int)

    /// Reads `--stdin`, `--stdin-exact` and `--generate BYTES`: exactly one of them must be given.
    /// - Parameter invocation: The running command.
    /// - Throws: A usage error for more than one, none, or a byte count outside 1...4096.
    package init(_ invocation: CommandInvocation) throws(CommandLineError) {
        let arguments = invocation.arguments
        var count: Int?
        if arguments.contains("generate") {
            guard let text = arguments.value("generate"), let value = Int(text), (1...4096).contains(value) else {
                throw invocation.usageError("--generate needs a number of bytes from 1 to 4096")
            }
            count = value
        }
        if arguments.contains("stdin") && arguments.contains("stdin-exact") {
            throw invocation.usageError("give --stdin (a line) or --stdin-exact (every byte), not both")
        }
        if count != nil, let read = ["stdin", "stdin-exact"].first(where: arguments.contains) {
            throw invocation.usageError("give the key with --\(read) or --generate, not both")
        }
        if let count {
            self = .generated(count: count)
        } else if arguments.contains("stdin-exact") {
            self = .exactStandardInput
        } else if arguments.contains("stdin") {
            self = .standardInput
        } else {
            throw invocation.usageError(
                "no key: pipe it with --stdin (a line) or --stdin-exact (every byte), or draw one with --generate BYTES")
        }
    }

    /// Whether the bytes are drawn at random rather than read.
    package var isGenerated: Bool {
        if case .generated = self { return true }
        return false
    }

    /// The bytes: drawn, or read from standard input (the caller zeroes them when done).
    /// - Parameters:
    ///   - identifier: The key's identifier, for the prompt.
    ///   - version: The version being stored, for the prompt.
    ///   - invocation: The running command.
    /// - Returns: The key bytes.
    /// - Throws: The secret-input error when nothing usable arrives on standard input.
    package func read(for identifier: String, version: String, invocation: CommandInvocation) throws(CommandLineError) -> Data {
        switch self {
        case .generated(let count):
            var generator = SystemRandomNumberGenerator()
            return Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        case .standardInput, .exactStandardInput:
            let source: SecretSource
            if case .exactStandardInput = self { source = .exactStandardInput } else { source = .standardInput }
            return try invocation.secretInput.read(
                source, promptText: "key data for \(identifier) version \(version): ",
                confirmText: "retype key data: ", output: invocation.output,
                otherWay: "or let keysmith draw a random key with --generate BYTES instead")
        }
    }
}
