import Foundation
import KeychainServices

/// A keychain call that failed: what the app should do about it (``code``), the raw
/// `OSStatus` Keychain Services returned (``status``), Apple's message for it
/// (``appleMessage``), and where it happened (``operation``, ``service``, ``key``).
///
/// Every status is mapped to a ``Code`` in exactly one place, ``init(status:)``. The raw
/// status is always kept, so nothing is lost when a code groups several statuses.
/// ``recoverySuggestion`` says the likely cause and the fix: the fix for this very cause when
/// it is known (``fix``: an empty key, options that contradict each other), otherwise the
/// usual causes of the status (for example, `-34018` means the `keychain-access-groups`
/// entitlement or the signing is wrong; `-25308` while in the background means the item's
/// accessibility is too strict for background use).
///
/// Handle by code:
/// ```swift
/// do {
///     try store.set(token, for: "access_token")
/// } catch let error as KeychainError where error.code == .interactionNotAllowed {
///     // the device is locked; retry when protected data becomes available
/// } catch {
///     log(error)   // description names the status, cause and fix, never the secret
/// }
/// ```
///
/// - Note: An error never contains secret bytes or attribute values other than the item's
///   service and key names, which are identifiers, not secrets.
public struct KeychainError: Error, Sendable, Hashable, LocalizedError, CustomStringConvertible {
    /// What an app handles differently. Several statuses can share a code; ``status`` keeps
    /// the exact one.
    public enum Code: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// No item matched (`errSecItemNotFound`, -25300). Reads report a missing item as
        /// `nil` and removals as success, so an app sees this only from calls that need an
        /// existing item.
        case itemNotFound
        /// An item with the same primary key already exists (`errSecDuplicateItem`, -25299).
        case duplicateItem
        /// The item cannot be used now: the device is locked and the item's accessibility
        /// does not allow access while locked, or authentication UI is not allowed
        /// (`errSecInteractionNotAllowed` -25308, `errSecInteractionRequired` -25315,
        /// `errSecInDarkWake` -25320, `errSecUpgradePending` -34019). Often transient: see
        /// ``ProtectedDataAvailability``.
        case interactionNotAllowed
        /// The keychain itself is unavailable (`errSecNotAvailable` -25291,
        /// `errSecDataNotAvailable` -25316): locked protected data, or a keychain that
        /// cannot be opened. Often transient after a restart or while locked.
        case keychainUnavailable
        /// The user did not pass the item's access control (`errSecAuthFailed`, -25293).
        case authenticationFailed
        /// The user canceled the authentication prompt (`errSecUserCanceled`, -128).
        case userCanceled
        /// The app is not entitled to the access group (`errSecMissingEntitlement` -34018,
        /// `errSecRestrictedAPI` -34020).
        case missingEntitlement
        /// The request was malformed: a bad parameter, an attribute the class does not have,
        /// an unknown class, or an impossible combination of options (`errSecParam` -50,
        /// `errSecNoSuchAttr` -25303, `errSecNoSuchClass` -25306, `errSecBadReq` -909,
        /// `errSecUnimplemented` -4, `errSecReadOnlyAttr` -25309). A programming error.
        case invalidParameters
        /// The item's data could not be decoded: a corrupt item (`errSecDecode`, -26275) or
        /// data that is not in the format the caller asked for (not UTF-8, not the JSON of
        /// the requested `Decodable` type).
        case dataCorrupted
        /// Anything else (I/O, disk full, read-only keychain, internal errors, unknown
        /// statuses). ``KeychainError/status`` tells which.
        case unexpected

        /// The code's name, for example `interactionNotAllowed`.
        public var description: String { rawValue }

        /// The code for a Keychain Services status: the one mapping in this module.
        /// - Parameter status: A non-zero `OSStatus`.
        /// - Returns: The code an app should handle the status as.
        static func mapping(_ status: OSStatus) -> Code {
            switch status {
            case errSecItemNotFound:
                return .itemNotFound
            case errSecDuplicateItem:
                return .duplicateItem
            case errSecInteractionNotAllowed, errSecInteractionRequired, errSecInDarkWake, KeychainError.upgradePending:
                return .interactionNotAllowed
            case errSecNotAvailable, errSecDataNotAvailable:
                return .keychainUnavailable
            case errSecAuthFailed:
                return .authenticationFailed
            case errSecUserCanceled:
                return .userCanceled
            case errSecMissingEntitlement, KeychainError.restrictedAPI:
                return .missingEntitlement
            case errSecParam, errSecNoSuchAttr, errSecNoSuchClass, errSecBadReq, errSecUnimplemented,
                errSecReadOnlyAttr:
                return .invalidParameters
            case errSecDecode:
                return .dataCorrupted
            default:
                return .unexpected
            }
        }
    }

    /// The Keychain Services function (or local step) that failed.
    public enum Operation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `SecItemAdd`.
        case add = "SecItemAdd"
        /// `SecItemCopyMatching`.
        case copyMatching = "SecItemCopyMatching"
        /// `SecItemUpdate`.
        case update = "SecItemUpdate"
        /// `SecItemDelete`.
        case delete = "SecItemDelete"
        /// `SecAccessControlCreateWithFlags`.
        case createAccessControl = "SecAccessControlCreateWithFlags"
        /// Encoding a value before it is stored.
        case encode = "encode"
        /// Decoding an item's data after it was read.
        case decode = "decode"
        /// Checking the store's configuration.
        case configure = "configure"

        /// The function's name, for example `SecItemAdd`.
        public var description: String { rawValue }
    }

    /// What an app should do about the failure.
    public let code: Code
    /// The raw status Keychain Services returned (for local failures, the closest status:
    /// `errSecParam` for a bad configuration or value, `errSecDecode` for undecodable data).
    public let status: OSStatus
    /// Apple's message for ``status`` (`SecCopyErrorMessageString`).
    public let appleMessage: String
    /// The function or step that failed, when known.
    public let operation: Operation?
    /// The service (or server, for internet passwords) of the item, when known.
    public let service: String?
    /// The key (`kSecAttrAccount`) of the item, when known. A name, never the value.
    public let key: String?
    /// A precise explanation beyond the status, when one is known (for example which option
    /// was invalid, or the keychain engine's own diagnosis). Never contains secret bytes.
    public let detail: String?
    /// The fix for this particular failure, when its cause is known precisely (an empty key,
    /// a value that cannot be encoded, options that contradict each other); ``recoverySuggestion``
    /// returns it instead of the general advice for ``status``.
    public let fix: String?

    /// Creates an error from a Keychain Services status, the single mapping of statuses to
    /// codes in Keysmith.
    ///
    /// - Parameter status: The non-zero status a SecItem function returned.
    ///
    /// ```swift
    /// KeychainError(status: errSecMissingEntitlement).code   // .missingEntitlement
    /// KeychainError(status: -25308).recoverySuggestion      // why, and what to do
    /// ```
    public init(status: OSStatus) {
        self.init(status: status, operation: nil, service: nil, key: nil, detail: nil)
    }

    /// Creates an error with its context.
    /// - Parameters:
    ///   - status: The non-zero status.
    ///   - operation: The function or step that failed.
    ///   - service: The item's service, if known.
    ///   - key: The item's key, if known.
    ///   - detail: A precise explanation, if known; never secret bytes.
    ///   - fix: The fix for this particular cause, if known; `nil` for the general advice
    ///     for `status`.
    public init(
        status: OSStatus, operation: Operation?, service: String?, key: String?, detail: String? = nil,
        fix: String? = nil
    ) {
        self.code = Code.mapping(status)
        self.status = status
        self.appleMessage = KeychainError.message(for: status)
        self.operation = operation
        self.service = service
        self.key = key
        self.detail = detail
        self.fix = fix
    }

    /// Whether the failure may go away by itself once the device is unlocked or protected
    /// data becomes available (``Code/interactionNotAllowed`` and
    /// ``Code/keychainUnavailable``). ``ProtectedDataAvailability`` retries exactly these.
    public var isTransient: Bool {
        code == .interactionNotAllowed || code == .keychainUnavailable
    }

    // MARK: Messages

    /// What happened, in one sentence, with the status and Apple's message.
    public var errorDescription: String? { description }

    /// Why it happened: Apple's message, plus the precise detail when one is known.
    public var failureReason: String? {
        if let detail { return "\(appleMessage) \(detail)" }
        return appleMessage
    }

    /// The fix: ``fix`` when the cause is known precisely, otherwise the likely causes of
    /// ``status`` and what to do about each.
    public var recoverySuggestion: String? {
        if let fix { return fix }
        switch status {
        case errSecItemNotFound:
            return "No item matches this service, key and access group. Check the spelling of the service and key, "
                + "that the item was written with the same access group and synchronizable setting, and that it was "
                + "not removed (for example by a reinstall cleanup)."
        case errSecDuplicateItem:
            return "An item with the same service and key (and access group) already exists. KeychainStore.set "
                + "updates existing items; if you call SecItemAdd yourself, call SecItemUpdate first and add only "
                + "when it returns errSecItemNotFound."
        case errSecInteractionNotAllowed, errSecInteractionRequired, errSecInDarkWake:
            return "The device is locked and the item's accessibility does not allow access while locked, or an "
                + "authentication prompt could not be shown (background, extension, simulator). For data read in "
                + "the background (refresh tasks, push handling, Bluetooth reconnects) use "
                + ".afterFirstUnlockThisDeviceOnly; otherwise retry when protected data becomes available "
                + "(ProtectedDataAvailability), and read access-controlled items only from the foreground."
        case KeychainError.upgradePending:
            return "The keychain needs an upgrade that cannot run while the device is locked. Retry after the "
                + "device is unlocked (ProtectedDataAvailability)."
        case errSecNotAvailable:
            return "The keychain cannot be used right now: the device may be locked with a strict accessibility "
                + "(use .afterFirstUnlockThisDeviceOnly, or retry when protected data becomes available), "
                + ".whenPasscodeSetThisDeviceOnly was used on a device without a passcode, or (on Linux) the "
                + "keychain directory cannot be opened; check its permissions."
        case errSecDataNotAvailable:
            return "The item's contents cannot be read right now. Retry after the device is unlocked; if it "
                + "persists, remove and rewrite the item."
        case errSecAuthFailed:
            return "The user did not pass the item's access control (biometry or passcode), or the credentials "
                + "were wrong. Let the user try again; if biometry enrollment changed and the item uses "
                + ".biometryCurrentSet, it can no longer be read: remove it and ask the user to sign in again."
        case errSecUserCanceled:
            return "The user canceled the authentication prompt. Treat it as a choice, not a failure: offer to "
                + "try again or another way to sign in; do not retry in a loop."
        case errSecMissingEntitlement:
            return "The app is not entitled to this access group. Check Signing & Capabilities > Keychain Sharing "
                + "in every target that shares the item, that the group (TEAMID.group) matches the one in code, and "
                + "that the app and its extensions are signed by the same team; test on a device, because the "
                + "simulator does not check entitlements. On Linux, check KEYSMITH_ACCESS_GROUPS or the "
                + "entitlements plist."
        case KeychainError.restrictedAPI:
            return "This process is restricted (for example an App Clip) and may not use this keychain feature or "
                + "access group."
        case errSecParam, errSecBadReq:
            return "The keychain refused the request as malformed (a missing required attribute, a value of the wrong "
                + "type, or attributes that contradict each other). The detail, when present, names what it found; "
                + "check the attributes passed, or the store's options."
        case errSecNoSuchAttr, errSecNoSuchClass, errSecReadOnlyAttr, errSecUnimplemented:
            return "The request used an attribute or class the keychain does not support for this item. Check the "
                + "item class and the attributes passed."
        case errSecDecode:
            return "The item's data is not in the expected format: it was written by other code or with another "
                + "type, or it is corrupt. Read it with the type it was written with, or remove it and write it again."
        case errSecDiskFull:
            return "The disk is full. Free space and retry."
        case errSecIO, errSecReadOnly, errSecWrPerm:
            return "The keychain could not be written or read. Check free space and (on Linux) the keychain "
                + "directory's permissions, then retry."
        default:
            return "Unexpected keychain status \(status). Look it up with SecCopyErrorMessageString or in SecBase.h; "
                + "retry once, and report it if it persists."
        }
    }

    /// One line: what failed, the status with its name and Apple's message, the detail, and
    /// the fix. Never contains secret bytes.
    public var description: String {
        var text = "Keychain "
        switch operation {
        case .some(let operation): text += "\(operation) failed"
        case .none: text += "call failed"
        }
        if let key, let service {
            text += " for key '\(key)' in service '\(service)'"
        } else if let service {
            text += " in service '\(service)'"
        } else if let key {
            text += " for key '\(key)'"
        }
        text += ": \(code) (\(KeychainError.name(for: status)) \(status)): \(appleMessage)"
        if let detail { text += " \(detail)" }
        if let recoverySuggestion { text += " Fix: \(recoverySuggestion)" }
        return text
    }

    // MARK: Status names and messages

    /// `errSecUpgradePending` (-34019) is private in Apple's headers; it is mapped here by value.
    static let upgradePending: OSStatus = -34019
    /// `errSecRestrictedAPI` (-34020), by value: not every SDK version declares it.
    static let restrictedAPI: OSStatus = -34020

    /// Apple's message for a status, through `SecCopyErrorMessageString`.
    static func message(for status: OSStatus) -> String {
        if let message = SecCopyErrorMessageString(status, nil) {
            return message as String
        }
        return "OSStatus \(status)"
    }

    /// The constant name of a status, for messages (for example `errSecItemNotFound`).
    static func name(for status: OSStatus) -> String {
        switch status {
        case errSecSuccess: return "errSecSuccess"
        case errSecUnimplemented: return "errSecUnimplemented"
        case errSecDiskFull: return "errSecDiskFull"
        case errSecIO: return "errSecIO"
        case errSecParam: return "errSecParam"
        case errSecWrPerm: return "errSecWrPerm"
        case errSecUserCanceled: return "errSecUserCanceled"
        case errSecBadReq: return "errSecBadReq"
        case errSecNotAvailable: return "errSecNotAvailable"
        case errSecReadOnly: return "errSecReadOnly"
        case errSecAuthFailed: return "errSecAuthFailed"
        case errSecDuplicateItem: return "errSecDuplicateItem"
        case errSecItemNotFound: return "errSecItemNotFound"
        case errSecNoSuchAttr: return "errSecNoSuchAttr"
        case errSecNoSuchClass: return "errSecNoSuchClass"
        case errSecInteractionNotAllowed: return "errSecInteractionNotAllowed"
        case errSecReadOnlyAttr: return "errSecReadOnlyAttr"
        case errSecInteractionRequired: return "errSecInteractionRequired"
        case errSecDataNotAvailable: return "errSecDataNotAvailable"
        case errSecInDarkWake: return "errSecInDarkWake"
        case errSecDecode: return "errSecDecode"
        case errSecMissingEntitlement: return "errSecMissingEntitlement"
        case upgradePending: return "errSecUpgradePending"
        case restrictedAPI: return "errSecRestrictedAPI"
        default: return "OSStatus"
        }
    }

    // MARK: Local failures

    /// A store configuration or argument that cannot work (reported as `errSecParam`), with
    /// what is wrong and the fix for exactly that.
    static func invalidConfiguration(_ detail: String, fix: String, service: String?, key: String? = nil) -> KeychainError {
        KeychainError(status: errSecParam, operation: .configure, service: service, key: key, detail: detail, fix: fix)
    }
}

