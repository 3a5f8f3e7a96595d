import Foundation
import KeychainServices

/// A ``SecureStore`` failure with a stable, cross-platform code, the key
/// and namespace involved, a message that says what happened and what to do, and the
/// underlying ``KeychainError`` (with its raw `OSStatus`) when the keychain reported it.
///
/// ```swift
/// do {
///     let pin = try store.string(for: "pin", in: "local_pin", prompt: "Unlock your PIN")
/// } catch let error as SecureStoreError where error.code == .userCanceled {
///     // the user chose not to authenticate: offer another way, do not retry in a loop
/// } catch let error as SecureStoreError where error.code == .interactionNotAllowed {
///     // locked device or background: retry later
/// } catch {
///     log(error)   // code, key, namespace, cause and fix; never the value
/// }
/// ```
///
/// A missing item is not an error: ``SecureStore/value(_:for:in:prompt:)`` returns `nil`.
///
/// - Note: Never contains the value being stored or read.
public struct SecureStoreError: Error, Sendable, Hashable, LocalizedError, CustomStringConvertible {
    /// The error codes (their raw values are the cross-platform code strings, such as
    /// `ITEM_NOT_FOUND`), including the conditions other stores report with a thrown message.
    public enum Code: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `ITEM_NOT_FOUND`: no such item. ``SecureStore/value(_:for:in:prompt:)`` reports it
        /// as `nil`; it is a normal branch, never logged as an error.
        case itemNotFound = "ITEM_NOT_FOUND"
        /// `AUTH_FAILED`: the user did not pass the item's access control.
        case authFailed = "AUTH_FAILED"
        /// `USER_CANCELED`: the user canceled the authentication prompt.
        case userCanceled = "USER_CANCELED"
        /// `INTERACTION_NOT_ALLOWED`: the device is locked (or the keychain is unavailable,
        /// or no prompt can be shown); usually transient.
        case interactionNotAllowed = "INTERACTION_NOT_ALLOWED"
        /// `LIMIT_EXCEEDED`: the serialized value is larger than the store's size limit.
        case limitExceeded = "LIMIT_EXCEEDED"
        /// `INVALID_VALUE`: `nil` was stored (call `remove`), a value could not be encoded,
        /// or a key or namespace name is invalid.
        case invalidValue = "INVALID_VALUE"
        /// `DECODING_FAILED`: the stored data is not a value of the requested type.
        case decodingFailed = "DECODING_FAILED"
        /// `MISSING_ENTITLEMENT`: the app may not use the configured access group (-34018).
        case missingEntitlement = "MISSING_ENTITLEMENT"
        /// `UNKNOWN`: anything else; ``SecureStoreError/keychainError`` has the raw status.
        case unknown = "UNKNOWN"

        /// The code string, for example `ITEM_NOT_FOUND`.
        public var description: String { rawValue }

        /// The code for a keychain failure: the one mapping from ``KeychainError/Code``.
        /// - Parameter code: The keychain code.
        /// - Returns: The store code.
        public init(_ code: KeychainError.Code) {
            switch code {
            case .itemNotFound: self = .itemNotFound
            case .authenticationFailed: self = .authFailed
            case .userCanceled: self = .userCanceled
            case .interactionNotAllowed, .keychainUnavailable: self = .interactionNotAllowed
            case .missingEntitlement: self = .missingEntitlement
            case .dataCorrupted: self = .decodingFailed
            case .invalidParameters: self = .invalidValue
            case .duplicateItem, .unexpected: self = .unknown
            }
        }
    }

    /// What the app should do about the failure.
    public let code: Code
    /// The key involved, when there is one (a name, never a value).
    public let key: String?
    /// The namespace involved, when there is one.
    public let namespace: String?
    /// What happened and why, in a sentence; never the value.
    public let message: String
    /// The keychain failure behind this error, with its raw `OSStatus`, when there is one.
    public let keychainError: KeychainError?
    /// The fix for this very cause, when it is known (a preferences folder that cannot be
    /// written, a key file changed during a migration); ``recoverySuggestion`` gives it
    /// instead of the code's general advice.
    public let fix: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The code.
    ///   - message: What happened and why; never the value.
    ///   - key: The key involved, if any.
    ///   - namespace: The namespace involved, if any.
    ///   - keychainError: The keychain failure behind it, if any.
    ///   - fix: The fix for this very cause, or `nil` for the code's general advice.
    public init(
        _ code: Code, message: String, key: String? = nil, namespace: String? = nil, keychainError: KeychainError? = nil,
        fix: String? = nil
    ) {
        self.code = code
        self.message = message
        self.key = key
        self.namespace = namespace
        self.keychainError = keychainError
        self.fix = fix
    }

    /// Wraps a keychain failure, mapping its code with ``Code/init(_:)``.
    /// - Parameters:
    ///   - keychainError: The keychain failure.
    ///   - key: The key involved, if any.
    ///   - namespace: The namespace involved, if any.
    public init(_ keychainError: KeychainError, key: String?, namespace: String?) {
        let code = Code(keychainError.code)
        var message = "The keychain reported \(keychainError.code) (OSStatus \(keychainError.status): \(keychainError.appleMessage))"
        if let detail = keychainError.detail { message += " \(detail)" }
        self.init(code, message: message, key: key, namespace: namespace, keychainError: keychainError)
    }

    /// The value is `nil`.
    static func nilValue(key: String, namespace: String) -> SecureStoreError {
        SecureStoreError(
            .invalidValue,
            message: "Cannot store nil for '\(key)'. To delete the value, call remove(\"\(key)\", in: \"\(namespace)\").",
            key: key, namespace: namespace)
    }

    /// The serialized value is too large.
    static func limitExceeded(key: String, namespace: String, bytes: Int, limit: Int, byteLimit: Int) -> SecureStoreError {
        SecureStoreError(
            .limitExceeded,
            message: "The value for '\(key)' is \(bytes) bytes of UTF-8 once serialized; the limit is \(limit) characters "
                + "and \(byteLimit) bytes (4 per character, so a character of many combining marks counts its bytes). "
                + "Store large data elsewhere (encrypted file with its key in the keychain), split it, or raise "
                + "SecureStore.Configuration.sizeLimit.",
            key: key, namespace: namespace)
    }

    static func limitExceeded(key: String, namespace: String, size: Int, limit: Int) -> SecureStoreError {
        SecureStoreError(
            .limitExceeded,
            message: "The value for '\(key)' is \(size) characters once serialized; the limit is \(limit). "
                + "Store large data elsewhere (encrypted file with its key in the keychain), split it, or raise "
                + "SecureStore.Configuration.sizeLimit.",
            key: key, namespace: namespace)
    }

    // MARK: LocalizedError

    /// What happened, with the code, key and namespace.
    public var errorDescription: String? { description }

    /// Why it happened.
    public var failureReason: String? { message }

    /// What to do about it: ``fix`` when the cause is known, otherwise the code's advice.
    public var recoverySuggestion: String? {
        if let fix { return fix }
        switch code {
        case .itemNotFound:
            return "Treat it as 'no value yet'; check the key and namespace spelling if a value was expected."
        case .authFailed:
            return keychainError?.recoverySuggestion
                ?? "Let the user try again, or sign in another way."
        case .userCanceled:
            return "The user chose not to authenticate. Offer to try again or another way; do not retry in a loop."
        case .interactionNotAllowed:
            return keychainError?.recoverySuggestion
                ?? "The device is locked or no prompt can be shown. Retry later, or use an accessibility that allows "
                + "background access (.afterFirstUnlockThisDeviceOnly)."
        case .limitExceeded:
            return "Keep keychain values small: tokens, keys, short profiles."
        case .invalidValue:
            return keychainError?.recoverySuggestion ?? "Fix the call: see the message."
        case .decodingFailed:
            return "Read the value with the type it was written with, or write it again."
        case .missingEntitlement:
            return keychainError?.recoverySuggestion
                ?? "Check the keychain-access-groups entitlement and signing of every target."
        case .unknown:
            return keychainError?.recoverySuggestion ?? "Retry once; report it if it persists."
        }
    }

    /// For example `SecureStoreError LIMIT_EXCEEDED for key 'avatar' in namespace 'profile': …`.
    public var description: String {
        var text = "SecureStoreError \(code.rawValue)"
        if let key { text += " for key '\(key)'" }
        if let namespace { text += " in namespace '\(namespace)'" }
        text += ": \(message)"
        if let recoverySuggestion { text += " Fix: \(recoverySuggestion)" }
        return text
    }
}

