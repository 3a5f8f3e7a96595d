import Foundation

/// The fleet key: 32 random bytes every machine of a fleet keeps in its own keychain, under
/// which every value in etcd is sealed (XChaCha20-Poly1305).
///
/// The bytes live in memory of their own, zeroed when the key is released; descriptions and
/// mirrors show only the key's public ``fingerprint``.
///
/// ```swift
/// let key = FleetKey.generate()
/// try FleetKeychain().storeFleetKey(key)      // AfterFirstUnlockThisDeviceOnly
/// ```
public final class FleetKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key length: 32 bytes.
    public static let length = FleetCipher.keyLength

    /// The bytes (allocated here, never copied into a Swift array or `Data`).
    private nonisolated(unsafe) let bytes: UnsafeMutableRawBufferPointer

    /// Sixteen hexadecimal digits that name the key without revealing it (a prefix of
    /// SHA-256 over a fixed label and the key): two machines with the same fingerprint share
    /// the same fleet key.
    public let fingerprint: String

    /// Creates a key from its bytes.
    /// - Parameter data: Exactly 32 bytes.
    /// - Throws: ``EtcdError/invalidFleetKey(reason:)`` for another length.
    public init(_ data: Data) throws {
        guard data.count == FleetKey.length else {
            throw EtcdError.invalidFleetKey(reason: "a fleet key is \(FleetKey.length) bytes, not \(data.count)")
        }
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: FleetKey.length, alignment: 16)
        _ = data.copyBytes(to: bytes)
        var labelled = Data("keysmith fleet key fingerprint\u{0}".utf8)
        labelled.append(data)
        fingerprint = FleetCipher.sha256(labelled).prefix(8).map { String(format: "%02x", $0) }.joined()
        FleetCipher.wipe(&labelled)
    }

    /// A new random key.
    /// - Returns: The key.
    public static func generate() -> FleetKey {
        var data = FleetCipher.randomBytes(length)
        defer { FleetCipher.wipe(&data) }
        // 32 bytes always make a key.
        return try! FleetKey(data)
    }

    deinit {
        FleetCipher.wipe(bytes)
        bytes.deallocate()
    }

    /// Runs `body` with the key bytes.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(bytes))
    }

    /// A copy of the bytes, for storing in the keychain or a key file; wipe it after use.
    func exportedBytes() -> Data {
        Data(UnsafeRawBufferPointer(bytes))
    }

    /// `FleetKey(fingerprint …)`.
    public var description: String { "FleetKey(fingerprint \(fingerprint))" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// Only the fingerprint.
    public var customMirror: Mirror { Mirror(self, children: ["fingerprint": fingerprint]) }
}
