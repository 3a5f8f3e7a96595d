#if !canImport(Security)
import Foundation

// Core Foundation names used by keychain code, mapped onto Foundation's classes so that
// code written for iOS (`query as CFDictionary`, `var result: CFTypeRef?`,
// `result as? Data`, `kSecClass as String`) compiles unchanged on Linux.

/// A reference to any object; Apple's `CFTypeRef`.
public typealias CFTypeRef = AnyObject
/// Apple's `CFDictionary`, here Foundation's `NSDictionary`.
public typealias CFDictionary = NSDictionary
/// Apple's `CFMutableDictionary`, here Foundation's `NSMutableDictionary`.
public typealias CFMutableDictionary = NSMutableDictionary
/// Apple's `CFString`, here Foundation's `NSString`.
public typealias CFString = NSString
/// Apple's `CFData`, here Foundation's `NSData`.
public typealias CFData = NSData
/// Apple's `CFArray`, here Foundation's `NSArray`.
public typealias CFArray = NSArray
/// Apple's `CFNumber`, here Foundation's `NSNumber`.
public typealias CFNumber = NSNumber
/// Apple's `CFBoolean`, here Foundation's `NSNumber` holding a `Bool`.
public typealias CFBoolean = NSNumber
/// Apple's `CFDate`, here Foundation's `NSDate`.
public typealias CFDate = NSDate
/// Apple's `CFError`, here Foundation's `NSError`.
public typealias CFError = NSError
/// Apple's `CFIndex`.
public typealias CFIndex = Int
/// Apple's `CFOptionFlags`.
public typealias CFOptionFlags = UInt
/// Apple's `CFTypeID`.
public typealias CFTypeID = UInt

/// Apple's status code type: `0` (`errSecSuccess`) or a negative `errSec*` value.
public typealias OSStatus = Int32

/// Apple's `CFAllocator`. Memory is managed by Swift here, so the allocator argument of
/// the keychain functions is accepted and ignored, as passing `nil` or
/// `kCFAllocatorDefault` is on Apple platforms.
public final class CFAllocator: @unchecked Sendable {
    fileprivate init() {}
}

/// The default allocator (accepted and ignored; see ``CFAllocator``).
public let kCFAllocatorDefault: CFAllocator? = nil

/// Core Foundation's `true` (a `Bool`-typed `NSNumber`).
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// Core Foundation's `false` (a `Bool`-typed `NSNumber`).
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)
#endif
