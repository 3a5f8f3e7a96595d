import Foundation

/// The entry point of the `keysmith` tool.
public enum KeysmithCommandLine {
    /// Runs the tool with `arguments` (the first is the program name) and returns the
    /// process exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        0
    }
}
