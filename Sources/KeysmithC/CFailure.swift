import Foundation
import Keysmith
@_spi(Keysmith) import KeychainServices

/// A failure of a C call, as `keysmith_error` reports it: the OSStatus, the cross-platform
/// code (``SecureStoreError/Code``) and a message with the cause and the fix, never a value.
struct CFailure: Error {
    /// The OSStatus returned.
    let status: OSStatus
    /// The code string, for example `ITEM_NOT_FOUND`.
    let code: String
    /// What happened and what to do.
    let message: String

    /// A keychain failure, with the code the Swift `SecureStore` maps it to.
    /// - Parameter error: The keychain error.
    init(_ error: KeychainError) {
        status = error.status
        code = SecureStoreError.Code(error.code).rawValue
        message = error.description
    }

    /// A store failure: its keychain status when there is one, else `errSecParam` for
    /// invalid input and `errSecAuthFailed` / `errSecDecode` for the codes that mean them.
    /// - Parameter error: The store error.
    init(_ error: SecureStoreError) {
        if let keychainError = error.keychainError {
            status = keychainError.status
        } else {
            switch error.code {
            case .authFailed: status = errSecAuthFailed
            case .userCanceled: status = errSecUserCanceled
            case .interactionNotAllowed: status = errSecInteractionNotAllowed
            case .decodingFailed: status = errSecDecode
            case .missingEntitlement: status = errSecMissingEntitlement
            case .itemNotFound: status = errSecItemNotFound
            case .invalidValue, .limitExceeded, .unknown: status = errSecParam
            }
        }
        code = error.code.rawValue
        message = error.description
    }

    /// A failure found before the keychain was called.
    /// - Parameters:
    ///   - status: The status.
    ///   - code: The code string.
    ///   - message: What happened and what to do.
    init(status: OSStatus, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// Invalid input (`errSecParam`, `INVALID_VALUE`).
    /// - Parameter message: What was wrong and how to call instead.
    /// - Returns: The failure.
    static func parameter(_ message: String) -> CFailure {
        CFailure(status: errSecParam, code: "INVALID_VALUE", message: message)
    }

    /// No item under `key` in `service`.
    static func notFound(service: String, key: String) -> CFailure {
        CFailure(
            status: errSecItemNotFound, code: "ITEM_NOT_FOUND",
            message: "No item for key '\(key)' in service '\(service)'. A missing value is a normal branch: "
                + "treat it as empty, or store it first.")
    }

    /// A read that would have waited (`keysmith_get_nowait`).
    static let wouldWait = CFailure(
        status: KeychainWouldWaitStatus, code: "WOULD_WAIT",
        message: "The read would wait (the keychain is not open yet, locked or busy, or the item needs authentication). "
            + "Make the same call with keysmith_get, on a thread that may wait.")

    /// Memory could not be allocated.
    static let outOfMemory = CFailure(
        status: errSecAllocate, code: "UNKNOWN", message: "Memory for the result could not be allocated.")

    // MARK: keysmith_error

    /// The layout of `keysmith_error`: `int32_t status; char code[32]; char message[1024];`.
    static let codeOffset = 4
    static let codeCapacity = 32
    static let messageOffset = 36
    static let messageCapacity = 1024

    /// Writes this failure into a `keysmith_error` (nothing when `error` is NULL).
    /// - Parameter error: The caller's `keysmith_error *`, or `nil`.
    func write(to error: UnsafeMutableRawPointer?) {
        guard let error else { return }
        error.storeBytes(of: status, as: Int32.self)
        CFailure.writeString(code, to: error + CFailure.codeOffset, capacity: CFailure.codeCapacity)
        CFailure.writeString(message, to: error + CFailure.messageOffset, capacity: CFailure.messageCapacity)
    }

    /// Clears a `keysmith_error` after a success (nothing when `error` is NULL).
    /// - Parameter error: The caller's `keysmith_error *`, or `nil`.
    static func clear(_ error: UnsafeMutableRawPointer?) {
        guard let error else { return }
        error.storeBytes(of: Int32(0), as: Int32.self)
        (error + codeOffset).storeBytes(of: UInt8(0), as: UInt8.self)
        (error + messageOffset).storeBytes(of: UInt8(0), as: UInt8.self)
    }

    /// Copies `text` as NUL-terminated UTF-8, cut at a character boundary to fit.
    static func writeString(_ text: String, to destination: UnsafeMutableRawPointer, capacity: Int) {
        var bytes = Array(text.utf8)
        if bytes.count > capacity - 1 {
            bytes = Array(bytes.prefix(capacity - 1))
            // Do not leave half a UTF-8 sequence at the end.
            while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
            if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
        }
        bytes.append(0)
        bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
}
