// KeychainServices: Apple's Keychain Services API on every platform.
//
// On Apple platforms this module re-exports Security and compiles nothing else, so
// `import KeychainServices` is exactly `import Security` there. Everywhere else the files
// under API/, Query/, Schema/, Engine/, Protection/ and Storage/ implement the same API
// over an encrypted SQLite keychain (see docs/ENGINE.md).
//
// Built with `-DKEYSMITH_APPLE_SURFACE`, the Linux implementation shows only what Apple's
// Security also provides: the Linux-only API (KeychainEnvironment, KeychainDiagnostics,
// the lock and authentication controls) moves behind `@_spi(LinuxKeychain)` and Foundation
// is no longer re-exported (Security does not re-export it). `make test` builds Keysmith
// and the keysmith tool that way, so what they use unguarded also exists on Apple platforms.
// Linux-only declarations carry, just before `public`:
//     #if KEYSMITH_APPLE_SURFACE
//     @_spi(LinuxKeychain)
//     #endif
#if canImport(Security)
@_exported import Security
#elseif !KEYSMITH_APPLE_SURFACE
@_exported import Foundation
#endif
