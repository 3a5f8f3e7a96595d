import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// `keysmith demo`: two short, readable walkthroughs on a fresh temporary keychain. The
// default is a walkthrough of an app's keys (AppKeysWalkthrough.swift): a key found first in
// a config file, then in the keychain (with and without the config file's copy), a rotation
// with a minimum version, and the audit. `demo --items` walks through the item commands. Each step prints the command as a
// person would type it, runs it through the real dispatcher (same parsing, same SecItem
// calls), and shows its output and exit status. Secrets are never printed.

/// The `demo` command.
public enum DemoCommand {
    /// The demo command.
    public static let command = Command(
        name: "demo", group: .tool, synopsis: "[--items]",
        summary: "Walk through an app's keys on a temporary keychain (--items: the item commands)",
        details: "Without options: a walkthrough of an app's keys. A Keys.plist is written to a "
            + "temporary directory; api_key is found first in that config file (version builtin), then stored in "
            + "the keychain and found there (the keychain wins); with the key in the keychain only, and in both "
            + "keychain and plist, the keychain answers; a rotation to 2024.07.01 keeps the old version, "
            + "resolve --min-version serves the new one and resolve --version the old one; the audit shows every "
            + "copy. Keys are never printed.\n\n"
            + "With --items: creates the keychain with a passphrase, stores a generic password, finds it (attributes "
            + "only), locks the keychain, shows the read of the secret refused, unlocks it and reads the secret (not "
            + "shown), updates it with -U, finds it again to show the modification date move, deletes it, and finds "
            + "it once more to show exit status 44. On a keychain given with --keychain the steps that create, lock "
            + "and unlock it are left out. 'make demo' runs this walkthrough, then the one of an app's keys.\n\n"
            + "Every step prints the command, its output and its exit status. The demo uses a new temporary keychain "
            + "that is removed at the end, or the keychain given with --keychain (then only the demo's own items are "
            + "touched, and removed at the end).",
        options: [
            OptionSpec(name: "items", long: "items", help: "The walkthrough of the item commands instead of the app's keys."),
        ]
    ) { invocation throws(CommandLineError) in
        if invocation.arguments.contains("items") {
            try ItemWalkthrough(invocation).run()
        } else {
            try AppKeysWalkthrough(invocation).run()
        }
    }
}

/// The item-command walkthrough.
struct ItemWalkthrough {
    static let service = "demo.keysmith.example"
    static let account = "alice"

    let invocation: CommandInvocation
    var output: Output { invocation.output }

    init(_ invocation: CommandInvocation) {
        self.invocation = invocation
    }

    func run() throws(CommandLineError) {
        let explicitKeychain = invocation.arguments.value("keychain")
        let keychainPath: String?
        var temporaryDirectory: String?
        #if canImport(Security)
        keychainPath = nil
        #else
        if let explicitKeychain {
            keychainPath = URL(fileURLWithPath: explicitKeychain).standardizedFileURL.path
        } else {
            temporaryDirectory = try Self.makeTemporaryDirectory()
            keychainPath = temporaryDirectory
        }
        #endif
        defer {
            if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
        }

        var environment = invocation.environment
        if let keychainPath { environment["KEYSMITH_HOME"] = keychainPath }
        if invocation.settings.accessGroupsGivenExplicitly {
            environment["KEYSMITH_ACCESS_GROUPS"] = invocation.settings.accessGroups.joined(separator: ",")
        }

        let firstSecret = Self.randomSecret()
        let secondSecret = Self.randomSecret()
        let runner = StepRunner(environment: environment, output: output)

        output.info("keysmith demo: the item commands, step by step")
        output.info("")
        var facts = KeyValueTable()
        if let temporaryDirectory {
            facts.add("keychain", "\(temporaryDirectory) (new and temporary, removed at the end)")
        } else {
            facts.add("keychain", keychainPath ?? "the system keychain")
        }
        facts.add("access group", invocation.settings.accessGroupsDescription)
        facts.add("secret", "\(firstSecret.count) random characters held by the demo; never printed")
        for line in facts.lines(indent: 2) { output.info(line) }

        if explicitKeychain != nil || keychainPath == nil {
            // An existing keychain: remove a demo item left by an earlier run, silently.
            _ = runner.run(["delete-generic-password", "-s", Self.service, "-a", Self.account])
        }

        let target = ["-s", Self.service, "-a", Self.account]
        var number = 0
        func next() -> Int {
            number += 1
            return number
        }
        // Lock and unlock are shown on the demo's own keychain only: on a keychain given with
        // --keychain they would lock the user's keychain, whose passphrase the demo does not know.
        let showsLocking = temporaryDirectory != nil
        let passphrase = Self.randomSecret()
        if showsLocking {
            try step(
                next(), "Create the keychain with a passphrase. Items stored as accessible when unlocked (the default) "
                    + "can then be read only while the keychain is unlocked, as on a Mac or an iPhone.",
                shown: "printf '%s\\n' \"$PASSPHRASE\" | keysmith create --stdin",
                run: ["create", "--stdin"], secret: passphrase + "\n", runner: runner, expect: .success)
        }
        try step(
            next(), "Store a generic password. The secret arrives on standard input, so it never appears in the "
                + "command line, the shell history or the process list.",
            shown: "printf '%s' \"$SECRET\" | keysmith add-generic-password \(display(target)) -l 'Demo API token' --stdin",
            run: ["add-generic-password"] + target + ["-l", "Demo API token", "--stdin"], secret: firstSecret,
            runner: runner, expect: .success)
        try step(
            next(), "Find it. Without -w only the attributes are printed, never the secret.",
            shown: "keysmith find-generic-password \(display(target))",
            run: ["find-generic-password"] + target, runner: runner, expect: .success)
        if showsLocking {
            try step(
                next(), "Lock the keychain, for every process of this user (by default it also locks itself 15 minutes after an unlock).",
                shown: "keysmith lock", run: ["lock"], runner: runner, expect: .success)
            try step(
                next(), "Read the secret (-w) while the keychain is locked: refused, with the cause and the fix.",
                shown: "keysmith find-generic-password \(display(target)) -w",
                run: ["find-generic-password"] + target + ["-w"], runner: runner, expect: .failure)
            try step(
                next(), "Unlock it with the passphrase (prompted without echo when you type it; piped here).",
                shown: "printf '%s\\n' \"$PASSPHRASE\" | keysmith unlock --stdin",
                run: ["unlock", "--stdin"], secret: passphrase + "\n", runner: runner, expect: .success)
            try step(
                next(), "Read the secret again: -w prints it alone on standard output, for a script to take. "
                    + "(The demo does not show it.)",
                shown: "keysmith find-generic-password \(display(target)) -w",
                run: ["find-generic-password"] + target + ["-w"], runner: runner, expect: .success,
                hidingOutput: "(the secret, \(firstSecret.count) characters, not shown here)")
        }
        let before = runner.dates(target)

        // Let the clock move, so the new modification date differs visibly.
        usleep(50_000)
        try step(
            next(), "Replace the secret with -U (update the item if it exists; without -U this is an error).",
            shown: "printf '%s' \"$NEW_SECRET\" | keysmith add-generic-password \(display(target)) -U --stdin",
            run: ["add-generic-password"] + target + ["-U", "--stdin"], secret: secondSecret, runner: runner,
            expect: .success)
        try step(
            next(), "Find it again: the modification date moved, the creation date did not.",
            shown: "keysmith find-generic-password \(display(target))",
            run: ["find-generic-password"] + target, runner: runner, expect: .success)
        let after = runner.dates(target)
        if let before, let after {
            let created = before.created == after.created ? "creation date unchanged" : "creation date changed"
            output.info("  modified \(before.modified) -> \(after.modified); \(created)")
        }
        try step(
            next(), "Delete it.",
            shown: "keysmith delete-generic-password \(display(target))",
            run: ["delete-generic-password"] + target, runner: runner, expect: .success)
        try step(
            next(), "Find it once more: nothing is found, the error says what to check, and the exit status is "
                + "44, as macOS security uses.",
            shown: "keysmith find-generic-password \(display(target))",
            run: ["find-generic-password"] + target, runner: runner, expect: .itemNotFound)
        if showsLocking {
            // The unlock state lives in the user's kernel keyring: leave none behind.
            _ = runner.run(["lock", "--all"])
        }

        output.info("")
        output.info("Done. Both secrets (\(firstSecret.count) bytes each) were stored and never printed; to see one, "
            + "a script asks explicitly with find-generic-password -w.")
        if temporaryDirectory != nil { output.info("The temporary keychain is removed.") }
    }

    /// Prints a step, runs it, prints its output and exit status, and checks the status.
    private func step(
        _ number: Int, _ explanation: String, shown: String, run words: [String], secret: String? = nil,
        runner: StepRunner, expect: ExitCode, hidingOutput hidden: String? = nil
    ) throws(CommandLineError) {
        output.info("")
        let heading = "Step \(number). "
        let wrapped = TextWrap.wrap(heading + explanation, indent: 0)
        for (index, line) in wrapped.enumerated() {
            output.info(index == 0 ? line : String(repeating: " ", count: heading.count) + line)
        }
        output.info("")
        output.info("  $ \(shown)")
        let result = runner.run(words, standardInput: secret)
        if let hidden, result.status == expect.rawValue {
            output.info("  " + hidden)
        } else {
            for line in result.lines { output.info("  " + line) }
        }
        output.info("  (exit status \(result.status))")
        guard result.status == expect.rawValue else {
            throw .failure(
                "demo step \(number) ended with exit status \(result.status) instead of \(expect.rawValue).",
                recovery: "the output above says why; run the same command by hand to look closer.")
        }
    }

    private func display(_ words: [String]) -> String {
        words.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }

    /// 24 random letters and digits.
    static func randomSecret() -> String {
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<24).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    /// A new directory, readable only by its owner (mkdtemp).
    static func makeTemporaryDirectory() throws(CommandLineError) -> String {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array("\(base)/keysmith-demo-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else {
            throw .failure(
                "cannot create a temporary directory in \(base).",
                recovery: "set TMPDIR to a writable directory, or give a keychain with --keychain DIRECTORY.")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Runs demo steps through the real dispatcher with captured output.
struct StepRunner {
    let environment: [String: String]
    let output: Output

    /// Runs `keysmith WORDS`, feeding `standardInput` as its standard input.
    func run(_ words: [String], standardInput: String? = nil) -> (status: Int32, lines: [String]) {
        let captured = BufferSink()
        let capturedErrors = BufferSink()
        let stepOutput = Output(standardOutput: captured, standardError: capturedErrors)
        let input = SecretInput(
            readAllStandardInput: { standardInput.map { Data($0.utf8) } ?? Data() },
            standardInputIsTerminal: { false })
        let status = KeysmithCommandLine.run(
            ["keysmith"] + words, environment: environment, output: stepOutput, secretInput: input)
        stepOutput.flush()
        let lines = (captured.text + capturedErrors.text).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        return (status, lines.last == "" ? Array(lines.dropLast()) : lines)
    }

    /// The creation and modification dates of the demo item (from a `--json` find).
    func dates(_ target: [String]) -> (created: String, modified: String)? {
        let result = run(["find-generic-password", "--json"] + target)
        guard result.status == 0,
            let data = result.lines.joined(separator: "\n").data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let created = object["created"] as? String, let modified = object["modified"] as? String
        else { return nil }
        return (created, modified)
    }
}
