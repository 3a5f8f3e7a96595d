import Foundation
import KeysmithCLI
import Testing

/// How a secret is read from standard input: as a line (`--stdin`) or byte for byte
/// (`--stdin-exact`), with the standard input replaced.
struct SecretInputTests {
    private func read(_ source: SecretSource, _ input: Data, terminal: Bool = false) throws(CommandLineError) -> Data {
        let reader = SecretInput(readAllStandardInput: { input }, standardInputIsTerminal: { terminal })
        let output = Output(standardOutput: BufferSink(), standardError: BufferSink())
        return try reader.read(source, promptText: "secret: ", confirmText: nil, output: output)
    }

    @Test func aLineLosesOneTrailingLineFeedOrCarriageReturnLineFeed() throws {
        #expect(try read(.standardInput, Data("abc\n".utf8)) == Data("abc".utf8))
        #expect(try read(.standardInput, Data("abc\r\n".utf8)) == Data("abc".utf8))
        #expect(try read(.standardInput, Data("abc\r".utf8)) == Data("abc\r".utf8), "a lone CR is not a newline")
        #expect(try read(.standardInput, Data("abc\n\n".utf8)) == Data("abc\n".utf8))
    }

    @Test(arguments: ["abc\r", "abc\r\n", "abc\n", "\n\n", "\r\n\r\n", " x "])
    func exactBytesKeepEveryByte(_ text: String) throws {
        #expect(try read(.exactStandardInput, Data(text.utf8)) == Data(text.utf8))
    }

    @Test func exactBytesRefuseATerminalAndEmptyInput() {
        #expect(throws: CommandLineError.self) { try read(.exactStandardInput, Data("typed\n".utf8), terminal: true) }
        #expect(throws: CommandLineError.self) { try read(.exactStandardInput, Data()) }
    }
}
