import Foundation

// `keysmith demo`: seed 000's "Project X" walkthrough (section 4), run with the real
// retrieval commands on a temporary keychain. The seed's expectations, step by step:
//
// 4.1  the keychain is empty, Keys.plist holds api_key -> "loaded from ConfigFile(plist),
//      version=builtin"
// 4.2  control group 1: only the keychain holds the key (plist empty) -> Keychain;
//      control group 2: keychain and plist both hold it -> Keychain (priority = override)
// 4.3  rotation: old and new versions side by side in the keychain; a minimum version
//      selects the new one, and the old one stays retrievable for old data.
//
// Every step prints the command, its output and exit status, and checks the outcome
// against the seed. The keys are random, held by the demo, and never printed.

/// The Project X walkthrough (the default `keysmith demo`).
struct ProjectXWalkthrough {
    /// The keychain service of the demo's keys (after the seed's `com.xyproject.keyservice`,
    /// marked as the demo's so that a given keychain's own items are never touched).
    static let service = "com.xyproject.keyservice.demo"
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

        // The app's bundled config file (seed 3.3): api_key in the nested form, without a
        // version (so "builtin", as in the seed's log), and maps_key, a non-sensitive key
        // as a bare string. Plus the control group's empty plist.
        let apiKey = ItemWalkthrough.randomSecret()
        let mapsKey = ItemWalkthrough.randomSecret()
        let keysPlist = directory + "/Keys.plist"
        let emptyPlist = directory + "/Empty.plist"
        try write(["api_key": ["value": Data(apiKey.utf8).base64EncodedString()], "maps_key": mapsKey], to: keysPlist)
        try write([:], to: emptyPlist)

        output.info("keysmith demo: Project X (seed 000, section 4), step by step")
        output.info("")
        var facts = KeyValueTable()
        facts.add("directory", "\(directory) (new and temporary, removed at the end)")
        if ownKeychain, let keychainPath {
            facts.add("keychain", "\(keychainPath) (inside it)")
        } else {
            facts.add("keychain", (keychainPath ?? "the system keychain") + " (only the demo's items are touched)")
        }
        facts.add("service", "\(Self.service) (the keychain service of Project X's keys)")
        facts.add("api_key", "\(apiKey.count) random characters held by the demo; never printed")
        for line in facts.lines(indent: 2) { output.info(line) }
        output.info("")
        output.info("  $ cd \(directory)")
        output.info("  Keys.plist, the config file bundled with the app (seed 3.3):")
        output.info("    api_key   = { value = <base64 of api_key, not shown> }   (no version, so: builtin)")
        output.info("    maps_key  = \"<a non-sensitive key as plain text, not shown>\"")
        output.info("  Empty.plist, an empty dictionary (the control group's \"plist is empty\").")

        let service = ["--service", Self.service]
        let configFlag = ["--config", "Keys.plist"]
        func words(_ base: [String]) -> [String] {
            base.map { $0 == "Keys.plist" ? keysPlist : $0 == "Empty.plist" ? emptyPlist : $0 }
        }
        var summary: [(String, String, String)] = []

        func step(
            _ number: Int, _ seed: String, _ explanation: String, _ shown: [String], secret: String? = nil,
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
            summary.append((seed, expect.summary, got))
            guard got == expect.summary else {
                throw .failure(
                    "demo step \(number) gave \(got) instead of \(expect.summary).",
                    recovery: "the output above says why; run the same command by hand to look closer.")
            }
        }

        try step(
            1, "4.1",
            "App launch, first lookup. The keychain holds no api_key yet, so the retriever moves on to the next "
                + "source in priority, Keys.plist, and finds it there. The seed logs: \"API key loaded from "
                + "ConfigFile(plist), version=builtin\".",
            ["resolve", Self.identifier] + configFlag + service, expect: .found(source: "ConfigFile(plist)", version: "builtin"))
        try step(
            2, "4.1",
            "Why the config file: explain shows the priority, every candidate spelling tried in the keychain "
                + "(each a miss), then the hit in Keys.plist, with timings. Never the key.",
            ["explain", Self.identifier] + configFlag + service, expect: .success)
        try step(
            3, "4.1",
            "Store the key in the keychain (as a login would), version 2024.06.01. The key arrives on standard "
                + "input, never on the command line.",
            ["rotate", Self.identifier, "--stdin", "--version", "2024.06.01"] + service, secret: apiKey,
            expect: .success)
        try step(
            4, "4.2 group 2",
            "The same lookup as step 1. Now the keychain and Keys.plist both hold api_key (the seed's second "
                + "control group): the keychain comes first in priority, so it wins. Priority is an override: the "
                + "plist copy is only a fallback.",
            ["resolve", Self.identifier] + configFlag + service, expect: .found(source: "Keychain", version: "2024.06.01"))
        try step(
            5, "4.2 group 1",
            "The seed's first control group: only the keychain holds the key (the plist is empty). The key comes "
                + "from the keychain.",
            ["resolve", Self.identifier, "--config", "Empty.plist"] + service,
            expect: .found(source: "Keychain", version: "2024.06.01"))
        try step(
            6, "4.3",
            "Rotation: the server moved to key version 2024.07.01. Store the new version; the old one stays, so "
                + "data encrypted with it can still be decrypted.",
            ["rotate", Self.identifier, "--generate", "32", "--version", "2024.07.01"] + service, expect: .success)
        try step(
            7, "4.3",
            "Ask for at least version 2024.07.01 (compared numerically, segment by segment, not as strings).",
            ["resolve", Self.identifier, "--min-version", "2024.07.01"] + configFlag + service,
            expect: .found(source: "Keychain", version: "2024.07.01"))
        try step(
            8, "4.3",
            "The old version is still there, by exact version, for data written before the rotation.",
            ["resolve", Self.identifier, "--version", "2024.06.01"] + configFlag + service,
            expect: .found(source: "Keychain", version: "2024.06.01"))
        try step(
            9, "4.3",
            "A minimum no copy meets: \"version too low counts as not found\" (the plist's builtin version sorts "
                + "below every number). Exit status 44.",
            ["resolve", Self.identifier, "--min-version", "2024.08.01"] + configFlag + service, expect: .notFound)
        try step(
            10, "1.1",
            "The audit: every key, the copy that wins and its version, the shadowed copies, and warnings. "
                + "Someone who takes over the code sees where each key lives, how many copies exist and which wins.",
            ["audit"] + configFlag + service, expect: .success)

        output.info("")
        output.info("Summary: the seed's expectations and what keysmith did")
        var table = ColumnTable(headers: ["STEP", "SEED", "EXPECTED", "GOT"])
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
