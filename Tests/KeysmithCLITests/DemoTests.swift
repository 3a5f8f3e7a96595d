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
        for step in 1...6 { #expect(transcript.contains("Step \(step). ")) }
        for command in ["add-generic-password", "find-generic-password", "-U --stdin", "delete-generic-password"] {
            #expect(transcript.contains("$ ") && transcript.contains(command), "missing \(command)")
        }
        #expect(transcript.contains("(exit status 44)"))
        #expect(transcript.components(separatedBy: "(exit status 0)").count - 1 == 5)
        #expect(transcript.contains("creation date unchanged"))
        #expect(transcript.contains("errSecItemNotFound"))
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
        let second = try keysmith(["demo"], home: home)
        #expect(second.status == 0, "the demo can run again on the same keychain: \(second)")
        let kept = try keysmith(["find-generic-password", "-s", "mine", "-a", "me", "-w"], home: home)
        #expect(kept.stdout == "keep-me\n")
        let dump = try keysmith(["dump-keychain", "--json"], home: home).json()
        #expect(dump["count"] as? Int == 1, "the demo leaves no item behind")
    }
}
