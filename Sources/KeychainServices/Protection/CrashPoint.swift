#if !canImport(Security)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Named places where a test can have the process killed (`KEYSMITH_CRASH_AT=name`), to
/// check that an interrupted upgrade or passphrase change leaves a keychain that opens.
enum CrashPoint {
    private static let chosen = ProcessInfo.processInfo.environment["KEYSMITH_CRASH_AT"]

    static func reach(_ name: String) {
        if chosen == name { kill(getpid(), SIGKILL) }
    }
}
#endif
