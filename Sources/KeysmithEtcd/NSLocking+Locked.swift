import Foundation

extension NSLocking {
    /// Runs `body` holding the lock (Foundation's own `withLock` needs macOS 14 / iOS 17,
    /// above this package's deployment targets).
    @inline(__always)
    func locked<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
