import Foundation

/// What a helper run produced: the bytes for standard output, a message for the user and
/// the exit status. The executables write them and zero ``standardOutput`` afterwards.
public struct HelperResult: Sendable {
    /// The bytes for standard output (may hold a secret: zero them after writing).
    public var standardOutput: Data
    /// A message for standard error, if any (never a secret).
    public var standardError: String?
    /// The exit status: 0 on success.
    public var status: Int32

    /// Creates a result.
    /// - Parameters:
    ///   - standardOutput: The bytes for standard output.
    ///   - standardError: A message for standard error.
    ///   - status: The exit status.
    public init(standardOutput: Data = Data(), standardError: String? = nil, status: Int32 = 0) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.status = status
    }

    /// Overwrites the output bytes.
    public mutating func clear() {
        standardOutput.resetBytes(in: 0..<standardOutput.count)
        standardOutput = Data()
    }
}
