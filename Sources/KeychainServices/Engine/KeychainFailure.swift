#if !canImport(Security)
import Foundation

/// Why a keychain call failed: the status Apple's API returns, plus what happened and what
/// to do, for people. Never contains secret bytes or the values of attributes.
struct KeychainFailure: Error, CustomStringConvertible {
    /// The status the SecItem call returns.
    let status: OSStatus
    /// What happened and why.
    let reason: String
    /// What to do about it, if anything.
    let recovery: String?

    init(_ status: OSStatus, _ reason: String, recovery: String? = nil) {
        self.status = status
        self.reason = reason
        self.recovery = recovery
    }

    var description: String {
        var text = "\(secErrorName(status) ?? "OSStatus") (\(status)): \(reason)"
        if let recovery { text += " \(recovery)" }
        return text
    }

    static func param(_ reason: String) -> KeychainFailure {
        KeychainFailure(errSecParam, reason)
    }

    static func noSuchAttribute(_ tag: String, itemClass: String) -> KeychainFailure {
        KeychainFailure(
            errSecNoSuchAttr,
            "\(ConstantNames.key(tag, itemClass: itemClass)) is not an attribute of \(ConstantNames.itemClass(itemClass)) items.",
            recovery: "Remove the key from the dictionary, or use the item class that has it.")
    }

    static let notFound = KeychainFailure(errSecItemNotFound, "No item matches the query.")
}

/// What the last failed keychain call on this thread went wrong with (Linux only).
///
/// Apple's API returns only an `OSStatus`; ``SecCopyErrorMessageString(_:_:)`` turns it
/// into a generic sentence. Here the engine also knows the precise cause (which attribute
/// was rejected, which file has the wrong permissions, which item failed to decrypt), and
/// keeps it for the thread that made the call, so tools can tell people what to fix.
/// It never contains secret bytes or attribute values.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public enum KeychainDiagnostics {
    /// The cause of the last failed SecItem call on the current thread, or `nil` if the last
    /// call succeeded (or returned `errSecItemNotFound`).
    public static var lastFailureDescription: String? { currentSlot?.reason }

    /// The recovery suggestion of the last failed call on this thread, if there is one.
    public static var lastFailureRecovery: String? { currentSlot?.recovery }

    /// What one thread's last failure said.
    private final class Slot {
        var reason: String?
        var recovery: String?
    }

    /// A thread-specific slot (released when its thread exits): finding that a thread has
    /// nothing to clear costs one `pthread_getspecific`, which matters on every successful
    /// call, where a thread dictionary lookup costs a hashed string comparison.
    private static let slotKey: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { slot in
            guard let slot else { return }
            Unmanaged<Slot>.fromOpaque(slot).release()
        }
        precondition(created == 0, "pthread_key_create failed (\(created))")
        return key
    }()

    private static var currentSlot: Slot? {
        pthread_getspecific(slotKey).map { Unmanaged<Slot>.fromOpaque($0).takeUnretainedValue() }
    }

    static func record(_ failure: KeychainFailure?) {
        if let failure, failure.status != errSecItemNotFound {
            let slot: Slot
            if let existing = currentSlot {
                slot = existing
            } else {
                slot = Slot()
                pthread_setspecific(slotKey, Unmanaged.passRetained(slot).toOpaque())
            }
            slot.reason = failure.reason
            slot.recovery = failure.recovery
        } else if let slot = currentSlot, slot.reason != nil {
            slot.reason = nil
            slot.recovery = nil
        }
    }
}
#endif
