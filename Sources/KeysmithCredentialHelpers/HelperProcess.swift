import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process side of a helper: read standard input, write the result, exit.
public enum HelperProcess {
    /// Reads standard input to its end, runs `body`, writes its output and message, zeroes
    /// both the input and the output, and returns the exit status.
    /// - Parameter body: The helper, given standard input.
    /// - Returns: The exit status to pass to `exit`.
    public static func main(_ body: (Data) -> HelperResult) -> Int32 {
        var input = FileHandle.standardInput.readDataToEndOfFile()
        var result = body(input)
        input.resetBytes(in: 0..<input.count)
        var status = result.status
        if !write(result.standardOutput, to: STDOUT_FILENO) {
            status = status == 0 ? 1 : status
            result.standardError = (result.standardError.map { $0 + "\n" } ?? "") + "keysmith: could not write to standard output."
        }
        result.clear()
        if let message = result.standardError {
            _ = write(Data((message + "\n").utf8), to: STDERR_FILENO)
        }
        return status
    }

    /// Writes all of `data` to `descriptor`, retrying short writes.
    private static func write(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { buffer -> Bool in
            guard var pointer = buffer.baseAddress else { return true }
            var remaining = buffer.count
            while remaining > 0 {
                #if canImport(Glibc)
                let written = Glibc.write(descriptor, pointer, remaining)
                #else
                let written = Darwin.write(descriptor, pointer, remaining)
                #endif
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                remaining -= written
                pointer += written
            }
            return true
        }
    }
}
