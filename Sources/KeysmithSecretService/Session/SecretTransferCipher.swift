/// How secrets travel between one client and the service within a session: the session's
/// algorithm, negotiated by `OpenSession`. With `plain` they travel as they are; with
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` each is AES-128-CBC encrypted under a key the two sides
/// agreed on with Diffie-Hellman.
///
/// A cipher is a value the service keeps with its session and may use from several calls at
/// once. The Diffie-Hellman cipher's key is zeroed when the last copy of the value goes: drop
/// the session's cipher when the session is closed or its client leaves the bus.
public protocol SecretTransferCipher: Sendable {
    /// The algorithm's name as `OpenSession` takes it.
    var algorithm: String { get }

    /// The secret a client sent: the `parameters` and `value` fields of its `Secret` struct.
    /// - Returns: The secret's bytes (the caller keeps them no longer than it needs them).
    /// - Throws: `SecretServiceError.invalidArguments` when they cannot be opened in this session
    ///   (wrong padding, wrong parameter length, encrypted for another session). The error's
    ///   message is the same whatever the cause, and never holds the secret.
    func open(parameters: [UInt8], value: [UInt8]) throws(SecretServiceError) -> [UInt8]

    /// A secret prepared for the client: the `parameters` and `value` fields of the `Secret`
    /// struct to send (for the Diffie-Hellman algorithm, a fresh IV and the ciphertext).
    /// - Throws: `SecretServiceError.failed` when the cryptographic library fails.
    func seal(_ secret: [UInt8]) throws(SecretServiceError) -> (parameters: [UInt8], value: [UInt8])
}

/// What `OpenSession` answers in its `output` variant.
public enum SessionOutput: Sendable, Equatable {
    /// The empty string (`s`), for `plain`.
    case empty
    /// The service's public key (`ay`), for the Diffie-Hellman algorithm.
    case publicKey([UInt8])
}

/// What a client sent as `OpenSession`'s `input` variant.
public enum SessionInput: Sendable, Equatable {
    /// A string (`plain` sends the empty string).
    case string(String)
    /// Bytes (the client's public key for the Diffie-Hellman algorithm).
    case bytes([UInt8])
    /// A variant of another type.
    case other(signature: String)
}

/// The session algorithms this service speaks.
public enum SessionAlgorithm {
    /// `plain`: secrets travel unencrypted (the bus connection is private to the user).
    public static let plain = "plain"
    /// `dh-ietf1024-sha256-aes128-cbc-pkcs7`: the Second Oakley Group (RFC 2409), the shared
    /// secret through HKDF-SHA256 (no salt, no info) to a 16-byte AES-128-CBC key, PKCS#7 padding,
    /// a fresh 16-byte IV per secret in `parameters`.
    public static let diffieHellman = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// Agrees on a cipher for a new session.
    /// - Parameters:
    ///   - algorithm: The algorithm the client asked for.
    ///   - input: The client's `input` variant.
    /// - Returns: The session's cipher, and what to answer in `output`.
    /// - Throws: `notSupported` for an unknown algorithm (the client may then try `plain`, as
    ///   secretstorage does), `invalidArguments` for input that does not fit the algorithm (a
    ///   variant of another type, a public key outside the Diffie-Hellman group).
    public static func negotiate(
        algorithm: String, input: SessionInput
    ) throws(SecretServiceError) -> (cipher: any SecretTransferCipher, output: SessionOutput) {
        // Algorithm names are ASCII protocol words: compared byte for byte.
        if algorithm.utf8.elementsEqual(plain.utf8) {
            guard case .string(let text) = input, text.utf8.isEmpty else {
                throw .invalidArguments("the plain session algorithm takes an empty string as input.")
            }
            return (PlainTransfer(), .empty)
        }
        if algorithm.utf8.elementsEqual(diffieHellman.utf8) {
            guard case .bytes(let clientPublicKey) = input else {
                throw .invalidArguments("\(diffieHellman) takes the client's public key as input (a byte array).")
            }
            let (cipher, servicePublicKey) = try DiffieHellmanTransfer.agree(clientPublicKey: clientPublicKey)
            return (cipher, .publicKey(servicePublicKey))
        }
        throw .notSupported(
            "the session algorithm is not supported; this service speaks \(plain) and \(diffieHellman).")
    }
}

/// `plain`: the secret travels as it is, with empty parameters.
public struct PlainTransfer: SecretTransferCipher {
    public var algorithm: String { SessionAlgorithm.plain }

    public init() {}

    public func open(parameters: [UInt8], value: [UInt8]) throws(SecretServiceError) -> [UInt8] {
        guard parameters.isEmpty else {
            throw .invalidArguments("a secret in a plain session has empty parameters; this one was encrypted for another session.")
        }
        return value
    }

    public func seal(_ secret: [UInt8]) throws(SecretServiceError) -> (parameters: [UInt8], value: [UInt8]) {
        ([], secret)
    }
}
