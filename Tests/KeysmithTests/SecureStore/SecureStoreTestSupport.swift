import Foundation
import Keysmith
import KeychainServices

/// A service prefix no other test uses.
func uniquePrefix(_ name: String = #function) -> String {
    let cleaned = name.filter { $0.isLetter || $0.isNumber }
    return "com.example.tests.store.\(cleaned).\(UUID().uuidString.prefix(8))"
}

/// Collects the events a store logs.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [SecureStoreEvent] = []

    var logger: SecureStoreLogger {
        SecureStoreLogger { [self] event in
            lock.lock()
            recorded.append(event)
            lock.unlock()
        }
    }

    var events: [SecureStoreEvent] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }
}

/// A store with its own prefix, optional injection, biometry answer and logger.
func makeStore(
        _ name: String = #function, sizeLimit: Int = 2048, errorInjection: ErrorInjection? = nil,
        biometry: BiometryCapability = .system, logger: SecureStoreLogger? = nil
) throws -> SecureStore {
    try SecureStore(
        configuration: SecureStore.Configuration(
            servicePrefix: uniquePrefix(name), sizeLimit: sizeLimit, biometry: biometry, logger: logger,
            errorInjection: errorInjection))
}
