#if !canImport(Security)
import Foundation

/// The `NSData` the keychain hands out for secrets and persistent references.
///
/// Two reasons for a class of our own: Foundation on Linux bridges a plain `NSData` to
/// `Data` (`result as? Data`) byte by byte, about 70 ns a byte, while a `ContiguousBytes`
/// subclass is copied in one `memcpy`; and the bytes this object holds are zeroed when it
/// goes away, so a secret does not linger in freed memory after the app has taken its copy.
final class SecretData: NSData, ContiguousBytes {
    private var storage: Data

    init(_ data: Data) {
        storage = data
        super.init()
    }

    required init?(coder: NSCoder) { nil }

    deinit {
        let count = storage.count
        storage.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: count) }
    }

    override var length: Int { storage.count }

    override var bytes: UnsafeRawPointer {
        storage.withUnsafeBytes { $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)! }
    }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }

    override func copy(with zone: NSZone? = nil) -> Any { self }

    /// Never the bytes: `<N bytes>`.
    override var description: String { "<\(storage.count) bytes>" }
    override var debugDescription: String { description }
}
#endif
