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

@Suite("Session algorithms: Diffie-Hellman negotiation")
struct SessionNegotiationTests {
    private func expectInvalidArguments(
        algorithm: String, input: SessionInput, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try SessionAlgorithm.negotiate(algorithm: algorithm, input: input)
            Issue.record("\(algorithm) accepted \(input)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", sourceLocation: sourceLocation)
        }
    }

    @Test("dh-ietf1024-sha256-aes128-cbc-pkcs7 with a public key: the service's 128-byte public key and a cipher that round trips")
    func diffieHellmanWithBytes() throws {
        let (cipher, output) = try SessionAlgorithm.negotiate(
            algorithm: "dh-ietf1024-sha256-aes128-cbc-pkcs7", input: .bytes(SessionTestVectors.clientPublicKey))
        guard case .publicKey(let servicePublicKey) = output else {
            Issue.record("the output is not a public key: \(output)")
            return
        }
        #expect(servicePublicKey.count == 128)
        #expect(cipher.algorithm == SessionAlgorithm.diffieHellman)
        #expect(cipher is DiffieHellmanTransfer)
        let sealed = try cipher.seal(Array("hunter2".utf8))
        #expect(sealed.parameters.count == 16 && sealed.value.count == 16)
        #expect(sealed.value != Array("hunter2".utf8) + [UInt8](repeating: 9, count: 9))
        #expect(try cipher.open(parameters: sealed.parameters, value: sealed.value) == Array("hunter2".utf8))
    }

    @Test("dh-ietf1024-sha256-aes128-cbc-pkcs7 with input of another type, or a key outside the group: invalid arguments")
    func diffieHellmanWithWrongInput() {
        let algorithm = SessionAlgorithm.diffieHellman
        expectInvalidArguments(algorithm: algorithm, input: .string(""))
        expectInvalidArguments(algorithm: algorithm, input: .string("AAEC"))
        expectInvalidArguments(algorithm: algorithm, input: .other(signature: "ai"))
        expectInvalidArguments(algorithm: algorithm, input: .other(signature: "v"))
        expectInvalidArguments(algorithm: algorithm, input: .bytes([]))
        expectInvalidArguments(algorithm: algorithm, input: .bytes([1]))
        expectInvalidArguments(algorithm: algorithm, input: .bytes([UInt8](repeating: 0xFF, count: 129)))
        // plain takes no public key.
        expectInvalidArguments(algorithm: SessionAlgorithm.plain, input: .bytes(SessionTestVectors.clientPublicKey))
    }

    @Test("algorithm names compare byte for byte: case and spelling variants are not supported")
    func algorithmNamesExact() {
        for name in ["DH-IETF1024-SHA256-AES128-CBC-PKCS7", "dh-ietf1024-sha256-aes128-cbc-pkcs7 ", "dh_ietf1024_sha256_aes128_cbc_pkcs7", ""] {
            do {
                _ = try SessionAlgorithm.negotiate(algorithm: name, input: .bytes(SessionTestVectors.clientPublicKey))
                Issue.record("the algorithm \(name.debugDescription) was accepted")
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.NotSupported")
            }
        }
    }
}
