#if !canImport(Security)
import Foundation

// The `OSStatus` result codes of Keychain Services and `SecCopyErrorMessageString`.
//
// The numbers are Apple's (`SecBase.h`, and `SecBasePriv.h` for the internal ones); the
// message texts are the ones Apple's `SecCopyErrorMessageString` returns, which come from
// the comments next to each code in `SecBase.h`. See section 4 of `secitem-semantics.md`.

// MARK: - Public result codes

/// No error.
public let errSecSuccess: OSStatus = 0
/// No error: the status of success in every Apple API (MacTypes' `noErr`), equal to
/// `errSecSuccess`. Tutorials and wrappers compare keychain results with it.
public let noErr: OSStatus = 0
/// The function or operation is not implemented (also Apple's `errSecUnsupportedOperation`).
public let errSecUnimplemented: OSStatus = -4
/// The disk is full.
public let errSecDiskFull: OSStatus = -34
/// An input/output error occurred.
public let errSecIO: OSStatus = -36
/// The file is already open with write permission.
public let errSecOpWr: OSStatus = -49
/// One or more parameters passed to the function were not valid (malformed queries and attributes).
public let errSecParam: OSStatus = -50
/// A write-permission error occurred.
public let errSecWrPerm: OSStatus = -61
/// Memory could not be allocated.
public let errSecAllocate: OSStatus = -108
/// The user cancelled the operation (for example an authentication prompt).
public let errSecUserCanceled: OSStatus = -128
/// A parameter was bad, or the operation was requested in an invalid state.
public let errSecBadReq: OSStatus = -909
/// An internal component of the keychain failed.
public let errSecInternalComponent: OSStatus = -2070
/// An unknown Core Foundation error occurred.
public let errSecCoreFoundationUnknown: OSStatus = -4960
/// No keychain is available (the database could not be opened or used).
public let errSecNotAvailable: OSStatus = -25291
/// The keychain is read-only and cannot be modified.
public let errSecReadOnly: OSStatus = -25292
/// Authentication failed (wrong user name or passphrase, or access control not satisfied).
public let errSecAuthFailed: OSStatus = -25293
/// The specified keychain could not be found.
public let errSecNoSuchKeychain: OSStatus = -25294
/// The specified keychain is not a valid keychain file.
public let errSecInvalidKeychain: OSStatus = -25295
/// A keychain with the same name already exists.
public let errSecDuplicateKeychain: OSStatus = -25296
/// An item with the same primary key already exists in the keychain.
public let errSecDuplicateItem: OSStatus = -25299
/// No item matched the query.
public let errSecItemNotFound: OSStatus = -25300
/// The buffer is too small for the item (not enough memory available).
public let errSecBufferTooSmall: OSStatus = -25301
/// The item's data is too large or in a format that cannot be displayed.
public let errSecDataTooLarge: OSStatus = -25302
/// The attribute does not exist for this item class.
public let errSecNoSuchAttr: OSStatus = -25303
/// The item reference is no longer valid; the item may have been deleted.
public let errSecInvalidItemRef: OSStatus = -25304
/// The current keychain could not be searched.
public let errSecInvalidSearchRef: OSStatus = -25305
/// The item class is not a valid keychain item class.
public let errSecNoSuchClass: OSStatus = -25306
/// No default keychain could be found.
public let errSecNoDefaultKeychain: OSStatus = -25307
/// User interaction is not allowed (for example the device is locked, or UI was refused).
public let errSecInteractionNotAllowed: OSStatus = -25308
/// The attribute is read-only and could not be modified.
public let errSecReadOnlyAttr: OSStatus = -25309
/// User interaction is required, but is currently not allowed.
public let errSecInteractionRequired: OSStatus = -25315
/// The contents of the item cannot be retrieved.
public let errSecDataNotAvailable: OSStatus = -25316
/// The contents of the item cannot be modified.
public let errSecDataNotModifiable: OSStatus = -25317
/// The system is in dark wake, so no UI can be shown.
public let errSecInDarkWake: OSStatus = -25320
/// The provided data could not be decoded (for example a corrupt item).
public let errSecDecode: OSStatus = -26275
/// A required entitlement (access group) is missing.
public let errSecMissingEntitlement: OSStatus = -34018
/// The client is restricted (for example an App Clip) and may not perform this operation.
public let errSecRestrictedAPI: OSStatus = -34020
/// The required service is not available.
public let errSecServiceNotAvailable: OSStatus = -67585
/// An invalid value was detected.
public let errSecInvalidValue: OSStatus = -67694
/// A missing value was detected.
public let errSecMissingValue: OSStatus = -67871

// MARK: - Private result codes (Apple's SecBasePriv.h)

/// Authentication is needed before the requested action can be performed (drives authentication prompts).
let errSecAuthNeeded: OSStatus = -25330
/// An internal error occurred in the Security framework.
let errSecInternal: OSStatus = -26276
/// The keychain database needs a schema migration, but the device is locked; retry after unlock.
let errSecUpgradePending: OSStatus = -34019

// MARK: - Message texts

/// The text `SecCopyErrorMessageString` returns for each known code.
let secErrorMessages: [OSStatus: String] = [
    0: "No error.",
    -4: "Function or operation not implemented.",
    -34: "The disk is full.",
    -36: "I/O error.",
    -49: "File already open with write permission.",
    -50: "One or more parameters passed to a function were not valid.",
    -61: "Write permissions error.",
    -108: "Failed to allocate memory.",
    -128: "User canceled the operation.",
    -909: "Bad parameter or invalid state for operation.",
    -2070: "An internal component failed.",
    -4960: "CoreFoundation unknown error.",
    -25291: "No keychain is available. You may need to restart your computer.",
    -25292: "This keychain cannot be modified.",
    -25293: "The user name or passphrase you entered is not correct.",
    -25294: "The specified keychain could not be found.",
    -25295: "The specified keychain is not a valid keychain file.",
    -25296: "A keychain with the same name already exists.",
    -25299: "The specified item already exists in the keychain.",
    -25300: "The specified item could not be found in the keychain.",
    -25301: "There is not enough memory available to use the specified item.",
    -25302: "This item contains information which is too large or in a format that cannot be displayed.",
    -25303: "The specified attribute does not exist.",
    -25304: "The specified item is no longer valid. It may have been deleted from the keychain.",
    -25305: "Unable to search the current keychain.",
    -25306: "The specified item does not appear to be a valid keychain item.",
    -25307: "A default keychain could not be found.",
    -25308: "User interaction is not allowed.",
    -25309: "The specified attribute could not be modified.",
    -25315: "User interaction is required, but is currently not allowed.",
    -25316: "The contents of this item cannot be retrieved.",
    -25317: "The contents of this item cannot be modified.",
    -25320: "In dark wake, no UI possible",
    -25330: "Auth is needed before the requested action can be performed.",
    -26275: "Unable to decode the provided data.",
    -26276: "An internal error occured in the Security framework.",
    -34018: "A required entitlement isn't present.",
    -34019: "Error returned if keychain database needs a schema migration but the device is locked, clients should wait for a device unlock notification and retry the command.",
    -34020: "Client is restricted and is not permitted to perform this operation.",
    -67585: "The required service is not available.",
    -67694: "An invalid value was detected.",
    -67871: "A missing value was detected.",
]

/// The constant name of each known code, for diagnostics.
private let secErrorNames: [OSStatus: String] = [
    0: "errSecSuccess",
    -4: "errSecUnimplemented",
    -34: "errSecDiskFull",
    -36: "errSecIO",
    -49: "errSecOpWr",
    -50: "errSecParam",
    -61: "errSecWrPerm",
    -108: "errSecAllocate",
    -128: "errSecUserCanceled",
    -909: "errSecBadReq",
    -2070: "errSecInternalComponent",
    -4960: "errSecCoreFoundationUnknown",
    -25291: "errSecNotAvailable",
    -25292: "errSecReadOnly",
    -25293: "errSecAuthFailed",
    -25294: "errSecNoSuchKeychain",
    -25295: "errSecInvalidKeychain",
    -25296: "errSecDuplicateKeychain",
    -25299: "errSecDuplicateItem",
    -25300: "errSecItemNotFound",
    -25301: "errSecBufferTooSmall",
    -25302: "errSecDataTooLarge",
    -25303: "errSecNoSuchAttr",
    -25304: "errSecInvalidItemRef",
    -25305: "errSecInvalidSearchRef",
    -25306: "errSecNoSuchClass",
    -25307: "errSecNoDefaultKeychain",
    -25308: "errSecInteractionNotAllowed",
    -25309: "errSecReadOnlyAttr",
    -25315: "errSecInteractionRequired",
    -25316: "errSecDataNotAvailable",
    -25317: "errSecDataNotModifiable",
    -25320: "errSecInDarkWake",
    -25330: "errSecAuthNeeded",
    -26275: "errSecDecode",
    -26276: "errSecInternal",
    -34018: "errSecMissingEntitlement",
    -34019: "errSecUpgradePending",
    -34020: "errSecRestrictedAPI",
    -67585: "errSecServiceNotAvailable",
    -67694: "errSecInvalidValue",
    -67871: "errSecMissingValue",
]

// MARK: - Functions

/// Returns a human-readable description of a Keychain Services result code.
///
/// - Parameters:
///   - status: The result code to describe, such as `errSecItemNotFound`.
///   - reserved: Reserved for future use; pass `nil`.
/// - Returns: The message for `status`, or `"OSStatus <status>"` when the code is unknown.
@discardableResult
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    if let message = secErrorMessages[status] {
        return NSString(string: message)
    }
    return NSString(string: "OSStatus \(status)")
}

/// Returns the constant name of a result code (for example `"errSecItemNotFound"`), or
/// `nil` when the code is not one of those declared here. Meant for logs and test output.
func secErrorName(_ status: OSStatus) -> String? {
    secErrorNames[status]
}
#endif
