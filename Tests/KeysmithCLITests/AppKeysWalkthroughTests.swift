import Foundation
import Testing

/// `keysmith demo`: the walkthrough of an app's keys, as the built binary prints it.
struct AppKeysWalkthroughTests {
    @Test func demoIsTheWalkthroughOfAnAppsKeys() throws {
        let home = TemporaryHome()
        let result = try keysmith(["demo"], home: home, useKeychainFlag: false)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let transcript = result.stdout
        let lines = transcript.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "keysmith demo: a walkthrough of an app's keys, step by step")
        for step in 1...10 { #expect(transcript.contains("\nStep \(step). "), "missing step \(step)") }

        // Each command as typed, in the demo directory.
        let service = "--service com.example.app.keys.demo"
        for command in [
            "$ keysmith resolve api_key --config Keys.plist \(service)",
            "$ keysmith explain api_key --config Keys.plist \(service)",
            "$ printf '%s' \"$API_KEY\" | keysmith rotate api_key --stdin --version 2024.06.01 \(service)",
            "$ keysmith resolve api_key --config Empty.plist \(service)",
            "$ keysmith rotate api_key --generate 32 --version 2024.07.01 \(service)",
            "$ keysmith resolve api_key --min-version 2024.07.01 --config Keys.plist \(service)",
            "$ keysmith resolve api_key --version 2024.06.01 --config Keys.plist \(service)",
            "$ keysmith resolve api_key --min-version 2024.08.01 --config Keys.plist \(service)",
            "$ keysmith audit --config Keys.plist \(service)",
        ] {
            #expect(lines.contains("  " + command), "missing \(command)")
        }

        // First launch: the first hit is from the config file.
        let served = lines.filter { $0.hasPrefix("  => api_key loaded from ") }
        #expect(served == [
            "  => api_key loaded from ConfigFile(plist), version=builtin",
            "  => api_key loaded from Keychain, version=2024.06.01",
            "  => api_key loaded from Keychain, version=2024.06.01",
            "  => api_key loaded from Keychain, version=2024.07.01",
            "  => api_key loaded from Keychain, version=2024.06.01",
        ])
        // The trace of step 2: keychain misses, then the plist hit.
        #expect(lines.contains { $0.contains("Keychain") && $0.contains("api_key") && $0.contains("miss") })
        #expect(lines.contains { $0.contains("ConfigFile(plist)") && $0.contains("hit builtin") })
        // Rotation: the rotation keeps the old version; a minimum no copy meets is exit 44.
        #expect(lines.contains("  Kept 1 other version: 2024.06.01."))
        #expect(transcript.contains("no copy of key \"api_key\" has a version >= 2024.08.01"))
        #expect(lines.filter { $0.hasPrefix("  (exit status ") } == [0, 0, 0, 0, 0, 0, 0, 0, 44, 0].map { "  (exit status \($0))" })
        // The audit: the keychain copy wins, the plist copy is shadowed.
        let effective = try #require(lines.first { $0.hasPrefix("  api_key ") && $0.contains("effective") })
        #expect(effective.contains("Keychain") && effective.contains("2024.06.01, 2024.07.01"))
        #expect(lines.contains { $0.contains("shadowed") && $0.contains("ConfigFile(plist)") && $0.contains("builtin") })
        #expect(lines.contains("  2 keys, 3 copies, 0 warnings"))
        // The summary table. Its EXPECTED column must say what the walkthrough's rules give
        // (written here, not taken from the demo: the demo compares against its own copy),
        // and GOT must agree. The rules: the keychain comes before the config file; a
        // version-less config entry is "builtin"; --min-version and --version pick among the
        // keychain's versions; a minimum no copy meets is "not found", exit status 44.
        let rules: [(what: String, expected: String)] = [
            ("first launch", "ConfigFile(plist), version=builtin"),  // only Keys.plist holds api_key
            ("why", "exit status 0"),  // explain
            ("store", "exit status 0"),  // rotate --stdin stores 2024.06.01
            ("both hold it", "Keychain, version=2024.06.01"),  // both hold it: the keychain wins
            ("keychain only", "Keychain, version=2024.06.01"),  // only the keychain holds it
            ("rotate", "exit status 0"),  // rotate --generate stores 2024.07.01
            ("minimum", "Keychain, version=2024.07.01"),  // --min-version 2024.07.01
            ("old version", "Keychain, version=2024.06.01"),  // --version 2024.06.01: the old one is kept
            ("too low", "not found (exit status 44)"),  // --min-version 2024.08.01: no copy meets it
            ("audit", "exit status 0"),  // audit
        ]
        let header = try #require(lines.firstIndex { $0.hasPrefix("  STEP") && $0.contains("EXPECTED") })
        let columns = ["WHAT", "EXPECTED", "GOT"].compactMap { lines[header].range(of: $0)?.lowerBound.utf16Offset(in: lines[header]) }
        #expect(columns.count == 3)
        let rows = lines[(header + 1)...].prefix { !$0.isEmpty }.map { row -> [String] in
            let cuts = [0] + columns + [row.utf16.count]
            return (0..<4).map { index in
                let start = min(cuts[index], row.utf16.count)
                let end = min(cuts[index + 1], row.utf16.count)
                let part = row.utf16.dropFirst(start).prefix(end - start)
                return (String(part) ?? "").trimmingCharacters(in: .whitespaces)
            }
        }
        #expect(rows.count == rules.count, "\(rows)")
        for (index, rule) in rules.enumerated() where index < rows.count {
            #expect(rows[index] == ["\(index + 1)", rule.what, rule.expected, "same"], "summary row \(index + 1)")
        }

        // The temporary directory (and the keychain inside it) is gone; nothing else was touched.
        let directoryLine = try #require(lines.first { $0.contains("directory") && $0.contains("temporary") })
        let path = try #require(directoryLine.split(separator: " ").first { $0.hasPrefix("/") })
        #expect(!FileManager.default.fileExists(atPath: String(path)), "\(path) was not removed")
        #expect(!FileManager.default.fileExists(atPath: home.url.appendingPathComponent(".local/share/keysmith").path))
    }

    @Test func demoOnAGivenKeychainRemovesOnlyItsOwnItems() throws {
        let home = TemporaryHome()
        try storeGenericPassword("keep-me", service: "com.example.app.keys", account: "api_key", home: home)
        for _ in 0..<2 {
            let result = try keysmith(["demo"], home: home)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("\(home.keychain.path) (only the demo's items are touched)"))
        }
        let dump = try keysmith(["dump-keychain", "--json"], home: home).json()
        #expect(dump["count"] as? Int == 1, "the demo leaves no item behind")
        #expect(try keysmith(["find-generic-password", "-s", "com.example.app.keys", "-w"], home: home).stdout == "keep-me\n")
    }
}
