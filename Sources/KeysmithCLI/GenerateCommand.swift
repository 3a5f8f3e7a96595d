import Foundation
import Keysmith

// `keysmith generate`: compiled keys. Turns a keys file (or PREFIX_NAME environment
// variables) into Swift source with CompiledKeyGenerator; the KeysmithGeneratePlugin
// build-tool plugin runs `keysmith generate --input FILE --output FILE --type-prefix P`.
// Obfuscation, not secrecy: the salt is in the same binary.

/// The `generate` command.
enum GenerateCommand {
    static let command = Command(
        name: "generate", group: .retrieval,
        synopsis: "(--input FILE | --from-environment PREFIX --tag TAG) --output FILE.swift [--environment NAME]... "
            + "[--type-prefix PREFIX] [--access internal|public]",
        summary: "Compile keys into obfuscated Swift source (obfuscation, not secrecy)",
        details: "Writes Swift source that compiles keys into the binary, XOR-ed with a random salt drawn at each "
            + "generation: one type per environment (PREFIXDebug, PREFIXRelease, ...) holding a CompiledKeySource, "
            + "and PREFIX.source(for: TAG). The debug environment is compiled only under #if DEBUG, release only "
            + "under #if !DEBUG, and any other tag only under its own flag, #if KEYSMITH_KEYS_<TAG> (define it with "
            + "-D KEYSMITH_KEYS_<TAG>), so no other table ships in a release build by accident. The output contains no key in plaintext (nor in base64); nothing secret is printed.\n\n"
            + "This is obfuscation, not secrecy: anyone with the binary and a debugger recovers every key. Compile "
            + "only non-sensitive keys (ones you would also put in a plist); keep sensitive keys in the keychain, "
            + "and never commit a generated file that holds real keys (the KeysmithGeneratePlugin build-tool "
            + "plugin writes into the build directory for that reason).\n\n"
            + "The keys file is a dictionary of environment tags, each a dictionary of entries as in a config file, "
            + "with an optional \"version\" at either level: {\"debug\": {\"api_key\": \"text\"}, \"release\": "
            + "{\"api_key\": {\"value\": \"BASE64\", \"version\": \"2024.07.01\"}}}. With --from-environment, "
            + "every variable PREFIX_NAME becomes key \"name\" (lower-cased) of environment TAG, version builtin; "
            + "both inputs may be combined when their tags differ.\n\n"
            + "Prints what was written; with --json: {\"output\", \"environments\": [{\"tag\", \"type\", \"keys\": "
            + "[\"name@version\"]}]}.\n\n"
            + "Examples:\n\n"
            + "  keysmith generate --input Keys.keysmith.json --output Sources/App/CompiledKeys.swift\n"
            + "  keysmith generate --input Keys.keysmith.json --output Keys.swift --environment release --access public\n"
            + "  keysmith generate --from-environment CI_KEY --tag release --output CompiledKeys.swift",
        options: [
            OptionSpec(long: "input", value: .required("FILE"), help: "The keys file (JSON or plist)."),
            OptionSpec(long: "output", value: .required("FILE"), help: "The Swift file to write (replaced atomically)."),
            OptionSpec(
                long: "environment", value: .required("NAME"), repeatable: true,
                help: "Compile only this environment of the keys file (repeatable); default: every environment."),
            OptionSpec(
                name: "type-prefix", long: "type-prefix", value: .required("PREFIX"),
                help: "The prefix of the generated type names (default CompiledKeys)."),
            OptionSpec(
                long: "access", value: .required("LEVEL"),
                help: "The access level of the generated types: internal (default) or public."),
            OptionSpec(
                name: "from-environment", long: "from-environment", value: .required("PREFIX"),
                help: "Take keys from the environment variables PREFIX_NAME (for CI jobs that inject keys); needs --tag."),
            OptionSpec(long: "tag", value: .required("TAG"), help: "The environment tag of the --from-environment keys."),
        ]
    ) { invocation throws(CommandLineError) in
        try run(invocation)
    }

    private static func run(_ invocation: CommandInvocation) throws(CommandLineError) {
        let arguments = invocation.arguments
        for name in ["input", "output", "type-prefix", "access", "from-environment", "tag"]
        where arguments.contains(name) && (arguments.value(name) ?? "").isEmpty {
            throw invocation.usageError("--\(name) needs a value")
        }
        let input = arguments.value("input")
        let prefix = arguments.value("from-environment")
        let tag = arguments.value("tag")
        guard input != nil || prefix != nil else {
            throw invocation.usageError("say where the keys come from: --input FILE or --from-environment PREFIX --tag TAG")
        }
        guard let output = arguments.value("output") else { throw invocation.usageError("--output FILE.swift is required") }
        if prefix != nil && tag == nil { throw invocation.usageError("--from-environment needs --tag TAG") }
        if prefix == nil && tag != nil { throw invocation.usageError("--tag goes with --from-environment PREFIX") }
        let access = arguments.value("access") ?? "internal"
        guard access == "internal" || access == "public" else {
            throw invocation.usageError("--access must be internal or public, not '\(access)'")
        }
        let selected = arguments.values("environment")
        if selected.contains(where: \.isEmpty) { throw invocation.usageError("--environment needs a name") }
        if !selected.isEmpty && input == nil { throw invocation.usageError("--environment selects from --input FILE") }

        var environments: [CompiledKeyGenerator.Environment] = []
        var inputs: [String] = []
        if let input {
            let url = URL(fileURLWithPath: input)
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw CommandLineError.retrieval(
                    KeyRetrievalError.unreadableFile(path: url.path, reason: error.localizedDescription), invocation)
            }
            do {
                environments = try CompiledKeyGenerator.environments(fromKeysFile: data, path: url.lastPathComponent)
            } catch {
                throw CommandLineError.retrieval(error, invocation)
            }
            if !selected.isEmpty {
                let available = environments.map(\.tag)
                if let missing = selected.first(where: { !available.contains($0) }) {
                    throw CommandLineError.failure(
                        "\(url.lastPathComponent) has no environment \"\(missing)\".",
                        recovery: "choose one of \(available.joined(separator: ", ")), or leave out --environment.")
                }
                environments = environments.filter { selected.contains($0.tag) }
            }
            inputs.append(url.lastPathComponent)
        }
        if let prefix, let tag {
            guard !environments.contains(where: { $0.tag == tag }) else {
                throw invocation.usageError("--tag \(tag) is also an environment of the keys file; choose another tag")
            }
            let fromVariables = CompiledKeyGenerator.environment(
                fromVariables: invocation.environment, prefix: prefix, tag: tag)
            if fromVariables.keys.isEmpty {
                invocation.output.warning("no environment variable starts with \(prefix)_; environment \(tag) has no keys.")
            }
            environments.append(fromVariables)
            inputs.append("environment variables \(prefix)_*")
        }

        let options = CompiledKeyGenerator.Options(
            accessLevel: access, typeNamePrefix: arguments.value("type-prefix") ?? "CompiledKeys",
            inputDescription: inputs.joined(separator: " and "))
        let source: String
        do {
            source = try CompiledKeyGenerator.generateSource(environments, options: options)
        } catch {
            if case KeyRetrievalError.malformedFile(_, _, let reason) = error, reason.contains("type name prefix") {
                throw invocation.usageError("--type-prefix must be a Swift identifier such as CompiledKeys")
            }
            throw CommandLineError.retrieval(error, invocation)
        }
        let outputURL = URL(fileURLWithPath: output)
        do {
            try Data(source.utf8).write(to: outputURL, options: .atomic)
        } catch {
            throw CommandLineError.failure(
                "cannot write \(outputURL.path): \(error.localizedDescription)",
                recovery: "check that the directory exists and is writable.")
        }

        let typePrefix = options.typeNamePrefix
        let out = invocation.output
        let sorted = environments.sorted { $0.tag < $1.tag }
        if out.json {
            out.printJSON([
                "output": outputURL.path,
                "environments": sorted.map { environment -> [String: Any] in
                    [
                        "tag": environment.tag, "type": typePrefix + typeSuffix(environment.tag),
                        "keys": environment.keys.map(\.description).sorted(),
                    ]
                },
            ])
            return
        }
        out.info("Wrote \(outputURL.path) (\(access) types, obfuscated with a new random salt):")
        var table = ColumnTable(headers: ["ENVIRONMENT", "TYPE", "KEYS"])
        for environment in sorted {
            let keys = environment.keys.map(\.description).sorted()
            table.add([
                environment.tag + (conditionText(environment.tag).map { " (\($0))" } ?? ""),
                typePrefix + typeSuffix(environment.tag), keys.isEmpty ? "(none)" : keys.joined(separator: ", "),
            ])
        }
        for line in table.lines(indent: 2) { out.info(line) }
        out.info("Compiled keys are obfuscation, not secrecy: use them for non-sensitive keys only.")
    }

    /// `debug` → `Debug`, `staging-eu` → `StagingEu` (as CompiledKeyGenerator names types).
    static func typeSuffix(_ tag: String) -> String {
        let words = tag.split(whereSeparator: { !($0.isLetter || $0.isNumber) || !$0.isASCII })
        var result = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if result.isEmpty { result = "Unnamed" }
        if let first = result.first, first.isNumber { result = "_" + result }
        return result
    }

    private static func conditionText(_ tag: String) -> String? {
        "#if " + CompiledKeyGenerator.compilationCondition(for: tag)
    }
}
