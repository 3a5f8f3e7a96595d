import Foundation
import Testing

@testable import KeysmithCredentialHelpers

/// Names the helpers are given (host, path, user name, server URL) are UTF-8 text: one that
/// is not is refused, never repaired into U+FFFD, which would make `tenant\xFF` and
/// `tenant\xFE` one item.
struct HelperNameBytesTests {
    private func gitInput(_ field: String, _ value: [UInt8]) -> Data {
        var input = Data("protocol=https\nhost=git.example.com\n".utf8)
        input.append(Data("\(field)=".utf8))
        input.append(contentsOf: value)
        input.append(Data("\npassword=secret-bytes\n\n".utf8))
        return input
    }

    @Test(arguments: ["path", "username", "host", "protocol"])
    func gitFieldThatIsNotUTF8_isRefusedWithoutRepeatingIt(_ field: String) {
        let input = gitInput(field, Array("tenant".utf8) + [0xFF])
        #expect(throws: HelperFailure.self) { try GitCredential(parsing: input) }
        let result = GitCredentialHelper.run(action: "get", input: input)
        #expect(result.status == 1)
        #expect(result.standardError?.contains("UTF-8") == true, "\(String(describing: result.standardError))")
        #expect(result.standardError?.contains("tenant") == false)
        #expect(result.standardError?.contains("secret-bytes") == false)
    }

    @Test func gitPasswordThatIsNotUTF8_isKept() throws {
        var input = Data("protocol=https\nhost=git.example.com\npassword=".utf8)
        input.append(contentsOf: [0xFF, 0xFE])
        input.append(Data("\n\n".utf8))
        #expect(try GitCredential(parsing: input).password == Data([0xFF, 0xFE]))
    }

    @Test func dockerServerURLThatIsNotUTF8_isRefused() {
        var input = Data("https://registry.example.com/tenant".utf8)
        input.append(0xFF)
        let result = DockerCredentialHelper.run(arguments: ["get"], input: input)
        #expect(result.status == 1)
        // Docker's helpers answer on standard output, errors included.
        let answer = String(decoding: result.standardOutput, as: UTF8.self)
        #expect(answer.contains("not UTF-8"), "\(answer)")
    }
}
