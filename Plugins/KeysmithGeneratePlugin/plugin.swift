// KeysmithGeneratePlugin: a SwiftPM build-tool plugin that compiles keys files into Swift
// source with `keysmith generate`, at build time, into the plugin's work directory (never
// into the source tree, so generated keys are never committed by accident).
//
// Add to a target that depends on Keysmith:
//
//     .target(name: "App", dependencies: ["Keysmith"],
//             plugins: [.plugin(name: "KeysmithGeneratePlugin", package: "Keysmith")])
//
// and put a keys file in the target's directory named `<Name>.keysmith.json` (or
// `.keysmith.plist`). `Keys.keysmith.json` becomes the types `CompiledKeys`,
// `CompiledKeysDebug`, `CompiledKeysRelease`, ...; `Payments.keysmith.json` becomes
// `PaymentsKeys`, `PaymentsKeysDebug`, ... The values are obfuscated with a random salt
// drawn at each generation. Obfuscation is not secrecy: keep sensitive keys in the keychain.
import Foundation
import PackagePlugin

@main
struct KeysmithGeneratePlugin: BuildToolPlugin {
    /// One build command per keys file in the target.
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "keysmith")
        return target.sourceFiles.compactMap { file in
            command(for: file.url, tool: tool.url, workDirectory: context.pluginWorkDirectoryURL)
        }
    }
}

/// The suffixes that mark a keys file.
private let keysFileSuffixes = [".keysmith.json", ".keysmith.plist"]

/// The `keysmith generate` command for one file, or `nil` when it is not a keys file.
private func command(for input: URL, tool: URL, workDirectory: URL) -> Command? {
    let name = input.lastPathComponent
    guard let suffix = keysFileSuffixes.first(where: { name.hasSuffix($0) }) else { return nil }
    let base = String(name.dropLast(suffix.count))
    let words = base.split(whereSeparator: { !($0.isLetter || $0.isNumber) || !$0.isASCII })
    var prefix = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    prefix = prefix.isEmpty || prefix == "Keys" ? "CompiledKeys" : prefix + "Keys"
    if let first = prefix.first, first.isNumber { prefix = "_" + prefix }
    let output = workDirectory.appendingPathComponent("\(prefix).generated.swift")
    return .buildCommand(
        displayName: "Generating obfuscated compiled keys from \(name)",
        executable: tool,
        arguments: ["generate", "--input", input.path, "--output", output.path, "--type-prefix", prefix],
        inputFiles: [input],
        outputFiles: [output])
}

#if canImport(XcodeProjectPlugin)
    import XcodeProjectPlugin

    extension KeysmithGeneratePlugin: XcodeBuildToolPlugin {
        /// The same commands for Xcode targets.
        func createBuildCommands(context: XcodePluginContext, target: XcodeTarget) throws -> [Command] {
            let tool = try context.tool(named: "keysmith")
            return target.inputFiles.compactMap { file in
                command(for: file.url, tool: tool.url, workDirectory: context.pluginWorkDirectoryURL)
            }
        }
    }
#endif
