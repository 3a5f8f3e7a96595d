#if !canImport(Security)
import Foundation

/// Apple's access-control flags for keychain items (`SecAccessControlCreateFlags`), with
/// Apple's raw values.
public struct SecAccessControlCreateFlags: OptionSet, Sendable, Hashable {
    public let rawValue: CFOptionFlags
    /// Creates flags from Apple's raw value.
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    /// Biometry or the device passcode (the user must be present).
    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    /// Any enrolled biometry, surviving enrollment changes.
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    /// The former name of ``biometryAny``.
    public static let touchIDAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    /// The biometry enrolled now; invalidated when enrollment changes.
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    /// The former name of ``biometryCurrentSet``.
    public static let touchIDCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    /// The device passcode (here: the keychain passphrase).
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    /// A paired watch.
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    /// A paired companion device (the newer name of ``watch``).
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    /// Any one of the listed constraints suffices.
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    /// All of the listed constraints are required.
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    /// A private key that may be used (not read) without the other constraints.
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    /// An application-supplied password is needed as well.
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// Every flag Apple defines.
    static let known: SecAccessControlCreateFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .or, .and,
        .privateKeyUsage, .applicationPassword,
    ]

    /// The flags that require someone to authenticate before the item can be used.
    static let authenticationConstraints: SecAccessControlCreateFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .applicationPassword,
    ]
}

/// An item's access control: its protection class (accessibility) plus the authentication
/// it requires. Created with ``SecAccessControlCreateWithFlags(_:_:_:_:)`` and passed as
/// `kSecAttrAccessControl`; returned in attribute dictionaries.
public final class SecAccessControl: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The accessibility value (`kSecAttrAccessible…`) the item is protected with (Linux only:
    /// Apple's access control is opaque).
    #if KEYSMITH_APPLE_SURFACE
    @_spi(LinuxKeychain)
    #endif
    public let protection: String
    /// The authentication constraints (Linux only: Apple's access control is opaque).
    #if KEYSMITH_APPLE_SURFACE
    @_spi(LinuxKeychain)
    #endif
    public let flags: SecAccessControlCreateFlags

    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }

    /// Whether using the item requires authentication.
    var requiresAuthentication: Bool { !flags.intersection(.authenticationConstraints).isEmpty }

    public static func == (lhs: SecAccessControl, rhs: SecAccessControl) -> Bool {
        lhs.protection == rhs.protection && lhs.flags == rhs.flags
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(protection)
        hasher.combine(flags.rawValue)
    }

    /// For example `SecAccessControl(protection: ak, flags: 0x8)`.
    public var description: String {
        "SecAccessControl(protection: \(protection), flags: 0x\(String(flags.rawValue, radix: 16)))"
    }
}

/// Creates an access-control object for a keychain item, as Apple's function does.
///
/// - Parameters:
///   - allocator: Ignored (pass `nil` or `kCFAllocatorDefault`).
///   - protection: One of the `kSecAttrAccessible…` constants.
///   - flags: The authentication constraints.
///   - error: On failure, receives an `NSError` in `NSOSStatusErrorDomain` whose code is
///     `errSecParam`, with a description of what was wrong.
/// - Returns: The access control, or `nil` when `protection` is not an accessibility
///   value, both `.or` and `.and` are set, or a flag is unknown.
@discardableResult
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    func fail(_ reason: String) -> SecAccessControl? {
        let nsError = NSError(
            domain: NSOSStatusErrorDomain, code: Int(errSecParam),
            userInfo: [NSLocalizedDescriptionKey: reason])
        error?.pointee = Unmanaged.passRetained(nsError)
        return nil
    }
    guard let value = protection as? String, ProtectionClass(rawValue: value) != nil else {
        return fail("SecAccessControlCreateWithFlags: the protection is not a kSecAttrAccessible… value.")
    }
    if flags.contains(.or) && flags.contains(.and) {
        return fail("SecAccessControlCreateWithFlags: only one of .or and .and can be set.")
    }
    if !SecAccessControlCreateFlags.known.isSuperset(of: flags) {
        return fail("SecAccessControlCreateWithFlags: unknown flag bits 0x\(String(flags.subtracting(.known).rawValue, radix: 16)).")
    }
    return SecAccessControl(protection: value, flags: flags)
}

// `NSOSStatusErrorDomain`, the domain of these errors, is Foundation's own (on Linux too).
#endif
