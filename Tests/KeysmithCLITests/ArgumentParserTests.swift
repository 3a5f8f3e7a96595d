import KeysmithCLI
import Testing

/// The options of a made-up command shaped like `add-generic-password`.
private let parser = ArgumentParser(options: [
    OptionSpec(name: "service", short: "s", value: .required("SERVICE"), help: "service"),
    OptionSpec(name: "account", short: "a", value: .required("ACCOUNT"), help: "account"),
    OptionSpec(name: "password", short: "w", value: .optional("PASSWORD"), help: "password or prompt"),
    OptionSpec(name: "update", short: "U", help: "update"),
    OptionSpec(name: "show", short: "g", help: "show"),
    OptionSpec(name: "stdin", long: "stdin", help: "stdin"),
    OptionSpec(long: "json", help: "json"),
    OptionSpec(long: "keychain", value: .required("PATH"), help: "keychain"),
    OptionSpec(name: "access-group", long: "access-group", value: .required("GROUP"), repeatable: true, help: "group"),
])

/// One row of the table: a command line and what it must parse to.
struct ParseCase: CustomTestStringConvertible, Sendable {
    let arguments: [String]
    let occurrences: [OptionOccurrence]
    let positionals: [String]

    init(_ arguments: [String], _ occurrences: [OptionOccurrence], _ positionals: [String] = []) {
        self.arguments = arguments
        self.occurrences = occurrences
        self.positionals = positionals
    }

    var testDescription: String { arguments.joined(separator: " ") }
}

private func o(_ name: String, _ value: String? = nil) -> OptionOccurrence { OptionOccurrence(name, value) }

struct ArgumentParserTests {
    static let validCases: [ParseCase] = [
        // Plain flags and values.
        ParseCase([], []),
        ParseCase(["-s", "api", "-a", "deploy"], [o("service", "api"), o("account", "deploy")]),
        ParseCase(["-U"], [o("update")]),
        ParseCase(["--json", "--stdin"], [o("json"), o("stdin")]),
        // Attached values and long forms with '='.
        ParseCase(["-sapi", "-adeploy"], [o("service", "api"), o("account", "deploy")]),
        ParseCase(["--keychain=/tmp/k"], [o("keychain", "/tmp/k")]),
        ParseCase(["--keychain", "/tmp/k"], [o("keychain", "/tmp/k")]),
        ParseCase(["--keychain="], [o("keychain", "")]),
        // Clustered flags; the last letter of a cluster may take a value.
        ParseCase(["-Ug"], [o("update"), o("show")]),
        ParseCase(["-Us", "api"], [o("update"), o("service", "api")]),
        ParseCase(["-Usapi"], [o("update"), o("service", "api")]),
        // -w: a value when one follows, "prompt" when it is last or an option follows.
        ParseCase(["-w", "hunter2"], [o("password", "hunter2")]),
        ParseCase(["-whunter2"], [o("password", "hunter2")]),
        ParseCase(["-s", "api", "-w"], [o("service", "api"), o("password")]),
        ParseCase(["-w", "-U"], [o("password"), o("update")]),
        ParseCase(["-w", "--stdin"], [o("password"), o("stdin")]),
        ParseCase(["-w", "--json"], [o("password"), o("json")]),
        ParseCase(["-w", "--"], [o("password")]),
        ParseCase(["-w", "--", "x"], [o("password")], ["x"]),
        ParseCase(["-Uw"], [o("update"), o("password")]),
        ParseCase(["-Uw", "pw"], [o("update"), o("password", "pw")]),
        // A value that starts with a dash but is not one of our options is a value.
        ParseCase(["-w", "-secret"], [o("password", "-secret")]),
        ParseCase(["-w", "-Ug"], [o("password", "-Ug")]),
        ParseCase(["-w", "-"], [o("password", "-")]),
        ParseCase(["-s-a"], [o("service", "-a")]),
        ParseCase(["--keychain=--json"], [o("keychain", "--json")]),
        // '-' is a positional (standard input), '--' ends the options.
        ParseCase(["-"], [], ["-"]),
        ParseCase(["-s", "api", "-", "x"], [o("service", "api")], ["-", "x"]),
        ParseCase(["--", "-s", "--json"], [], ["-s", "--json"]),
        ParseCase(["--", "--"], [], ["--"]),
        ParseCase(["a", "-U", "b"], [o("update")], ["a", "b"]),
        // Repeatable options keep every value; repeating a flag or the same value is fine.
        ParseCase(["--access-group", "a", "--access-group=b"], [o("access-group", "a"), o("access-group", "b")]),
        ParseCase(["-U", "-U"], [o("update"), o("update")]),
        ParseCase(["-s", "x", "-s", "x"], [o("service", "x"), o("service", "x")]),
    ]

    @Test(arguments: validCases)
    func parses(_ row: ParseCase) throws {
        let parsed = try parser.parse(row.arguments)
        #expect(parsed.occurrences == row.occurrences)
        #expect(parsed.positionals == row.positionals)
    }

    static let invalidCases: [([String], ArgumentError)] = [
        (["-x"], .unknownOption("-x")),
        (["-Ux"], .unknownOption("-x")),
        (["--colour"], .unknownOption("--colour")),
        (["--colour=red"], .unknownOption("--colour")),
        (["-s"], .missingValue("-s")),
        (["-s", "-a", "acct"], .missingValue("-s")),
        (["-s", "--json"], .missingValue("-s")),
        (["-s", "--"], .missingValue("-s")),
        (["--keychain"], .missingValue("--keychain")),
        (["-Us"], .missingValue("-s")),
        (["--json=yes"], .unexpectedValue("--json")),
        (["-s", "a", "-s", "b"], .repeatedOption("-s")),
        // Two values that differ only in Unicode form are two names (two services).
        (["-s", "jos\u{E9}", "-s", "jose\u{301}"], .repeatedOption("-s")),
    ]

    @Test(arguments: invalidCases)
    func rejects(_ arguments: [String], _ expected: ArgumentError) {
        #expect(throws: expected) { try parser.parse(arguments) }
    }

    @Test func stopsAtTheFirstPositionalWhenAsked() throws {
        let parsed = try parser.parse(["--json", "find", "-s", "x", "--bogus"], stopAtFirstPositional: true)
        #expect(parsed.occurrences == [o("json")])
        #expect(parsed.positionals == ["find", "-s", "x", "--bogus"])
    }

    @Test func accessorsReturnTheLastValueAndEveryValue() throws {
        let parsed = try parser.parse(["--access-group", "a", "-w", "-U", "--access-group", "b"])
        #expect(parsed.contains("password"))
        #expect(parsed.value("password") == nil)
        #expect(parsed.lastOccurrence(of: "password") == o("password"))
        #expect(parsed.values("access-group") == ["a", "b"])
        #expect(parsed.value("access-group") == "b")
        #expect(!parsed.contains("service"))
    }

    @Test func errorDescriptionsNeverContainValues() {
        // Messages name options only: a value may be a secret.
        for error in [ArgumentError.missingValue("-w"), .unexpectedValue("--json"), .repeatedOption("-w")] {
            #expect(!error.description.contains("hunter2"))
        }
        #expect(throws: ArgumentError.repeatedOption("-w")) { try parser.parse(["-w", "hunter2", "-w", "other"]) }
    }

    @Test func helpSpellingShowsShortLongAndPlaceholders() {
        #expect(OptionSpec(short: "s", value: .required("SERVICE"), help: "").helpSpelling == "-s SERVICE")
        #expect(OptionSpec(short: "w", value: .optional("PASSWORD"), help: "").helpSpelling == "-w [PASSWORD]")
        #expect(OptionSpec(short: "h", long: "help", help: "").helpSpelling == "-h, --help")
        #expect(OptionSpec(long: "keychain", value: .required("PATH"), help: "").helpSpelling == "--keychain PATH")
    }
}
