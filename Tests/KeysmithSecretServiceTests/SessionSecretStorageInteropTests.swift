import Foundation
import KeysmithSecretService
import Testing

/// A python-secretstorage client, run live: its own `dhcrypto.Session` draws its key, and its own
/// `util.format_secret` encrypts. SessionTestVectors.swift holds answers from the same code made
/// ahead (always checked); this test checks against whatever secretstorage is installed.
enum SecretStorageClient {
    /// A Python that imports secretstorage: $KEYSMITH_TEST_PYTHON, the package's test venv
    /// (.build/python-venv, made by `make test-python`; keyring brings secretstorage), or python3.
    static let python: String? = {
        let packageDirectory = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var candidates: [String] = []
        if let chosen = ProcessInfo.processInfo.environment["KEYSMITH_TEST_PYTHON"], !chosen.isEmpty {
            candidates.append(chosen)
        }
        candidates.append(packageDirectory.appendingPathComponent(".build/python-venv/bin/python").path)
        candidates += ["/usr/bin/python3", "/usr/local/bin/python3"]
        return candidates.first { candidate in
            FileManager.default.isExecutableFile(atPath: candidate)
                && (try? run(candidate, ["-c", "import secretstorage.dhcrypto, secretstorage.util"])) != nil
        }
    }()

    /// The client's script: `start` prints a private exponent and the public key secretstorage
    /// sends; `finish` derives secretstorage's key from the service's public key, decrypts what the
    /// service sealed as secretstorage's Item.get_secret does, and encrypts a secret with
    /// format_secret.
    static let script = """
        import sys
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from secretstorage.dhcrypto import DH_PRIME_1024, Session
        from secretstorage.util import format_secret
        session = Session()
        if sys.argv[1] == "start":
            print(hex(session.my_private_key)[2:])
            print(session.my_public_key.to_bytes(128, "big").hex())
            sys.exit(0)
        _, exponent, service_public, iv, value, secret = sys.argv[1:]
        session.my_private_key = int(exponent, 16)
        session.my_public_key = pow(2, session.my_private_key, DH_PRIME_1024)
        session.set_server_public_key(int.from_bytes(bytes.fromhex(service_public), "big"))
        session.object_path = "/org/freedesktop/secrets/session/1"
        decryptor = Cipher(algorithms.AES(session.aes_key), modes.CBC(bytes.fromhex(iv))).decryptor()
        padded = decryptor.update(bytes.fromhex(value)) + decryptor.finalize()
        print(padded[:-padded[-1]].hex())
        _, parameters, encrypted, _ = format_secret(session, bytes.fromhex(secret), "text/plain")
        print(bytes(parameters).hex())
        print(bytes(encrypted).hex())
        """

    /// The standard output lines of `executable arguments`; throws unless it exits 0.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var digits = hex.utf8.makeIterator()
        while let high = digits.next(), let low = digits.next() {
            result.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
        }
        return result
    }
}

@Suite("Diffie-Hellman session: a live python-secretstorage client")
struct SessionSecretStorageInteropTests {
    @Test(
        "secretstorage's client agrees on the key: it opens what the service sealed, the service opens what it encrypted",
        .enabled(
            if: SecretStorageClient.python != nil,
            "needs a python3 with secretstorage: run `make test-python` once (its venv has it) or set KEYSMITH_TEST_PYTHON; SessionTestVectors checks secretstorage's code without it"),
        arguments: 0..<4)
    func liveClient(round: Int) throws {
        let python = try #require(SecretStorageClient.python)
        let start = try SecretStorageClient.run(python, ["-c", SecretStorageClient.script, "start"])
        try #require(start.count == 2)
        let clientPublicKey = SecretStorageClient.bytes(start[1])
        let (cipher, servicePublicKey) = try DiffieHellmanTransfer.agree(clientPublicKey: clientPublicKey)

        let serviceSecret = Array("service secret \(round) ✓".utf8) + [UInt8](repeating: UInt8(round), count: round * 7)
        let sealed = try cipher.seal(serviceSecret)
        let clientSecret = Array("client secret \(round) ✓".utf8) + [UInt8](repeating: 0xA5, count: round * 5)
        let finish = try SecretStorageClient.run(python, [
            "-c", SecretStorageClient.script, "finish", start[0], SecretStorageClient.hex(servicePublicKey),
            SecretStorageClient.hex(sealed.parameters), SecretStorageClient.hex(sealed.value), SecretStorageClient.hex(clientSecret),
        ])
        try #require(finish.count == 3)
        #expect(SecretStorageClient.bytes(finish[0]) == serviceSecret)
        let opened = try cipher.open(parameters: SecretStorageClient.bytes(finish[1]), value: SecretStorageClient.bytes(finish[2]))
        #expect(opened == clientSecret)
    }
}
