import Foundation
import Testing

// What people type from macOS `security` habits works, and the output parses the way
// macOS's does.

/// macOS `security` flags and conventions.
struct MacOSSecurityHabitsTests {
    @Test func applicationAccessFlagsAreAcceptedWithANote() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", "acct", "-T", "/usr/bin/codesign", "-A", "--stdin"], home: home,
            standardInput: "s3cr3t")
        #expect(added.status == 0, "\(added)")
        #expect(added.stderr.contains("do not apply"), "\(added)")
        let internet = try keysmith(
            ["add-internet-password", "-s", "host", "-a", "acct", "-T", "", "--stdin"], home: home, standardInput: "x")
        #expect(internet.status == 0, "\(internet)")
    }

    @Test func genericCreatorAndTypeAreStoredAndMatched() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-generic-password", "-s", "notes", "-a", "me", "-G", "blob value", "-c", "aapl", "-C", "note", "--stdin"],
            home: home, standardInput: "s3cr3t")
        #expect(added.status == 0, "\(added)")
        let json = try keysmith(["--json", "find-generic-password", "-s", "notes", "-C", "note"], home: home)
        #expect(json.status == 0, "\(json)")
        let object = try json.json()
        #expect(object["generic"] as? String == "blob value", "\(json)")
        #expect(object["creator"] as? String == "aapl", "\(json)")
        #expect(object["type"] as? String == "note", "\(json)")
        #expect(try keysmith(["find-generic-password", "-s", "notes", "-C", "othr"], home: home).status == 44)
        #expect(try keysmith(["find-generic-password", "-s", "notes", "-c", "aapl", "-G", "blob value"], home: home).status == 0)
        let found = try keysmith(["find-generic-password", "-s", "notes"], home: home)
        #expect(found.stdout.contains("    \"crtr\"<uint32>=\"aapl\""), "\(found)")
        #expect(found.stdout.contains("    \"type\"<uint32>=\"note\""), "\(found)")
        #expect(found.stdout.contains("    \"gena\"<blob>=\"blob value\""), "\(found)")
    }

    @Test func aTrailingKeychainArgumentPointsToTheKeychainFlag() throws {
        let home = TemporaryHome()
        let result = try keysmith(["find-generic-password", "-s", "x", "login.keychain"], home: home)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--keychain"), "\(result)")
        let add = try keysmith(
            ["add-generic-password", "-s", "x", "-a", "y", "--stdin", "login.keychain"], home: home, standardInput: "z")
        #expect(add.stderr.contains("--keychain"), "\(add)")
    }

    @Test func aDuplicateAddExits45AsOnMacOS() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "acct", home: home)
        let duplicate = try keysmith(["add-generic-password", "-s", "svc", "-a", "acct", "--stdin"], home: home, standardInput: "two")
        #expect(duplicate.status == 45, "\(duplicate)")
        let help = try keysmith(["help"], home: home)
        #expect(help.stdout.contains("45  the item already exists"), "\(help)")
    }

    @Test func aSensitiveKeyRefusalHasItsOwnStatus() throws {
        let home = TemporaryHome()
        let file = home.url.appendingPathComponent("Keys.json")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(#"{"api_key": "plain"}"#.utf8)))
        let refused = try keysmith(["resolve", "api_key", "--config", file.path, "--sensitive", "api_key"], home: home)
        #expect(refused.status != 0 && refused.status != 45 && refused.status != 1, "\(refused)")
        #expect(refused.stderr.contains("refused"), "\(refused)")
    }

    @Test func findPrintsTheAttributesTheWayMacOSDoes() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-generic-password", "-s", "api.example.com", "-a", "deploy", "-l", "Deploy token", "-j", "for CI", "--stdin"],
            home: home, standardInput: "s3cr3t")
        #expect(added.status == 0, "\(added)")
        let found = try keysmith(["find-generic-password", "-s", "api.example.com", "-g"], home: home)
        #expect(found.status == 0, "\(found)")
        let lines = found.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "keychain: \"\(home.keychain.path)\"", "\(found)")
        #expect(lines.contains("version: 512"), "\(found)")
        #expect(lines.contains("class: \"genp\""), "\(found)")
        #expect(lines.contains("attributes:"), "\(found)")
        for expected in [
            "    0x00000007 <blob>=\"Deploy token\"", "    \"acct\"<blob>=\"deploy\"",
            "    \"svce\"<blob>=\"api.example.com\"", "    \"icmt\"<blob>=\"for CI\"", "    \"desc\"<blob>=<NULL>",
        ] {
            #expect(lines.contains(expected), "missing \(expected): \(found)")
        }
        #expect(lines.contains { $0.hasPrefix("    \"mdat\"<timedate>=0x") }, "\(found)")
        #expect(found.stderr == "password: \"s3cr3t\"\n", "\(found)")
        #expect(!found.stdout.contains("s3cr3t"))
        // The table stays available.
        let table = try keysmith(["find-generic-password", "-s", "api.example.com", "--table"], home: home)
        #expect(table.status == 0, "\(table)")
        #expect(table.stdout.contains("generic password"), "\(table)")

        let internet = try keysmith(
            ["add-internet-password", "-s", "git.example.com", "-r", "https", "-P", "443", "-a", "ci", "--stdin"],
            home: home, standardInput: "x")
        #expect(internet.status == 0)
        let inet = try keysmith(["find-internet-password", "-s", "git.example.com"], home: home)
        let inetLines = inet.stdout.split(separator: "\n").map(String.init)
        for expected in [
            "class: \"inet\"", "    \"srvr\"<blob>=\"git.example.com\"", "    \"ptcl\"<uint32>=\"htps\"",
            "    \"port\"<uint32>=0x000001BB ", "    \"path\"<blob>=<NULL>",
        ] {
            #expect(inetLines.contains(expected), "missing \(expected): \(inet)")
        }
    }

    @Test func versionFlagPrintsTheVersion() throws {
        let home = TemporaryHome()
        let result = try keysmith(["--version"], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("keysmith "), "\(result)")
        // The command option of the same name still works.
        let resolve = try keysmith(["resolve", "api_key", "--version", "1"], home: home)
        #expect(resolve.status == 44, "\(resolve)")
    }
}

/// JSON leaves absent attributes out and names coded values.
struct JSONAttributeTests {
    @Test func absentAttributesAreLeftOutAndProtocolsAreNamed() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-internet-password", "-s", "git.example.com", "-r", "https", "-a", "ci", "--stdin"], home: home,
            standardInput: "x")
        #expect(added.status == 0, "\(added)")
        let object = try keysmith(["--json", "find-internet-password", "-s", "git.example.com"], home: home).json()
        #expect(object["path"] == nil, "\(object)")
        #expect(object["port"] == nil, "\(object)")
        #expect(object["securityDomain"] == nil, "\(object)")
        #expect(object["authenticationType"] == nil, "\(object)")
        #expect(object["protocol"] as? String == "https", "\(object)")
        let dump = try keysmith(["--json", "dump-keychain"], home: home).json()
        let item = try #require((dump["items"] as? [[String: Any]])?.first)
        #expect(item["protocol"] as? String == "https")
        #expect(item["port"] == nil && item["path"] == nil)
    }
}

/// User-facing text speaks the product's own words.
struct ProductWordsTests {
    static let internalWords = ["seed 0", "seed's", "Project X", "control group", "seed 3", ", 5.4"]  // ", 5.4": a section number cited after a document name, not a timing such as 195.43 µs

    @Test func helpAndDemoCiteNoInternalDocument() throws {
        let home = TemporaryHome()
        var texts = [try keysmith(["help"], home: home)]
        for command in ["add-generic-password", "find-generic-password", "dump-keychain", "resolve", "explain", "audit",
            "rotate", "migrate-service", "generate", "demo"]
        {
            texts.append(try keysmith(["help", command], home: home))
        }
        texts.append(try keysmith(["demo"], home: home))
        texts.append(try keysmith(["demo", "--items"], home: home))
        for result in texts {
            for word in Self.internalWords {
                #expect(!(result.stdout + result.stderr).contains(word), "\"\(word)\" in: \(result.stdout.prefix(300))")
            }
        }
    }
}
