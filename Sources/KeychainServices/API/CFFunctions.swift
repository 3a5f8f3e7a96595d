#if !canImport(Security)
import Foundation

// The Core Foundation functions that keychain code calls around SecItem, with Apple's
// meanings, over the Foundation classes that stand for the CF types here (`CFError` is
// `NSError`, `CFData` is `NSData`, …). Each one is what tutorials and wrappers call:
// turning the `Unmanaged<CFError>` of `SecAccessControlCreateWithFlags` into an `NSError`,
// reading a result's bytes, comparing a returned accessibility with a constant.
//
// Like every C function Swift imports on Apple platforms, their results are discardable.
//
// Deliberately absent:
// - `CFRelease`, `CFRetain`, `CFAutorelease`: Swift marks them unavailable on Apple
//   platforms too ("Core Foundation objects are automatically memory managed"), so no
//   Swift code that builds there calls them.
// - `CFDictionaryGetValue`, `CFArrayGetValueAtIndex` (and the other functions returning an
//   unretained pointer to a contained value): Foundation on Linux hands out a dictionary's
//   or array's values as Swift values, boxed anew on each access, so no pointer to them
//   outlives the call. Swift code reads results as `[String: Any]` and `[[String: Any]]`.

// MARK: - CFError

/// The domain of a `CFError`; Apple's `CFErrorDomain`.
public typealias CFErrorDomain = CFString

/// The domain of errors whose code is an `OSStatus` (the domain of keychain errors).
nonisolated(unsafe) public let kCFErrorDomainOSStatus: CFErrorDomain = "NSOSStatusErrorDomain"
/// The domain of errors whose code is a POSIX `errno`.
nonisolated(unsafe) public let kCFErrorDomainPOSIX: CFErrorDomain = "NSPOSIXErrorDomain"
/// The user-info key of a localized, complete description of the error.
nonisolated(unsafe) public let kCFErrorLocalizedDescriptionKey: CFString = "NSLocalizedDescription"
/// The user-info key of a localized reason for the failure.
nonisolated(unsafe) public let kCFErrorLocalizedFailureReasonKey: CFString = "NSLocalizedFailureReason"
/// The user-info key of a localized suggestion of what to do.
nonisolated(unsafe) public let kCFErrorLocalizedRecoverySuggestionKey: CFString = "NSLocalizedRecoverySuggestion"
/// The user-info key of the error that caused this one.
nonisolated(unsafe) public let kCFErrorUnderlyingErrorKey: CFString = "NSUnderlyingError"

/// The domain of an error (for keychain errors `kCFErrorDomainOSStatus`).
/// - Parameter err: The error, for example `error.takeRetainedValue()` of an
///   `Unmanaged<CFError>` filled in by ``SecAccessControlCreateWithFlags(_:_:_:_:)``.
/// - Returns: The domain.
@discardableResult
public func CFErrorGetDomain(_ err: CFError!) -> CFErrorDomain! {
    NSString(string: err.domain)
}

/// The code of an error within its domain (for keychain errors an `OSStatus`).
/// - Parameter err: The error.
/// - Returns: The code.
@discardableResult
public func CFErrorGetCode(_ err: CFError!) -> CFIndex {
    err.code
}

/// A copy of an error's user-info dictionary; empty (never `nil`) when it has none.
/// - Parameter err: The error.
/// - Returns: The dictionary (`as! [String: Any]` reads it as in Swift on Apple platforms).
@discardableResult
public func CFErrorCopyUserInfo(_ err: CFError!) -> CFDictionary! {
    NSDictionary(dictionary: err.userInfo)
}

/// A complete sentence describing the error: its localized description if it has one,
/// else one built from the failure reason, or from the domain and code.
/// - Parameter err: The error.
/// - Returns: The description; never `nil`.
@discardableResult
public func CFErrorCopyDescription(_ err: CFError!) -> CFString! {
    NSString(string: err.localizedDescription)
}

/// The localized reason of the failure, if the error has one.
/// - Parameter err: The error.
/// - Returns: `kCFErrorLocalizedFailureReasonKey`'s value, or `nil`.
@discardableResult
public func CFErrorCopyFailureReason(_ err: CFError!) -> CFString! {
    err.localizedFailureReason.map { NSString(string: $0) }
}

/// The localized suggestion of what to do, if the error has one.
/// - Parameter err: The error.
/// - Returns: `kCFErrorLocalizedRecoverySuggestionKey`'s value, or `nil`.
@discardableResult
public func CFErrorCopyRecoverySuggestion(_ err: CFError!) -> CFString! {
    err.localizedRecoverySuggestion.map { NSString(string: $0) }
}

/// Creates an error.
/// - Parameters:
///   - allocator: Ignored (pass `nil` or `kCFAllocatorDefault`).
///   - domain: The domain, for example `kCFErrorDomainOSStatus`.
///   - code: The code within the domain.
///   - userInfo: The user-info dictionary, or `nil` for an empty one.
/// - Returns: The error.
@discardableResult
public func CFErrorCreate(_ allocator: CFAllocator!, _ domain: CFErrorDomain!, _ code: CFIndex, _ userInfo: CFDictionary!) -> CFError! {
    var info: [String: Any] = [:]
    for (key, value) in userInfo ?? NSDictionary() {
        if let key = key as? String { info[key] = value }
    }
    return NSError(domain: String(describing: domain ?? ""), code: code, userInfo: info)
}

// MARK: - CFData

/// The number of bytes in `theData`.
/// - Parameter theData: The data, for example a `SecItemCopyMatching` result `as! CFData`.
/// - Returns: Its length.
@discardableResult
public func CFDataGetLength(_ theData: CFData!) -> CFIndex {
    theData.length
}

/// A pointer to the bytes of `theData`, valid as long as `theData` is.
/// - Parameter theData: The data.
/// - Returns: A pointer to its first byte (read `CFDataGetLength(theData)` bytes).
@discardableResult
public func CFDataGetBytePtr(_ theData: CFData!) -> UnsafePointer<UInt8>! {
    theData.bytes.assumingMemoryBound(to: UInt8.self)
}

/// Creates data holding a copy of `length` bytes.
/// - Parameters:
///   - allocator: Ignored (pass `nil` or `kCFAllocatorDefault`).
///   - bytes: The bytes to copy (may be `nil` when `length` is 0).
///   - length: How many bytes to copy.
/// - Returns: The data, or `nil` when `length` is negative, or `bytes` is `nil` for a
///   non-zero length.
@discardableResult
public func CFDataCreate(_ allocator: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) -> CFData! {
    guard length >= 0 else { return nil }
    guard length > 0 else { return NSData() }
    guard let bytes else { return nil }
    return NSData(bytes: bytes, length: length)
}

// MARK: - CFDictionary and CFArray counts

/// The number of entries in `theDict`.
/// - Parameter theDict: The dictionary.
/// - Returns: Its count.
@discardableResult
public func CFDictionaryGetCount(_ theDict: CFDictionary!) -> CFIndex {
    theDict.count
}

/// The number of values in `theArray`.
/// - Parameter theArray: The array, for example a `kSecMatchLimitAll` result `as! CFArray`.
/// - Returns: Its count.
@discardableResult
public func CFArrayGetCount(_ theArray: CFArray!) -> CFIndex {
    theArray.count
}

// MARK: - CFBoolean, CFEqual, CFString

/// The value of a boolean such as `kCFBooleanTrue`.
/// - Parameter boolean: The boolean.
/// - Returns: Its value.
@discardableResult
public func CFBooleanGetValue(_ boolean: CFBoolean!) -> Bool {
    boolean.boolValue
}

/// Whether two values are equal: strings by their characters, data by its bytes, numbers
/// by value, dictionaries and arrays by their contents.
/// - Parameters:
///   - cf1: A value, for example a returned `kSecAttrAccessible`.
///   - cf2: Another, for example `kSecAttrAccessibleWhenUnlocked`.
/// - Returns: `true` when they are equal.
@discardableResult
public func CFEqual(_ cf1: CFTypeRef!, _ cf2: CFTypeRef!) -> Bool {
    guard let cf1, let cf2 else { return cf1 == nil && cf2 == nil }
    if cf1 === cf2 { return true }
    if let left = cf1 as? String, let right = cf2 as? String { return left == right }
    if let left = cf1 as? NSObject { return left.isEqual(cf2) }
    if let right = cf2 as? NSObject { return right.isEqual(cf1) }
    return false
}

/// A string encoding; Apple's `CFStringEncoding`.
public typealias CFStringEncoding = UInt32

/// The encodings every platform supports, with Apple's raw values.
public enum CFStringBuiltInEncodings: CFStringEncoding, Sendable {
    /// Mac OS Roman.
    case macRoman = 0
    /// Windows Latin 1 (code page 1252).
    case windowsLatin1 = 0x0500
    /// ISO 8859-1.
    case isoLatin1 = 0x0201
    /// 7-bit ASCII.
    case ASCII = 0x0600
    /// UTF-8.
    case UTF8 = 0x0800_0100

    var foundation: String.Encoding {
        switch self {
        case .macRoman: return .macOSRoman
        case .windowsLatin1: return .windowsCP1252
        case .isoLatin1: return .isoLatin1
        case .ASCII: return .ascii
        case .UTF8: return .utf8
        }
    }
}

/// Creates a string from a NUL-terminated C string.
/// - Parameters:
///   - alloc: Ignored (pass `nil` or `kCFAllocatorDefault`).
///   - cStr: The C string.
///   - encoding: Its encoding, for example `CFStringBuiltInEncodings.UTF8.rawValue`.
/// - Returns: The string, or `nil` when the bytes are not valid in `encoding` or the
///   encoding is not one of ``CFStringBuiltInEncodings``.
@discardableResult
public func CFStringCreateWithCString(_ alloc: CFAllocator!, _ cStr: UnsafePointer<CChar>!, _ encoding: CFStringEncoding) -> CFString! {
    guard let cStr, let known = CFStringBuiltInEncodings(rawValue: encoding) else { return nil }
    guard let string = String(cString: cStr, encoding: known.foundation) else { return nil }
    return NSString(string: string)
}

/// The length of a string in UTF-16 code units (as Apple counts it).
/// - Parameter theString: The string.
/// - Returns: Its length.
@discardableResult
public func CFStringGetLength(_ theString: CFString!) -> CFIndex {
    theString.length
}

// MARK: - Bundle keys

/// The `Info.plist` key of the bundle identifier (wrappers read their default service
/// from `Bundle.main.infoDictionary` with it; on Linux it is usually absent).
nonisolated(unsafe) public let kCFBundleIdentifierKey: CFString = "CFBundleIdentifier"
/// The `Info.plist` key of the bundle name.
nonisolated(unsafe) public let kCFBundleNameKey: CFString = "CFBundleName"
/// The `Info.plist` key of the bundle version.
nonisolated(unsafe) public let kCFBundleVersionKey: CFString = "CFBundleVersion"
#endif
