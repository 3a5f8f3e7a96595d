#if !canImport(Security)
import CSodium
import Foundation

// Apple's SecRandom.h: cryptographically secure random bytes, here from libsodium's
// `randombytes_buf` (the kernel's generator, `getrandom`). Tutorials generate keys, salts
// and nonces with it next to their keychain calls.

/// A reference to a random number generator; Apple's `SecRandomRef`. Only the default
/// generator exists (``kSecRandomDefault``).
public typealias SecRandomRef = OpaquePointer

/// The default random number generator, a synonym for `NULL` (as on Apple platforms).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes.
///
/// - Parameters:
///   - rnd: The generator: ``kSecRandomDefault`` (or `nil`); no other exists.
///   - count: How many bytes to write; 0 writes nothing.
///   - bytes: Where to write them, at least `count` bytes long (`&array`, a buffer's
///     `baseAddress`).
/// - Returns: `errSecSuccess`; `errSecParam` when `rnd` is not the default generator or
///   `count` is negative, and then nothing is written.
/// - Note: As with every function Apple imports from C, the result may be ignored without
///   a warning; check it, as Apple's documentation asks.
@discardableResult
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard rnd == nil, count >= 0 else { return errSecParam }
    guard count > 0 else { return errSecSuccess }
    guard Sodium.isReady else { return errSecInternalComponent }
    randombytes_buf(bytes, count)
    return errSecSuccess
}
#endif
