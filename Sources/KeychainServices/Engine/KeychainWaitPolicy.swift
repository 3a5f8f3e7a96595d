#if !canImport(Security)
import Foundation

/// The status a keychain read made ``KeychainWithoutWaiting/run(_:)`` returns when it would
/// have had to wait to answer: `-9803` (Apple's `errSSLWouldBlock`, a status no keychain
/// call returns otherwise). The caller then makes the same call the ordinary way, on a
/// thread that may wait.
@_spi(Keysmith)
public let KeychainWouldWaitStatus: OSStatus = -9803

/// Keychain reads that answer now or not at all: for a caller on a thread that must not
/// block (a JavaScript event loop), which makes the call again on another thread when
/// this one reports ``KeychainWouldWaitStatus``.
///
/// Inside ``run(_:)`` the engine checks, at each point where an ordinary read waits, and
/// fails with ``KeychainWouldWaitStatus`` instead of waiting:
/// - the keychain is not open in this process yet (opening reads the device key and
///   derives keys);
/// - the engine's registry or its write lock is held by another thread (try-lock, not
///   lock), or the key hierarchy is held (an unlock deriving a passphrase key);
/// - SQLite is busy (the read runs with a busy timeout of 0);
/// - an item needs authentication before its data is opened (a prompt).
///
/// Everything a read checks is checked as usual: a read that answers answers exactly what
/// the ordinary call answers.
@_spi(Keysmith)
public enum KeychainWithoutWaiting {
    @TaskLocal static var isActive = false

    /// Whether the current thread (or task) runs inside ``run(_:)``.
    public static var isRequested: Bool { isActive }

    /// Runs `body` with every keychain read in it answering without waiting.
    /// - Parameter body: The reads.
    /// - Returns: What `body` returns.
    public static func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        try $isActive.withValue(true) { try body() }
    }

    /// The failure a read reports instead of waiting.
    /// - Parameter reason: What it would have waited for.
    /// - Returns: The failure, with ``KeychainWouldWaitStatus``.
    static func wouldWait(_ reason: String) -> KeychainFailure {
        KeychainFailure(
            KeychainWouldWaitStatus, "The read would wait: \(reason).",
            recovery: "Make the call again without KeychainWithoutWaiting, on a thread that may wait.")
    }

    /// Takes `lock`: at once inside ``run(_:)`` (throwing ``wouldWait(_:)`` when another
    /// thread holds it), else waiting for it as usual.
    /// - Parameters:
    ///   - lock: The lock.
    ///   - what: What the lock guards, for the failure's reason.
    static func acquire(_ lock: NSLock, _ what: @autoclosure () -> String) throws {
        if isActive {
            guard lock.try() else { throw wouldWait("another thread holds \(what())") }
        } else {
            lock.lock()
        }
    }
}
#endif
