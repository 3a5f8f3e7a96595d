import Foundation
import Testing

/// `keysmith demo --items` on a temporary keychain, and both demos on one given with
/// --keychain. (The default demo, the walkthrough of an app's keys, is covered by
/// AppKeysWalkthroughTests.)
struct DemoTests {
    @Test func demoWalksThroughEveryStepOnATemporaryKeychainAndRemovesIt() throws {
        let home = TemporaryHome()
        let result = try keysmith(["demo", "--items"], home: home, useKeychainFlag: false)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let transcript = result.stdout
        let lines = transcript.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.filter { $0.hasPrefix("Step ") }.map { $0.prefix(8) } == (1...9).map { "Step \($0). " } + (10...11).map { "Step \($0)." })
        // Each step's command, as typed, in order, and each step's exit status, in order: the
        // keychain first (create, add, find, lock, the read refused, unlock, the read).
        let target = "-s demo.keysmith.example -a alice"
        #expect(lines.filter { $0.hasPrefix("  $ ") } == [
            "  $ printf '%s\\n' \"$PASSPHRASE\" | keysmith create --stdin",
            "  $ printf '%s' \"$SECRET\" | keysmith add-generic-password \(target) -l 'Demo API token' --stdin",
            "  $ keysmith find-generic-password \(target)",
            "  $ keysmith lock",
            "  $ keysmith find-generic-password \(target) -w",
            "  $ printf '%s\\n' \"$PASSPHRASE\" | keysmith unlock --stdin",
            "  $ keysmith find-generic-password \(target) -w",
            "  $ printf '%s' \"$NEW_SECRET\" | keysmith add-generic-password \(target) -U --stdin",
            "  $ keysmith find-generic-password \(target)",
            "  $ keysmith delete-generic-password \(target)",
            "  $ keysmith find-generic-password \(target)",
        ], "\(result)")
        #expect(lines.filter { $0.hasPrefix("  (exit status ") } == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 44].map { "  (exit status \($0))" })
        // The read while locked says why and what to do; the read after the unlock is not shown.
        #expect(transcript.contains("errSecInteractionNotAllowed"), "\(result)")
        #expect(transcript.contains("keysmith unlock"), "\(result)")
        #expect(transcript.contains("not shown here"), "\(result)")
        // Step 4's dates: the modification date moved, the creation date did not.
        let dates = try #require(lines.first { $0.hasPrefix("  modified ") && $0.contains(" -> ") })
        let moved = dates.dropFirst("  modified ".count).split(separator: ";").first?.components(separatedBy: " -> ")
        #expect(moved?.count == 2 && moved?.first != moved?.last, "\(dates)")
        #expect(dates.hasSuffix("; creation date unchanged"))
        // Step 6's miss names its status, after the last command.
        let lastCommand = try #require(lines.lastIndex { $0.hasPrefix("  $ ") })
        #expect(lines[lastCommand...].contains { $0.contains("errSecItemNotFound") })
        // The temporary keychain named on the first lines is gone.
        let keychainLine = try #require(transcript.split(separator: "\n").first { $0.contains("keychain") && $0.contains("temporary") })
        let path = try #require(keychainLine.split(separator: " ").first { $0.hasPrefix("/") })
        #expect(!FileManager.default.fileExists(atPath: String(path)), "\(path) was not removed")
        // Nothing was written to the home directory's default keychain.
        #expect(!FileManager.default.fileExists(atPath: home.url.appendingPathComponent(".local/share/keysmith").path))
    }

    @Test func demoOnAGivenKeychainLeavesOtherItemsAlone() throws {
        let home = TemporaryHome()
        try storeGenericPassword("keep-me", service: "mine", account: "me", home: home)
        let first = try keysmith(["demo", "--items"], home: home)
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains(home.keychain.path))
        // A keychain given with --keychain is not locked or created by the demo.
        #expect(!first.stdout.contains("keysmith lock") && !first.stdout.contains("keysmith create"), "\(first)")
        let second = try keysmith(["demo"], home: home)
        #expect(second.status == 0, "the demo can run again on the same keychain: \(second)")
        let kept = try keysmith(["find-generic-password", "-s", "mine", "-a", "me", "-w"], home: home)
        #expect(kept.stdout == "keep-me\n")
        let dump = try keysmith(["dump-keychain", "--json"], home: home).json()
        #expect(dump["count"] as? Int == 1, "the demo leaves no item behind")
    }
}
