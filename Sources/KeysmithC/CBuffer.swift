import Foundation
#if canImport(CSodium)
import CSodium
#endif

/// The buffers the C interface hands out, and the one way they go back: `keysmith_free`
/// zeroes them before releasing them.
///
/// Each buffer is preceded by a header holding its length, so `keysmith_free` needs only the
/// pointer and can zero every byte it handed out, and a tag derived from the buffer's address.
/// A pointer whose tag is wrong (freed already, or never handed out by the library) stops the
/// program, as `free` does for a double free, instead of zeroing memory of unknown length.
enum CBuffer {
    /// The bytes before each buffer: its length and its tag, keeping the buffer 16-byte aligned.
    static let headerSize = 16

    /// The tag of a live buffer at `pointer` (a released buffer's header is zeroed).
    private static func tag(_ pointer: UnsafeMutableRawPointer) -> UInt64 {
        0x6B65_7973_6D69_7468 ^ UInt64(UInt(bitPattern: pointer))
    }

    /// The test observer of `keysmith_free`, with its context.
    private static let observer = FreeObserver()

    /// A new buffer of `length` bytes (at least one byte is allocated), or `nil` when memory
    /// is exhausted.
    /// - Parameter length: The size the caller sees.
    /// - Returns: The pointer the caller sees.
    static func allocate(_ length: Int) -> UnsafeMutableRawPointer? {
        guard length >= 0, length <= Int.max - headerSize - 1 else { return nil }
        guard let base = malloc(headerSize + max(length, 1)) else { return nil }
        base.storeBytes(of: length, as: Int.self)
        (base + 8).storeBytes(of: tag(base + headerSize), as: UInt64.self)
        return base + headerSize
    }

    /// Zeroes `length` bytes at `pointer` in a way the compiler does not remove.
    /// - Parameters:
    ///   - pointer: The start.
    ///   - length: How many bytes.
    static func zero(_ pointer: UnsafeMutableRawPointer, _ length: Int) {
        guard length > 0 else { return }
        #if canImport(CSodium)
        sodium_memzero(pointer, length)
        #else
        _ = memset_s(pointer, length, 0, length)
        #endif
    }

    /// Zeroes and releases a buffer from ``allocate(_:)``; stops the program for a pointer
    /// that is not a live buffer of the library (a second `keysmith_free`, or a pointer from
    /// elsewhere), whose length cannot be trusted.
    /// - Parameter pointer: The pointer the caller saw, or `nil`.
    static func release(_ pointer: UnsafeMutableRawPointer?) {
        guard let pointer else { return }
        let base = pointer - headerSize
        let length = base.load(as: Int.self)
        guard (base + 8).load(as: UInt64.self) == tag(pointer), length >= 0 else {
            let message = "keysmith_free: \(pointer) is not a buffer the library returned, or it was freed already "
                + "(free each buffer once, and only buffers from keysmith_get, keysmith_keys, keysmith_services "
                + "or keysmith_migrate_service).\n"
            _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            abort()
        }
        zero(pointer, length)
        observer.notify(pointer, length)
        zero(base, headerSize)
        free(base)
    }

    /// Sets or removes the test observer.
    /// - Parameters:
    ///   - callback: Called with each buffer after zeroing, before release; `nil` removes it.
    ///   - context: Passed back to `callback`.
    static func setObserver(
        _ callback: (@convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> Void)?,
        context: UnsafeMutableRawPointer?
    ) {
        observer.set(callback, context: context)
    }

    /// Copies `bytes` into a new buffer.
    /// - Parameter bytes: The bytes.
    /// - Returns: The buffer, or `nil` when memory is exhausted.
    static func copy(_ bytes: Data) -> UnsafeMutableRawPointer? {
        guard let buffer = allocate(bytes.count) else { return nil }
        bytes.withUnsafeBytes { raw in
            if let source = raw.baseAddress { buffer.copyMemory(from: source, byteCount: raw.count) }
        }
        return buffer
    }

    /// A string list in one buffer: the pointer array, then the NUL-terminated strings.
    /// - Parameter strings: The strings.
    /// - Returns: The array's pointer (`nil` for an empty list) and whether memory sufficed.
    static func list(_ strings: [String]) -> (items: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, ok: Bool) {
        guard !strings.isEmpty else { return (nil, true) }
        let pointerBytes = strings.count * MemoryLayout<UnsafeMutablePointer<CChar>?>.stride
        let utf8 = strings.map { Array($0.utf8) + [0] }
        let total = pointerBytes + utf8.reduce(0) { $0 + $1.count }
        guard let buffer = allocate(total) else { return (nil, false) }
        let items = buffer.bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: strings.count)
        var cursor = buffer + pointerBytes
        for (index, bytes) in utf8.enumerated() {
            bytes.withUnsafeBytes { cursor.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            items[index] = cursor.assumingMemoryBound(to: CChar.self)
            cursor += bytes.count
        }
        return (items, true)
    }
}

/// The observer `keysmith_debug_set_free_observer` installs, behind a lock.
private final class FreeObserver: @unchecked Sendable {
    typealias Callback = @convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> Void
    private let lock = NSLock()
    private var callback: Callback?
    private var context: UnsafeMutableRawPointer?

    func set(_ callback: Callback?, context: UnsafeMutableRawPointer?) {
        lock.lock()
        defer { lock.unlock() }
        self.callback = callback
        self.context = context
    }

    func notify(_ pointer: UnsafeMutableRawPointer, _ length: Int) {
        lock.lock()
        let callback = self.callback
        let context = self.context
        lock.unlock()
        callback?(UnsafeRawPointer(pointer), length, context)
    }
}
