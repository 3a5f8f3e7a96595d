// KeychainServices: Apple's Keychain Services API on every platform.
//
// On Apple platforms this module re-exports Security and compiles nothing else, so
// `import KeychainServices` is exactly `import Security` there. Everywhere else the files
// under API/, Query/, Schema/, Engine/, Protection/ and Storage/ implement the same API
// over an encrypted SQLite keychain (see docs/ENGINE.md).
#if canImport(Security)
@_exported import Security
#else
@_exported import Foundation
#endif
