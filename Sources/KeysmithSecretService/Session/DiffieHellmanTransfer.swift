// Placeholder until the libcrypto implementation lands: the algorithm is refused as unsupported.
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7`.
public struct DiffieHellmanTransfer: SecretTransferCipher {
    public var algorithm: String { SessionAlgorithm.diffieHellman }

    /// Agrees on a key with a client's public key.
    /// - Returns: The cipher and the service's public key.
    public static func agree(clientPublicKey: [UInt8]) throws(SecretServiceError) -> (DiffieHellmanTransfer, [UInt8]) {
        throw .notSupported("\(SessionAlgorithm.diffieHellman) is not available in this build.")
    }

    public func open(parameters: [UInt8], value: [UInt8]) throws(SecretServiceError) -> [UInt8] {
        throw .notSupported("\(SessionAlgorithm.diffieHellman) is not available in this build.")
    }

    public func seal(_ secret: [UInt8]) throws(SecretServiceError) -> (parameters: [UInt8], value: [UInt8]) {
        throw .notSupported("\(SessionAlgorithm.diffieHellman) is not available in this build.")
    }
}
