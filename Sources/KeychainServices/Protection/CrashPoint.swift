#if !canImport(Security)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Named places where a test can have the process killed (`KEYSMITH_CRASH_AT=name`), to
/// check that an interrupted upgrade or passphrase change leaves a keychain that opens.
/// Only a debug build (what `swift build` and the tests use) reads the variable, as with
/// `KEYSMITH_KDF_PROFILE`; a release build (`make install`) ignores it.
enum CrashPoint {
    #if DEBUG
    private static let chosen = ProcessInfo.processInfo.environment["KEYSMITH_CRASH_AT"]
    #else
    private static let chosen: String? = nil
    #endif

    static func reach(_ name: String) {
        if chosen == name { kill(getpid(), SIGKILL) }
    }
}
#endif
