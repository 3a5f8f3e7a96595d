import KeysmithSecretService
import Testing

@Suite("Session algorithms")
struct SessionAlgorithmTests {
    @Test("plain: the secret travels as it is, and an unknown algorithm is not supported")
    func plainAndUnknown() throws {
        let (cipher, output) = try SessionAlgorithm.negotiate(algorithm: "plain", input: .string(""))
        #expect(output == .empty)
        let sealed = try cipher.seal([1, 2, 3])
        #expect(sealed.parameters.isEmpty && sealed.value == [1, 2, 3])
        #expect(try cipher.open(parameters: [], value: [4]) == [4])
        #expect(throws: SecretServiceError.self) { try cipher.open(parameters: [0], value: [4]) }
        do {
            _ = try SessionAlgorithm.negotiate(algorithm: "rot13", input: .string(""))
            Issue.record("an unknown algorithm was accepted")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.NotSupported")
        }
    }
}
