import Foundation
import KeychainServices
import Testing

@testable import Keysmith

/// What a reinstall is on Linux: the same program with another HOME or XDG_CONFIG_HOME (a
/// service, a cron or CI job) finds no preferences but the same keychain; that is not a
/// reinstall, and nothing is removed.
struct ReinstallLocationTests {
    @Test func anotherPreferencesLocationIsNotAReinstall() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try withTemporaryDefaults { first throws in
                #expect(try store.removeLeftoversAfterReinstall(defaults: first, cleanup: ReinstallCleanup(), preferencesLocation: "/home/alice/.config") == .firstRun)
            }
            try store.set("access_token", "kept", in: "auth")
            // A cron job: same program, same keychain, HOME=/var/lib/job.
            try withTemporaryDefaults { other throws in
                let outcome = try store.removeLeftoversAfterReinstall(
                    defaults: other, cleanup: ReinstallCleanup(), preferencesLocation: "/var/lib/job/.config")
                #expect(outcome == .markedExistingInstall)
                #expect(try store.get("access_token", as: String.self, in: "auth") == "kept")
                // Its next launch there is an ordinary one.
                #expect(try store.removeLeftoversAfterReinstall(
                    defaults: other, cleanup: ReinstallCleanup(), preferencesLocation: "/var/lib/job/.config") == .notFirstLaunch)
            }
            // Back where the preferences were marked, and they are gone: a reinstall.
            try withTemporaryDefaults { wiped throws in
                let outcome = try store.removeLeftoversAfterReinstall(
                    defaults: wiped, cleanup: ReinstallCleanup(), preferencesLocation: "/home/alice/.config")
                #expect(outcome == .cleaned(namespaces: ["auth"]))
                #expect(try store.keys(in: "auth") == [])
            }
        }
    }

    /// Locations are paths, and paths are bytes: "café" spelled with a precomposed "é" and
    /// with "e" and a combining accent are two directories on Linux, though Swift's `==`
    /// equates them. Preferences marked in one and missing in the other are not a reinstall.
    @Test func locationsCompareByteForByte() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try withTemporaryDefaults { first throws in
                #expect(try store.removeLeftoversAfterReinstall(
                    defaults: first, cleanup: ReinstallCleanup(), preferencesLocation: "/home/caf\u{E9}/.config") == .firstRun)
            }
            try store.set("access_token", "kept", in: "auth")
            try withTemporaryDefaults { other throws in
                let outcome = try store.removeLeftoversAfterReinstall(
                    defaults: other, cleanup: ReinstallCleanup(), preferencesLocation: "/home/cafe\u{301}/.config")
                #expect(outcome == .markedExistingInstall)
                #expect(try store.get("access_token", as: String.self, in: "auth") == "kept")
            }
        }
    }

    @Test func theLocationIsXDGConfigHomeOrHomeConfig() {
        #if !canImport(Darwin)
        #expect(ReinstallCleanup.preferencesLocation(["HOME": "/home/a", "XDG_CONFIG_HOME": "/etc/xdg-a"]) == "/etc/xdg-a")
        #expect(ReinstallCleanup.preferencesLocation(["HOME": "/home/a", "XDG_CONFIG_HOME": "relative"]) == "/home/a/.config")
        #expect(ReinstallCleanup.preferencesLocation(["HOME": "/home/a"]) == "/home/a/.config")
        #endif
    }
}
