#if !canImport(Security)
import Foundation

// Core Foundation's type identifiers, for code ported from C or Objective-C that checks a
// keychain result with `CFGetTypeID(result) == CFDataGetTypeID()`. Each Foundation class
// the keychain hands out has one identifier; anything else is `kCFNotATypeID` (0).

/// The identifier of values of no known type.
let kCFNotATypeID: CFTypeID = 0

/// The type identifier of `cf`: the identifier of its Core Foundation type, as the
/// `…GetTypeID()` functions return them.
/// - Parameter cf: Any value a keychain call returned (or a value about to be passed in).
/// - Returns: The matching `…GetTypeID()` value, or 0 for other types.
public func CFGetTypeID(_ cf: CFTypeRef?) -> CFTypeID {
    guard let cf else { return kCFNotATypeID }
    if cf is SecAccessControl { return SecAccessControlGetTypeID() }
    if cf is NSData { return CFDataGetTypeID() }
    if cf is NSString { return CFStringGetTypeID() }
    if cf is NSDictionary { return CFDictionaryGetTypeID() }
    if cf is NSArray { return CFArrayGetTypeID() }
    if cf is NSDate { return CFDateGetTypeID() }
    if cf is NSNumber {
        return QueryParser.isBoolean(cf) ? CFBooleanGetTypeID() : CFNumberGetTypeID()
    }
    return kCFNotATypeID
}

/// The type identifier of `CFData` (`NSData`).
public func CFDataGetTypeID() -> CFTypeID { 20 }
/// The type identifier of `CFString` (`NSString`).
public func CFStringGetTypeID() -> CFTypeID { 7 }
/// The type identifier of `CFDictionary` (`NSDictionary`).
public func CFDictionaryGetTypeID() -> CFTypeID { 18 }
/// The type identifier of `CFArray` (`NSArray`).
public func CFArrayGetTypeID() -> CFTypeID { 19 }
/// The type identifier of `CFNumber` (`NSNumber` that is not a boolean).
public func CFNumberGetTypeID() -> CFTypeID { 22 }
/// The type identifier of `CFBoolean` (`kCFBooleanTrue`, `kCFBooleanFalse`).
public func CFBooleanGetTypeID() -> CFTypeID { 21 }
/// The type identifier of `CFDate` (`NSDate`).
public func CFDateGetTypeID() -> CFTypeID { 42 }
/// The type identifier of ``SecAccessControl``.
public func SecAccessControlGetTypeID() -> CFTypeID { 300 }
#endif
