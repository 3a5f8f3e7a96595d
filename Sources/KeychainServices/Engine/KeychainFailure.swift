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
    public static var lastFailureDescription: String? {
        Thread.current.threadDictionary[threadKey] as? String
    }

    /// The recovery suggestion of the last failed call on this thread, if there is one.
    public static var lastFailureRecovery: String? {
        Thread.current.threadDictionary[recoveryKey] as? String
    }

    private static let threadKey = "KeychainServices.lastFailure"
    private static let recoveryKey = "KeychainServices.lastFailureRecovery"

    static func record(_ failure: KeychainFailure?) {
        let dictionary = Thread.current.threadDictionary
        if let failure, failure.status != errSecItemNotFound {
            dictionary[threadKey] = failure.reason
            dictionary[recoveryKey] = failure.recovery
        } else if dictionary[threadKey] != nil {
            dictionary[threadKey] = nil
            dictionary[recoveryKey] = nil
        }
    }
}
#endif
