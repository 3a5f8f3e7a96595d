import Foundation
import KeysmithCLI
import Testing

/// Exit status 2 with the usage line for bad command lines, and the help texts.
struct UsageAndHelpTests {
    /// A bad command line and the usage line it must print.
    struct BadUsage: CustomTestStringConvertible, Sendable {
        let arguments: [String]
        let usagePrefix: String
        let message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let badUsages: [BadUsage] = [
        BadUsage(arguments: [], usagePrefix: "usage: keysmith [--keychain", message: "no command given"),
        BadUsage(arguments: ["fnd-generic-password"], usagePrefix: "usage: keysmith [--keychain", message: "did you mean 'find-generic-password'"),
        BadUsage(arguments: ["--colour", "dump-keychain"], usagePrefix: "usage: keysmith [--keychain", message: "unknown option '--colour'"),
        BadUsage(arguments: ["find-generic-password", "-x"], usagePrefix: "usage: keysmith find-generic-password", message: "unknown option '-x'"),
        BadUsage(arguments: ["find-generic-password", "-s"], usagePrefix: "usage: keysmith find-generic-password", message: "'-s' needs a value"),
        BadUsage(arguments: ["find-generic-password", "-s", "-a", "x"], usagePrefix: "usage: keysmith find-generic-password", message: "'-s' needs a value"),
        BadUsage(arguments: ["find-generic-password", "extra"], usagePrefix: "usage: keysmith find-generic-password", message: "unexpected argument 'extra'"),
        BadUsage(arguments: ["add-generic-password", "-a", "acct", "--stdin"], usagePrefix: "usage: keysmith add-generic-password", message: "-s SERVICE is required"),
        BadUsage(arguments: ["add-generic-password", "-s", "svc", "--stdin"], usagePrefix: "usage: keysmith add-generic-password", message: "-a ACCOUNT is required"),
        BadUsage(arguments: ["add-generic-password", "-s", "svc", "-a", "acct"], usagePrefix: "usage: keysmith add-generic-password", message: "no secret"),
        BadUsage(arguments: ["add-generic-password", "-s", "svc", "-a", "acct", "-w", "x", "--stdin"], usagePrefix: "usage: keysmith add-generic-password", message: "not both"),
        BadUsage(arguments: ["add-internet-password", "-s", "h", "-a", "a", "-P", "http", "--stdin"], usagePrefix: "usage: keysmith add-internet-password", message: "port must be a number"),
        BadUsage(arguments: ["find-internet-password", "-r", "gopher"], usagePrefix: "usage: keysmith find-internet-password", message: "unknown protocol 'gopher'"),
        BadUsage(arguments: ["delete-generic-password"], usagePrefix: "usage: keysmith delete-generic-password", message: "say which item"),
        BadUsage(arguments: ["dump-keychain", "--json=yes"], usagePrefix: "usage: keysmith dump-keychain", message: "takes no value"),
        BadUsage(arguments: ["help", "nonsense"], usagePrefix: "usage: keysmith help", message: "unknown command 'nonsense'"),
        BadUsage(arguments: ["dump-keychain", "--access-group="], usagePrefix: "usage: keysmith dump-keychain", message: "--access-group needs a group name"),
    ]

    @Test(arguments: badUsages)
    func badUsageExitsWith2AndPrintsTheUsageLine(_ row: BadUsage) throws {
        let home = TemporaryHome()
        let result = try keysmith(row.arguments, home: home, standardInput: "unused")
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("keysmith: ") == true, "\(result)")
        #expect(lines.first?.contains(row.message) == true, "\(result)")
        #expect(lines.contains { $0.hasPrefix(row.usagePrefix) }, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.path), "a usage error touches no keychain")
    }

    @Test func helpListsEveryCommandTheGlobalOptionsAndTheExitStatuses() throws {
        let home = TemporaryHome()
        let result = try keysmith(["help"], home: home, useKeychainFlag: false)
        #expect(result.status == 0)
        for command in CommandRegistry.commands {
            #expect(result.stdout.contains("  \(command.name)"), "help misses \(command.name)")
        }
        for option in GlobalOptions.specs {
            #expect(result.stdout.contains(option.helpSpelling), "help misses \(option.helpSpelling)")
        }
        for code in ExitCode.allCases {
            #expect(result.stdout.contains("\n  \(code.rawValue) "), "help misses exit status \(code.rawValue)")
        }
        for variable in ["KEYSMITH_HOME", "KEYSMITH_ACCESS_GROUPS", "keysmith.shared"] {
            #expect(result.stdout.contains(variable))
        }
        // The retrieval commands exist and are listed.
        for name in ["resolve", "explain", "audit", "rotate", "generate"] {
            #expect(CommandRegistry.command(named: name) != nil, "\(name) is not a command")
            #expect(result.stdout.contains("\n  \(name) "), "help misses \(name)")
        }
        #expect(try keysmith(["--help"], home: home).stdout == result.stdout)
        #expect(try keysmith(["-h"], home: home).stdout == result.stdout)
    }

    @Test(arguments: CommandRegistry.commands.map(\.name))
    func helpOfACommandDocumentsEveryFlag(_ name: String) throws {
        let home = TemporaryHome()
        let command = try #require(CommandRegistry.command(named: name))
        let result = try keysmith(["help", name], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix(command.usageLine))
        for option in command.options {
            #expect(result.stdout.contains(option.helpSpelling), "\(name) help misses \(option.helpSpelling)")
        }
        let viaFlag = try keysmith([name, "--help"], home: home)
        #expect(viaFlag.status == 0)
        #expect(viaFlag.stdout == result.stdout)
    }

    @Test func optionsOfEveryCommandHaveUniqueSpellings() {
        for command in CommandRegistry.commands {
            let all = command.options + GlobalOptions.specs
            let shorts = all.compactMap(\.shortName)
            let longs = all.compactMap(\.longName)
            #expect(Set(shorts).count == shorts.count, "\(command.name): a short option is used twice")
            #expect(Set(longs).count == longs.count, "\(command.name): a long option is used twice")
            #expect(all.allSatisfy { !$0.help.isEmpty }, "\(command.name): an option has no help")
        }
    }

    @Test func globalOptionsWorkBeforeAndAfterTheCommand() throws {
        let home = TemporaryHome()
        let keychain = home.keychain.path
        let before = try keysmith(["--keychain", keychain, "--json", "dump-keychain"], home: home, useKeychainFlag: false)
        let after = try keysmith(["dump-keychain", "--json", "--keychain=\(keychain)"], home: home, useKeychainFlag: false)
        #expect(before.status == 0)
        #expect(before.stdout == after.stdout)
        #expect(try before.json()["keychain"] as? String == keychain)
    }

    @Test func unwritableKeychainFailsWithExitStatus1AndAFix() throws {
        let home = TemporaryHome()
        let file = home.url.appendingPathComponent("not-a-directory")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8))
        let result = try keysmith(
            ["--keychain", file.path, "add-generic-password", "-s", "a", "-a", "b", "--stdin"], home: home,
            standardInput: "never-shown", useKeychainFlag: false)
        #expect(result.status == 1, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(result)")
        #expect(lines.last?.hasPrefix("  to fix: ") == true)
        #expect(!result.stderr.contains("never-shown"))
    }

    @Test func aStrayArgumentToACommandWithoutMinusWPointsToItsOwnPrompt() throws {
        let home = TemporaryHome()
        let result = try keysmith(["unlock", "typed-passphrase"], home: home)
        #expect(result.status == 2, "\(result)")
        #expect(!result.stderr.contains("typed-passphrase"), "never echoed")
        #expect(result.stderr.contains("--stdin or at the prompt"), "\(result)")
        #expect(!result.stderr.contains("-w"), "unlock has no -w: \(result)")
    }
}

/// The start-up shortcuts of the tool give what the general paths give.
struct StartUpShortcutTests {
    /// An item command looked up by name is built alone: it must be the command the full
    /// table holds (same name, group, usage, help and options), and every name of the table
    /// must find its own command.
    @Test func aCommandBuiltAloneIsTheOneTheTableHolds() throws {
        for listed in CommandRegistry.commands {
            let found = try #require(CommandRegistry.command(named: listed.name), "\(listed.name) is not found")
            #expect(found.name == listed.name)
            #expect(found.group == listed.group)
            #expect(found.usageLine == listed.usageLine)
            #expect(found.summary == listed.summary)
            #expect(found.details == listed.details)
            #expect(found.positionalNames == listed.positionalNames)
            #expect(found.options.map(\.helpSpelling) == listed.options.map(\.helpSpelling))
            #expect(found.options.map(\.help) == listed.options.map(\.help))
        }
        for name in ["", "find", "find-generic", "find-generic-password ", "dump-keychain2", "Find-generic-password"] {
            #expect(CommandRegistry.command(named: name) == nil, "'\(name)' found a command")
        }
    }

    /// The environment the tool reads at start-up is the one Foundation gives.
    @Test func theProcessEnvironmentIsFoundations() {
        #expect(KeysmithCommandLine.processEnvironment() == ProcessInfo.processInfo.environment)
    }

    /// `find-generic-password -w` asks for the data alone: the same bytes and the same errors
    /// as before, a missing item exiting 44.
    @Test func findWithWPrintsExactlyTheSecret() throws {
        let home = TemporaryHome()
        for (account, secret) in [("plain", "s3cret"), ("spaces", " two  words \t"), ("unicode", "ключ ✓")] {
            let added = try keysmith(
                ["add-generic-password", "-s", "svc", "-a", account, "--stdin"], home: home, standardInput: secret + "\n")
            #expect(added.status == 0, "\(added)")
            let found = try keysmith(["find-generic-password", "-s", "svc", "-a", account, "-w"], home: home)
            #expect(found.status == 0, "\(found)")
            #expect(found.stdout == secret + "\n", "\(found)")
            #expect(found.stderr.isEmpty, "\(found)")
            let quiet = try keysmith(["--quiet", "find-generic-password", "-s", "svc", "-a", account, "-w"], home: home)
            #expect(quiet.stdout == secret + "\n", "\(quiet)")
            let shown = try keysmith(["find-generic-password", "-s", "svc", "-a", account, "-g"], home: home)
            #expect(shown.status == 0, "\(shown)")
            #expect(shown.stdout.contains("\"acct\"<blob>=\"\(account)\""), "\(shown)")
        }
        let missing = try keysmith(["find-generic-password", "-s", "svc", "-a", "nobody", "-w"], home: home)
        #expect(missing.status == 44, "\(missing)")
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr.contains("no generic password with service \"svc\" and account \"nobody\""), "\(missing)")
        let wrongGroup = try keysmith(
            ["--access-group", "other.group", "find-generic-password", "-s", "svc", "-a", "plain", "-w"], home: home)
        #expect(wrongGroup.status == 44, "\(wrongGroup)")
        #expect(wrongGroup.stdout.isEmpty)
    }
}
