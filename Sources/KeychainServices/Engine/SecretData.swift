#if !canImport(Security)
import Foundation

/// The `NSData` the keychain hands out for secrets and persistent references.
///
/// It owns one heap buffer for its whole life, so `bytes` is a stable pointer (a `Data`
/// of 14 bytes or fewer keeps its bytes inline, and a pointer taken from it does not
/// outlive the call). Two more reasons for a class of our own: Foundation on Linux bridges
/// a plain `NSData` to `Data` (`result as? Data`) byte by byte, about 70 ns a byte, while a
/// `ContiguousBytes` subclass is copied in one `memcpy`; and the buffer is zeroed when the
/// object goes away, so a secret does not linger in freed memory after the app has taken
/// its copy.
final class SecretData: NSData, ContiguousBytes {
    private let buffer: UnsafeMutableRawPointer
    private let count: Int

    init(_ data: Data) {
        let count = data.count
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
        data.withUnsafeBytes { source in
            if let base = source.baseAddress, count > 0 { buffer.copyMemory(from: base, byteCount: count) }
        }
        self.count = count
        self.buffer = buffer
        super.init()
    }

    /// A copy of `bytes` (decrypted plaintext, read in place).
    init(copying bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
        if let base = bytes.baseAddress, count > 0 { buffer.copyMemory(from: base, byteCount: count) }
        self.count = count
        self.buffer = buffer
        super.init()
    }

    required init?(coder: NSCoder) { nil }

    deinit {
        Sodium.zero(buffer, count: count)
        buffer.deallocate()
    }

    override var length: Int { count }

    override var bytes: UnsafeRawPointer { UnsafeRawPointer(buffer) }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: buffer, count: count))
    }

    override func copy(with zone: NSZone? = nil) -> Any { self }

    /// Never the bytes: `<N bytes>`.
    override var description: String { "<\(count) bytes>" }
    override var debugDescription: String { description }
}
#endif
