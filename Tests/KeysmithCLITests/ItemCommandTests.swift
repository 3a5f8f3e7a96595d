import Foundation
import Testing

/// The item commands, run as the built binary in a temporary keychain.
struct ItemCommandTests {
    @Test func addFindDeleteRoundTrip() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-generic-password", "-s", "api.example.com", "-a", "deploy", "-l", "Deploy token", "-j", "for CI", "--stdin"],
            home: home, standardInput: "s3cr3t-token")
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.contains("Added generic password"))
        #expect(added.stderr.isEmpty, "\(added)")

        let found = try keysmith(["find-generic-password", "-s", "api.example.com", "-a", "deploy"], home: home)
        #expect(found.status == 0, "\(found)")
        // macOS security's format (see MacOSSecurityHabitsTests for the exact lines).
        for expected in ["class: \"genp\"", "api.example.com", "deploy", "Deploy token", "for CI", "keysmith.shared", "\"mdat\"<timedate>"] {
            #expect(found.stdout.contains(expected), "missing \(expected): \(found)")
        }
        #expect(!found.stdout.contains("s3cr3t-token"))

        let secret = try keysmith(["find-generic-password", "-s", "api.example.com", "-a", "deploy", "-w"], home: home)
        #expect(secret.status == 0)
        #expect(secret.standardOutput == Data("s3cr3t-token\n".utf8))

        let deleted = try keysmith(["delete-generic-password", "-s", "api.example.com", "-a", "deploy"], home: home)
        #expect(deleted.status == 0, "\(deleted)")
        #expect(deleted.stdout.contains("Deleted generic password"))

        let gone = try keysmith(["find-generic-password", "-s", "api.example.com", "-a", "deploy"], home: home)
        #expect(gone.status == 44, "\(gone)")
        #expect(gone.stdout.isEmpty)
    }

    @Test(arguments: ["plain", "with spaces and ünïcödé ✓", "ends with spaces  ", "-starts-with-dash", "\ttab"])
    func passwordFlagPrintsExactlyTheSecretAndANewline(_ secret: String) throws {
        let home = TemporaryHome()
        try storeGenericPassword(secret, service: "svc", account: "acct", home: home)
        let result = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Data((secret + "\n").utf8))
        #expect(result.standardError.isEmpty)
    }

    @Test func standardInputLosesExactlyOneTrailingNewline() throws {
        let home = TemporaryHome()
        try storeGenericPassword("line\n\n", service: "a", account: "lf", home: home)
        try storeGenericPassword("crlf\r\n", service: "a", account: "crlf", home: home)
        let lf = try keysmith(["find-generic-password", "-s", "a", "-a", "lf", "-w"], home: home)
        #expect(lf.standardOutput == Data("line\n\n".utf8))
        let crlf = try keysmith(["find-generic-password", "-s", "a", "-a", "crlf", "-w"], home: home)
        #expect(crlf.standardOutput == Data("crlf\n".utf8))
    }

    @Test func exactStandardInputKeepsEveryByte() throws {
        let home = TemporaryHome()
        var random = SystemRandomNumberGenerator()
        let binary = Data((0..<30).map { _ in UInt8.random(in: 0...255, using: &random) }) + Data([0x0D, 0x0A])
        let secrets: [(String, Data)] = [
            ("cr", Data("abc\r".utf8)), ("crlf", Data("abc\r\n".utf8)), ("lf", Data("abc\n".utf8)),
            ("newlines", Data("\n\n".utf8)), ("binary", binary),
        ]
        for (account, secret) in secrets {
            let added = try keysmith(
                ["add-generic-password", "-s", "exact", "-a", account, "--stdin-exact"], home: home, standardInputBytes: secret)
            #expect(added.status == 0, "\(added)")
            let found = try keysmith(["find-generic-password", "-s", "exact", "-a", account, "-w"], home: home)
            #expect(found.standardOutput == secret + Data([0x0A]), "\(account)")
        }
        // The internet-password command and -U take it too.
        let internet = try keysmith(
            ["add-internet-password", "-s", "git.example.com", "-a", "ci", "-U", "--stdin-exact"], home: home,
            standardInputBytes: Data("token\r\n".utf8))
        #expect(internet.status == 0, "\(internet)")
        let found = try keysmith(["find-internet-password", "-s", "git.example.com", "-a", "ci", "-w"], home: home)
        #expect(found.standardOutput == Data("token\r\n\n".utf8))
    }

    @Test func exactStandardInputRefusesEmptyInputAndOtherSources() throws {
        let home = TemporaryHome()
        let empty = try keysmith(["add-generic-password", "-s", "a", "-a", "b", "--stdin-exact"], home: home)
        #expect(empty.status == 1, "\(empty)")
        #expect(empty.stderr.contains("standard input was empty"))
        let both = try keysmith(
            ["add-generic-password", "-s", "a", "-a", "b", "--stdin", "--stdin-exact"], home: home, standardInput: "x")
        #expect(both.status == 2, "\(both)")
        #expect(both.stderr.contains("not both"))
        let withPassword = try keysmith(
            ["add-generic-password", "-s", "a", "-a", "b", "-w", "value", "--stdin-exact"], home: home, standardInput: "x")
        #expect(withPassword.status == 2, "\(withPassword)")
        let gone = try keysmith(["find-generic-password", "-s", "a", "-a", "b"], home: home)
        #expect(gone.status == 44, "nothing was stored: \(gone)")
    }

    @Test func helpDescribesTheLineRuleAndTheExactInput() throws {
        let home = TemporaryHome()
        let help = try keysmith(["help", "add-generic-password"], home: home)
        #expect(help.status == 0, "\(help)")
        #expect(help.stdout.contains("--stdin-exact"))
        #expect(help.stdout.contains("LF or CR LF"))
        for command in [["help", "rotate"], ["help", "fleet"]] {
            let text = try keysmith(command, home: home)
            #expect(text.stdout.contains("--stdin-exact"), "\(command)")
        }
    }

    @Test func emptyStandardInputIsRefused() throws {
        let home = TemporaryHome()
        let result = try keysmith(["add-generic-password", "-s", "a", "-a", "b", "--stdin"], home: home, standardInput: "\n")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("standard input was empty"))
    }

    @Test func dashAsPasswordValueReadsStandardInput() throws {
        let home = TemporaryHome()
        let added = try keysmith(["add-generic-password", "-s", "a", "-a", "b", "-w", "-"], home: home, standardInput: "from-stdin")
        #expect(added.status == 0, "\(added)")
        #expect(!added.stderr.contains("warning"), "reading stdin is not a command-line secret")
        let found = try keysmith(["find-generic-password", "-s", "a", "-a", "b", "-w"], home: home)
        #expect(found.stdout == "from-stdin\n")
    }

    @Test func passwordOnTheCommandLineWorksButWarns() throws {
        let home = TemporaryHome()
        let added = try keysmith(["add-generic-password", "-s", "a", "-a", "b", "-w", "visible-in-ps"], home: home)
        #expect(added.status == 0, "\(added)")
        #expect(added.stderr.contains("warning"))
        #expect(added.stderr.contains("shell history"))
        #expect(added.stderr.contains("--stdin"))
        #expect(!added.stderr.contains("visible-in-ps"), "the warning must not repeat the secret")
        #expect(!added.stdout.contains("visible-in-ps"))
        let found = try keysmith(["find-generic-password", "-s", "a", "-a", "b", "-w"], home: home)
        #expect(found.stdout == "visible-in-ps\n")
    }

    @Test func addingAnExistingItemFailsAndSuggestsUpdate() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "acct", home: home)
        let again = try keysmith(["add-generic-password", "-s", "svc", "-a", "acct", "--stdin"], home: home, standardInput: "two")
        #expect(again.status == 45, "as macOS security: \(again)")
        let lines = again.stderr.split(separator: "\n")
        #expect(lines.count == 2, "one line of what happened, one of what to do: \(again)")
        #expect(lines.first?.contains("-25299") == true)
        #expect(lines.last?.contains("-U") == true)
        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(found.stdout == "one\n", "the first secret is kept")
    }

    @Test func updateFlagReplacesTheSecretAndMovesTheModificationDate() throws {
        let home = TemporaryHome()
        try storeGenericPassword("first", service: "svc", account: "acct", home: home, extra: ["-l", "Label"])
        let before = try keysmith(["--json", "find-generic-password", "-s", "svc", "-a", "acct"], home: home).json()
        usleep(20_000)
        let updated = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", "acct", "-U", "-j", "rotated", "--stdin"], home: home,
            standardInput: "second")
        #expect(updated.status == 0, "\(updated)")
        #expect(updated.stdout.contains("Updated generic password"))
        let after = try keysmith(["--json", "find-generic-password", "-s", "svc", "-a", "acct"], home: home).json()
        #expect(after["created"] as? String == before["created"] as? String)
        let modifiedBefore = try #require(before["modified"] as? String)
        let modifiedAfter = try #require(after["modified"] as? String)
        #expect(modifiedAfter > modifiedBefore)
        #expect(after["label"] as? String == "Label", "-U keeps attributes that were not given")
        #expect(after["comment"] as? String == "rotated")
        let secret = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(secret.stdout == "second\n")
    }

    @Test func updateFlagAddsWhenNothingExists() throws {
        let home = TemporaryHome()
        let added = try keysmith(["add-generic-password", "-U", "-s", "new", "-a", "acct", "--stdin"], home: home, standardInput: "x")
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.contains("Added"))
    }

    @Test func missingItemExitsWith44AndExplains() throws {
        let home = TemporaryHome()
        // A keychain that exists (a missing one gets its own hint, see ReadsDoNotCreateKeychainsTests).
        try storeGenericPassword("x", service: "other", account: "item", home: home)
        let result = try keysmith(["find-generic-password", "-s", "nothing", "-a", "here"], home: home)
        #expect(result.status == 44, "\(result)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(result)")
        #expect(lines.first?.contains("no generic password with service \"nothing\" and account \"here\"") == true)
        #expect(lines.last?.contains("access group") == true)
        let deleted = try keysmith(["delete-generic-password", "-s", "nothing"], home: home)
        #expect(deleted.status == 44, "\(deleted)")
        let internet = try keysmith(["find-internet-password", "-s", "nothing"], home: home)
        #expect(internet.status == 44, "\(internet)")
    }

    @Test func internetPasswordRoundTrip() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-internet-password", "-s", "git.example.com", "-r", "https", "-P", "8443", "-p", "/repo", "-a", "ci", "--stdin"],
            home: home, standardInput: "inet-secret")
        #expect(added.status == 0, "\(added)")

        let found = try keysmith(["find-internet-password", "-s", "git.example.com", "-a", "ci", "-r", "htps", "--table"], home: home)
        #expect(found.status == 0, "\(found)")
        #expect(found.stdout.contains("internet password"))
        #expect(found.stdout.contains("https (htps)"))
        #expect(found.stdout.contains("8443"))
        #expect(found.stdout.contains("/repo"))
        #expect(!found.stdout.contains("inet-secret"))

        let json = try keysmith(["find-internet-password", "-s", "git.example.com", "--json"], home: home).json()
        #expect(json["class"] as? String == "internetPassword")
        #expect(json["server"] as? String == "git.example.com")
        #expect(json["protocol"] as? String == "https", "the readable name, as the text output shows it")
        #expect(json["port"] as? Int == 8443)
        #expect(json["path"] as? String == "/repo")
        #expect(json["account"] as? String == "ci")

        let wrongProtocol = try keysmith(["find-internet-password", "-s", "git.example.com", "-r", "ssh"], home: home)
        #expect(wrongProtocol.status == 44, "\(wrongProtocol)")
        let wrongPort = try keysmith(["find-internet-password", "-s", "git.example.com", "-P", "443"], home: home)
        #expect(wrongPort.status == 44, "\(wrongPort)")

        let secret = try keysmith(["find-internet-password", "-s", "git.example.com", "-a", "ci", "-w"], home: home)
        #expect(secret.standardOutput == Data("inet-secret\n".utf8))

        let duplicate = try keysmith(
            ["add-internet-password", "-s", "git.example.com", "-r", "https", "-P", "8443", "-p", "/repo", "-a", "ci", "-U", "--stdin"],
            home: home, standardInput: "inet-secret-2")
        #expect(duplicate.status == 0, "\(duplicate)")
        #expect(duplicate.stdout.contains("Updated"))

        let deleted = try keysmith(["delete-internet-password", "-s", "git.example.com", "-a", "ci"], home: home)
        #expect(deleted.status == 0, "\(deleted)")
        let gone = try keysmith(["find-internet-password", "-s", "git.example.com"], home: home)
        #expect(gone.status == 44)
    }

    @Test func genericAndInternetPasswordsAreSeparate() throws {
        let home = TemporaryHome()
        try storeGenericPassword("g", service: "host.example", account: "me", home: home)
        let internet = try keysmith(["find-internet-password", "-s", "host.example", "-a", "me"], home: home)
        #expect(internet.status == 44)
    }

    @Test func findWithShowPasswordPrintsTheSecretOnStandardErrorOnly() throws {
        let home = TemporaryHome()
        try storeGenericPassword("shown-on-stderr", service: "svc", account: "acct", home: home)
        let result = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "-g"], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("svc"))
        #expect(!result.stdout.contains("shown-on-stderr"))
        #expect(result.stderr == "password: \"shown-on-stderr\"\n")
    }

    @Test func dumpKeychainShowsAttributesAndSecretsOnlyWithDataFlag() throws {
        let home = TemporaryHome()
        try storeGenericPassword("dump-secret-1", service: "one", account: "a", home: home)
        try storeGenericPassword("dump-secret-2", service: "two", account: "b", home: home)
        let inet = try keysmith(
            ["add-internet-password", "-s", "three.example", "-a", "c", "--stdin"], home: home, standardInput: "dump-secret-3")
        #expect(inet.status == 0)

        let plain = try keysmith(["dump-keychain"], home: home)
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stdout.contains("3 items"))
        for name in ["one", "two", "three.example"] { #expect(plain.stdout.contains(name)) }
        #expect(!plain.stdout.contains("dump-secret"))
        #expect(!plain.stderr.contains("dump-secret"))
        #expect(!plain.stdout.contains("password  "), "no password rows without -d")

        let withData = try keysmith(["dump-keychain", "-d"], home: home)
        #expect(withData.status == 0, "\(withData)")
        for secret in ["dump-secret-1", "dump-secret-2", "dump-secret-3"] {
            #expect(withData.stdout.contains("\"\(secret)\""), "\(withData)")
        }

        let json = try keysmith(["dump-keychain", "--json"], home: home).json()
        #expect(json["count"] as? Int == 3)
        let items = try #require(json["items"] as? [[String: Any]])
        #expect(items.map { $0["class"] as? String } == ["genericPassword", "genericPassword", "internetPassword"])
        #expect(items.allSatisfy { $0["password"] == nil && $0["passwordBase64"] == nil })
        #expect(json["accessGroups"] as? [String] == ["keysmith.shared", "*"], "the default: new items in the shared group, every group seen")

        let jsonWithData = try keysmith(["dump-keychain", "-d", "--json"], home: home).json()
        let secrets = try #require(jsonWithData["items"] as? [[String: Any]]).compactMap { $0["password"] as? String }
        #expect(secrets == ["dump-secret-1", "dump-secret-2", "dump-secret-3"])
    }

    @Test func dumpOfAnEmptyKeychainSaysSo() throws {
        let home = TemporaryHome()
        let result = try keysmith(["dump-keychain"], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("0 items"))
        let json = try keysmith(["dump-keychain", "--json"], home: home).json()
        #expect(json["count"] as? Int == 0)
    }

    @Test func jsonOutputOfEveryDataCommandParses() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["--json", "add-generic-password", "-s", "svc", "-a", "acct", "--accessible", "after-first-unlock", "--stdin"],
            home: home, standardInput: "json-secret")
        let addObject = try added.json()
        #expect(addObject["result"] as? String == "added")
        let item = try #require(addObject["item"] as? [String: Any])
        #expect(item["service"] as? String == "svc")
        #expect(item["accessible"] as? String == "afterFirstUnlock")
        #expect(item["synchronizable"] as? Bool == false)
        #expect(!added.stdout.contains("json-secret"))

        let updated = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", "acct", "-U", "--stdin", "--json"], home: home, standardInput: "x")
        #expect(try updated.json()["result"] as? String == "updated")

        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "--json"], home: home).json()
        #expect(found["class"] as? String == "genericPassword")
        #expect(found["account"] as? String == "acct")
        #expect(found["accessGroup"] as? String == "keysmith.shared")
        #expect((found["created"] as? String)?.hasSuffix("Z") == true)
        #expect(found["password"] == nil)

        let deleted = try keysmith(["delete-generic-password", "-s", "svc", "-a", "acct", "--json"], home: home).json()
        #expect(deleted["deleted"] as? Int == 1)
    }

    @Test func synchronizableItemsAreFoundAndMarked() throws {
        let home = TemporaryHome()
        try storeGenericPassword("s", service: "svc", account: "acct", home: home, extra: ["--sync"])
        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "--json"], home: home).json()
        #expect(found["synchronizable"] as? Bool == true)
    }

    @Test func quietPrintsNothingButWhatARevealFlagAsksFor() throws {
        let home = TemporaryHome()
        let added = try keysmith(["--quiet", "add-generic-password", "-s", "svc", "-a", "acct", "--stdin"], home: home, standardInput: "q")
        #expect(added.status == 0)
        #expect(added.stdout.isEmpty)
        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "--quiet"], home: home)
        #expect(found.status == 0)
        #expect(found.stdout.isEmpty)
        let secret = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "--quiet", "-w"], home: home)
        #expect(secret.stdout == "q\n")
        for arguments in [
            ["add-generic-password", "-s", "svc2", "-a", "acct", "--stdin", "--json", "--quiet"],
            ["find-generic-password", "-s", "svc2", "--json", "--quiet"],
            ["dump-keychain", "--json", "--quiet"],
            ["delete-generic-password", "-s", "svc2", "--json", "--quiet"],
        ] {
            let result = try keysmith(arguments, home: home, standardInput: "q2")
            #expect(result.status == 0, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "--quiet wins over --json: \(arguments)")
        }
        let missing = try keysmith(["find-generic-password", "-s", "other", "--quiet"], home: home)
        #expect(missing.status == 44)
        #expect(!missing.stderr.isEmpty, "errors still go to standard error")
    }

    @Test func keysmithHomeChoosesTheKeychainWhenNoFlagIsGiven() throws {
        let home = TemporaryHome()
        let environment = ["KEYSMITH_HOME": home.keychain.path]
        let added = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", "acct", "--stdin"], home: home, standardInput: "h",
            environment: environment, useKeychainFlag: false)
        #expect(added.status == 0, "\(added)")
        #expect(FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("keychain.db").path))
        // The --keychain flag names the same directory.
        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(found.stdout == "h\n")
        // Another directory is another keychain.
        let elsewhere = try keysmith(
            ["--keychain", home.url.appendingPathComponent("other").path, "find-generic-password", "-s", "svc"], home: home,
            useKeychainFlag: false)
        #expect(elsewhere.status == 44)
    }

    @Test func accessGroupsKeepItemsApart() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["--access-group", "team.a", "add-generic-password", "-s", "svc", "-a", "acct", "--stdin"], home: home,
            standardInput: "group-a")
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.contains("team.a"))

        let otherGroup = try keysmith(["find-generic-password", "-s", "svc", "--access-group", "team.b"], home: home)
        #expect(otherGroup.status == 44, "\(otherGroup)")
        #expect(otherGroup.stderr.contains("team.b"))
        // Without configured groups the tool sees every group, as macOS security sees the whole login keychain.
        let defaultGroup = try keysmith(["find-generic-password", "-s", "svc"], home: home)
        #expect(defaultGroup.status == 0, "the default view sees team.a: \(defaultGroup)")
        let onlyShared = try keysmith(["find-generic-password", "-s", "svc", "--access-group", "keysmith.shared"], home: home)
        #expect(onlyShared.status == 44, "a program entitled to the shared group alone does not see team.a")

        let fromEnvironment = try keysmith(
            ["find-generic-password", "-s", "svc", "--json"], home: home, environment: ["KEYSMITH_ACCESS_GROUPS": "team.b,team.a"])
        #expect(try fromEnvironment.json()["accessGroup"] as? String == "team.a")

        // The same service and account may exist once per group.
        try storeGenericPassword("default-group", service: "svc", account: "acct", home: home)
        let both = try keysmith(["dump-keychain", "--json", "--access-group", "team.a,keysmith.shared"], home: home).json()
        #expect(both["count"] as? Int == 2)
        let deleted = try keysmith(["delete-generic-password", "-s", "svc", "--access-group", "team.a", "--access-group", "keysmith.shared", "--all"], home: home)
        #expect(deleted.stdout.contains("Deleted 2 generic passwords"), "\(deleted)")
    }

    @Test func accessibilityNamesAndCodesAreAccepted() throws {
        let home = TemporaryHome()
        for (index, name) in ["whenUnlocked", "AFTER_FIRST_UNLOCK", "alwaysThisDeviceOnly", "cku"].enumerated() {
            let added = try keysmith(
                ["add-generic-password", "-s", "svc", "-a", "a\(index)", "--accessible", name, "--stdin"], home: home,
                standardInput: "x")
            #expect(added.status == 0, "\(name): \(added)")
        }
        let codes = try keysmith(["dump-keychain", "--json"], home: home).json()["items"] as? [[String: Any]]
        #expect(codes?.compactMap { $0["accessible"] as? String }
            == ["whenUnlocked", "afterFirstUnlock", "alwaysThisDeviceOnly", "afterFirstUnlockThisDeviceOnly"])
        let bad = try keysmith(["add-generic-password", "-s", "svc", "-a", "z", "--accessible", "sometimes", "--stdin"], home: home, standardInput: "x")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("whenUnlocked"), "the error lists the accepted names")
    }
}
