import Foundation

// `keysmith demo`: a walkthrough of an app's keys, run with the real retrieval commands on a
// temporary keychain. What each step shows:
//
// - first launch: the keychain is empty, Keys.plist holds api_key -> "loaded from
//   ConfigFile(plist), version=builtin"
// - once stored, the keychain answers whether the plist also holds the key (priority is an
//   override) or not (keychain only)
// - rotation: old and new versions side by side in the keychain; a minimum version selects
//   the new one, and the old one stays retrievable for old data.
//
// Every step prints the command, its output and exit status, and checks the outcome. The
// keys are random, held by the demo, and never printed.

/// The walkthrough of an app's keys (the default `keysmith demo`).
struct AppKeysWalkthrough {
    /// The keychain service of the demo's keys, marked as the demo's so that a given
    /// keychain's own items are never touched.
    static let service = "com.example.app.keys.demo"
    static let identifier = "api_key"

/// What a step must end with.
    enum Expectation {
        /// Exit status 0 (no lookup to check).
        case success
        /// A key served from this source description with this version.
        case found(source: String, version: String)
        /// Exit status 44.
        case notFound

        var summary: String {
            switch self {
            case .success: return "exit status 0"
            case .found(let source, let version): return "\(source), version=\(version)"
            case .notFound: return "not found (exit status 44)"
            }
        }
    }

    let invocation: CommandInvocation
    var output: Output { invocation.output }

    init(_ invocation: CommandInvocation) {
        self.invocation = invocation
    }

    func run() throws(CommandLineError) {
        let explicitKeychain = invocation.arguments.value("keychain")
        let directory = try ItemWalkthrough.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keychainPath: String?
        #if canImport(Security)
        keychainPath = nil
        #else
        if let explicitKeychain {
            keychainPath = URL(fileURLWithPath: explicitKeychain).standardizedFileURL.path
        } else {
            keychainPath = directory + "/keychain"
        }
        #endif
        let ownKeychain = explicitKeychain == nil && keychainPath != nil

        var environment = invocation.environment
        if let keychainPath { environment["KEYSMITH_HOME"] = keychainPath }
        if invocation.settings.accessGroupsGivenExplicitly {
            environment["KEYSMITH_ACCESS_GROUPS"] = invocation.settings.accessGroups.joined(separator: ",")
        }
        let runner = StepRunner(environment: environment, output: output)
        let cleanUp = ["delete-generic-password", "-s", Self.service, "--all"]
        if !ownKeychain {
            // A keychain that outlives the demo: remove the demo's items of an earlier run, silently.
            _ = runner.run(cleanUp)
        }
        defer { if !ownKeychain { _ = runner.run(cleanUp) } }

        // The app's bundled config file: api_key in the nested form, without a version (so
        // "builtin"), and maps_key, a non-sensitive key as a bare string. Plus an empty plist,
        // for the lookup where only the keychain holds the key.
        let apiKey = ItemWalkthrough.randomSecret()
        let mapsKey = ItemWalkthrough.randomSecret()
        let keysPlist = directory + "/Keys.plist"
        let emptyPlist = directory + "/Empty.plist"
        try write(["api_key": ["value": Data(apiKey.utf8).base64EncodedString()], "maps_key": mapsKey], to: keysPlist)
        try write([:], to: emptyPlist)

        output.info("keysmith demo: a walkthrough of an app's keys, step by step")
        output.info("")
        var facts = KeyValueTable()
        facts.add("directory", "\(directory) (new and temporary, removed at the end)")
        if ownKeychain, let keychainPath {
            facts.add("keychain", "\(keychainPath) (inside it)")
        } else {
            facts.add("keychain", (keychainPath ?? "the system keychain") + " (only the demo's items are touched)")
        }
        facts.add("service", "\(Self.service) (the keychain service of the app's keys)")
        facts.add("api_key", "\(apiKey.count) random characters held by the demo; never printed")
        for line in facts.lines(indent: 2) { output.info(line) }
        output.info("")
        output.info("  $ cd \(directory)")
        output.info("  Keys.plist, the config file bundled with the app:")
        output.info("    api_key   = { value = <base64 of api_key, not shown> }   (no version, so: builtin)")
        output.info("    maps_key  = \"<a non-sensitive key as plain text, not shown>\"")
        output.info("  Empty.plist, an empty dictionary (an app that bundles no keys).")

        let service = ["--service", Self.service]
        let configFlag = ["--config", "Keys.plist"]
        func words(_ base: [String]) -> [String] {
            base.map { $0 == "Keys.plist" ? keysPlist : $0 == "Empty.plist" ? emptyPlist : $0 }
        }
        var summary: [(String, String, String)] = []

        func step(
            _ number: Int, _ topic: String, _ explanation: String, _ shown: [String], secret: String? = nil,
            expect: Expectation
        ) throws(CommandLineError) {
            output.info("")
            let heading = "Step \(number). "
            for (index, line) in TextWrap.wrap(heading + explanation, indent: 0, width: 80 - heading.count).enumerated() {
                output.info(index == 0 ? line : String(repeating: " ", count: heading.count) + line)
            }
            output.info("")
            let display = (secret != nil ? "printf '%s' \"$API_KEY\" | " : "") + "keysmith "
                + shown.map(shellWord).joined(separator: " ")
            output.info("  $ \(display)")
            let result = runner.run(words(shown), standardInput: secret)
            // The transcript reads as if run in the demo directory (`cd` above): paths inside it are relative.
            for line in result.lines {
                output.info(line.isEmpty ? "" : "  " + line.replacingOccurrences(of: directory + "/", with: ""))
            }
            output.info("  (exit status \(result.status))")
            let got: String
            switch expect {
            case .success, .notFound:
                got = result.status == 0 ? "exit status 0" : result.status == 44 ? "not found (exit status 44)"
                    : "exit status \(result.status)"
            case .found:
                got = served(words(shown), runner: runner) ?? "exit status \(result.status)"
                output.info("  => \(Self.identifier) loaded from \(got)")
            }
            summary.append((topic, expect.summary, got))
            guard got == expect.summary else {
                throw .failure(
                    "demo step \(number) gave \(got) instead of \(expect.summary).",
                    recovery: "the output above says why; run the same command by hand to look closer.")
            }
        }

        try step(
            1, "first launch",
            "App launch, first lookup. The keychain holds no api_key yet, so the retriever moves on to the next "
                + "source in priority, Keys.plist, and finds it there: \"API key loaded from ConfigFile(plist), "
                + "version=builtin\".",
            ["resolve", Self.identifier] + configFlag + service, expect: .found(source: "ConfigFile(plist)", version: "builtin"))
        try step(
            2, "why",
            "Why the config file: explain shows the priority, every candidate spelling tried in the keychain "
                + "(each a miss), then the hit in Keys.plist, with timings. Never the key.",
            ["explain", Self.identifier] + configFlag + service, expect: .success)
        try step(
            3, "store",
            "Store the key in the keychain (as a login would), version 2024.06.01. The key arrives on standard "
                + "input, never on the command line.",
            ["rotate", Self.identifier, "--stdin", "--version", "2024.06.01"] + service, secret: apiKey,
            expect: .success)
        try step(
            4, "both hold it",
            "The same lookup as step 1. Now the keychain and Keys.plist both hold api_key: the keychain comes "
                + "first in priority, so it wins. Priority is an override: the "
                + "plist copy is only a fallback.",
            ["resolve", Self.identifier] + configFlag + service, expect: .found(source: "Keychain", version: "2024.06.01"))
        try step(
            5, "keychain only",
            "Only the keychain holds the key (the plist is empty). The key comes from the keychain.",
            ["resolve", Self.identifier, "--config", "Empty.plist"] + service,
            expect: .found(source: "Keychain", version: "2024.06.01"))
        try step(
            6, "rotate",
            "Rotation: the server moved to key version 2024.07.01. Store the new version; the old one stays, so "
                + "data encrypted with it can still be decrypted.",
            ["rotate", Self.identifier, "--generate", "32", "--version", "2024.07.01"] + service, expect: .success)
        try step(
            7, "minimum",
            "Ask for at least version 2024.07.01 (compared numerically, segment by segment, not as strings).",
            ["resolve", Self.identifier, "--min-version", "2024.07.01"] + configFlag + service,
            expect: .found(source: "Keychain", version: "2024.07.01"))
        try step(
            8, "old version",
            "The old version is still there, by exact version, for data written before the rotation.",
            ["resolve", Self.identifier, "--version", "2024.06.01"] + configFlag + service,
            expect: .found(source: "Keychain", version: "2024.06.01"))
        try step(
            9, "too low",
            "A minimum no copy meets: \"version too low counts as not found\" (the plist's builtin version sorts "
                + "below every number). Exit status 44.",
            ["resolve", Self.identifier, "--min-version", "2024.08.01"] + configFlag + service, expect: .notFound)
        try step(
            10, "audit",
            "The audit: every key, the copy that wins and its version, the shadowed copies, and warnings. "
                + "Someone who takes over the code sees where each key lives, how many copies exist and which wins.",
            ["audit"] + configFlag + service, expect: .success)

        output.info("")
        output.info("Summary: what each step should give and what keysmith did")
        var table = ColumnTable(headers: ["STEP", "WHAT", "EXPECTED", "GOT"])
        for (index, row) in summary.enumerated() {
            table.add(["\(index + 1)", row.0, row.1, row.2 == row.1 ? "same" : row.2])
        }
        for line in table.lines(indent: 2) { output.info(line) }
        output.info("")
        output.info(
            "Done. No key was printed; to see one, a script asks explicitly with resolve --reveal. "
                + (ownKeychain ? "The temporary directory and its keychain are removed." : "The demo's items are removed."))
    }

    /// `Keychain, version=2024.06.01` from a `--json` run of the same command, or `nil`.
    private func served(_ words: [String], runner: StepRunner) -> String? {
        let result = runner.run(words + ["--json"])
        guard result.status == 0, let data = result.lines.joined(separator: "\n").data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let source = object["sourceDescription"] as? String, let version = object["version"] as? String
        else { return nil }
        return "\(source), version=\(version)"
    }

    /// Writes a property list file.
    private func write(_ dictionary: [String: Any], to path: String) throws(CommandLineError) {
        do {
            let data = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0)
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .failure(
                "cannot write the demo's config file \(path): \(error.localizedDescription)",
                recovery: "set TMPDIR to a writable directory.")
        }
    }
}
