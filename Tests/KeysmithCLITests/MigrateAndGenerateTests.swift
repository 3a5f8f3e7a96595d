import Foundation
import Testing

/// `migrate-service` (run twice: idempotent) and `generate` (no plaintext key in the output).
struct MigrateAndGenerateTests {
    @Test func migrateServiceMovesEveryItemKeepsItsAttributesAndCanRunTwice() throws {
        let home = TemporaryHome()
        try storeGenericPassword("alpha-secret", service: "old.svc", account: "alpha", home: home, extra: ["-l", "Alpha", "-j", "note"])
        #expect(try keysmith(["rotate", "db_key", "--stdin", "--version", "1", "--service", "old.svc"], home: home, standardInput: "db-v1").status == 0)
        #expect(try keysmith(["rotate", "db_key", "--stdin", "--version", "2", "--service", "old.svc"], home: home, standardInput: "db-v2").status == 0)
        try storeGenericPassword("unrelated", service: "other.svc", account: "alpha", home: home)
        let before = try keysmith(["find-generic-password", "-s", "old.svc", "-a", "db_key@1", "--json"], home: home).json()

        let first = try keysmith(["migrate-service", "old.svc", "new.svc"], home: home)
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.isEmpty, "no progress when piped: \(first)")
        #expect(first.stdout.contains("Moved 3 generic passwords from service \"old.svc\" to \"new.svc\""), "\(first)")
        for account in ["alpha", "db_key@1", "db_key@2"] {
            #expect(first.stdout.contains(account))
            let gone = try keysmith(["find-generic-password", "-s", "old.svc", "-a", account], home: home)
            #expect(gone.status == 44, "\(account) left under the old service")
        }
        for secret in ["alpha-secret", "db-v1", "db-v2"] { #expect(!first.stdout.contains(secret)) }

        // Secrets, label, comment and accessibility moved with the items.
        let alpha = try keysmith(["find-generic-password", "-s", "new.svc", "-a", "alpha", "-w"], home: home)
        #expect(alpha.stdout == "alpha-secret\n")
        let moved = try keysmith(["find-generic-password", "-s", "new.svc", "-a", "alpha", "--json"], home: home).json()
        #expect(moved["label"] as? String == "Alpha")
        #expect(moved["comment"] as? String == "note")
        let versioned = try keysmith(["find-generic-password", "-s", "new.svc", "-a", "db_key@1", "--json"], home: home).json()
        #expect(versioned["accessible"] as? String == before["accessible"] as? String)
        #expect(versioned["label"] as? String == "db_key")
        // The keys' versions survive: the retriever finds both under the new service.
        let old = try keysmith(["resolve", "db_key", "--service", "new.svc", "--version", "1", "--reveal", "--quiet"], home: home)
        #expect(old.stdout == "db-v1\n", "\(old)")
        let newest = try keysmith(["resolve", "db_key", "--service", "new.svc", "--json"], home: home).json()
        #expect(newest["version"] as? String == "2")
        // Items of other services are untouched.
        #expect(try keysmith(["find-generic-password", "-s", "other.svc", "-a", "alpha", "-w"], home: home).stdout == "unrelated\n")

        // Run again: nothing to move, and still success.
        let second = try keysmith(["migrate-service", "old.svc", "new.svc"], home: home)
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.contains("Nothing to move"))
        let json = try keysmith(["migrate-service", "old.svc", "new.svc", "--json"], home: home).json()
        #expect(json["moved"] as? [String] == [])
        #expect(json["from"] as? String == "old.svc" && json["to"] as? String == "new.svc")
        let count = try keysmith(["dump-keychain", "--json"], home: home).json()["count"] as? Int
        #expect(count == 4)
    }

    @Test func migrateServiceFinishesAnInterruptedRunAndKeepsConflicts() throws {
        let home = TemporaryHome()
        // An interrupted run: the new copy was written, the old one not yet deleted.
        try storeGenericPassword("same", service: "old.svc", account: "done", home: home)
        try storeGenericPassword("same", service: "new.svc", account: "done", home: home)
        // A conflict: both services hold the account with different secrets.
        try storeGenericPassword("old-value", service: "old.svc", account: "clash", home: home)
        try storeGenericPassword("new-value", service: "new.svc", account: "clash", home: home)

        let result = try keysmith(["migrate-service", "old.svc", "new.svc", "--json"], home: home)
        #expect(result.status == 1, "\(result)")
        let json = try result.json()
        #expect(json["alreadyPresent"] as? [String] == ["done"])
        #expect(json["conflicts"] as? [String] == ["clash"])
        #expect(result.stderr.contains("left under service \"old.svc\""))
        #expect(result.stderr.split(separator: "\n").count == 2)
        #expect(!result.stderr.contains("old-value") && !result.stderr.contains("new-value"))
        #expect(try keysmith(["find-generic-password", "-s", "old.svc", "-a", "done"], home: home).status == 44)
        #expect(try keysmith(["find-generic-password", "-s", "old.svc", "-a", "clash", "-w"], home: home).stdout == "old-value\n")
        #expect(try keysmith(["find-generic-password", "-s", "new.svc", "-a", "clash", "-w"], home: home).stdout == "new-value\n")
    }

    static let keysFile = """
        {
          "version": "2024.06.01",
          "debug": { "api_key": "debug-plaintext-key-0001", "maps_key": { "value": "\(Data("maps-plaintext-0002".utf8).base64EncodedString())" } },
          "release": { "api_key": { "value": "\(Data("release-plaintext-key-0003".utf8).base64EncodedString())", "version": "2024.07.01" } }
        }
        """

    @Test func generateWritesSwiftSourceWithoutAnyPlaintextKey() throws {
        let home = TemporaryHome()
        let input = try writeFile("Keys.keysmith.json", Self.keysFile, in: home)
        let output = home.url.appendingPathComponent("CompiledKeys.swift").path
        let result = try keysmith(["generate", "--input", input, "--output", output], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("CompiledKeysDebug") && result.stdout.contains("CompiledKeysRelease"))
        #expect(result.stdout.contains("api_key@2024.07.01") && result.stdout.contains("maps_key@2024.06.01"))
        #expect(result.stdout.contains("obfuscation, not secrecy"))
        let source = try String(contentsOfFile: output, encoding: .utf8)
        #expect(source.contains("enum CompiledKeysDebug"))
        #expect(source.contains("enum CompiledKeysRelease"))
        #expect(source.contains("#if DEBUG") && source.contains("#if !DEBUG"))
        #expect(source.contains("static func source(for environmentTag: String) -> CompiledKeySource?"))
        #expect(source.contains("Obfuscation is not secrecy"))
        #expect(source.contains("internal enum"))
        for secret in ["debug-plaintext-key-0001", "maps-plaintext-0002", "release-plaintext-key-0003"] {
            let forms = GeneratedSourceScan.forms(of: Data(secret.utf8), foundIn: source)
            #expect(forms.isEmpty, "\(secret) is in the generated file as \(forms)")
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
        }
        // A fresh salt at each generation: two runs differ.
        #expect(try keysmith(["generate", "--input", input, "--output", output], home: home).status == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) != source)
    }

    @Test func generateSelectsEnvironmentsAndReadsVariablesAsThePluginDoes() throws {
        let home = TemporaryHome()
        let input = try writeFile("Payments.keysmith.json", Self.keysFile, in: home)
        let output = home.url.appendingPathComponent("PaymentsKeys.generated.swift").path
        // The build-tool plugin's command line.
        let plugin = try keysmith(
            ["generate", "--input", input, "--output", output, "--type-prefix", "PaymentsKeys"], home: home,
            useKeychainFlag: false)
        #expect(plugin.status == 0, "\(plugin)")
        #expect(try String(contentsOfFile: output, encoding: .utf8).contains("enum PaymentsKeysRelease"))

        let result = try keysmith(
            ["generate", "--input", input, "--environment", "release", "--from-environment", "CI_KEY", "--tag", "ci",
             "--output", output, "--access", "public", "--json"],
            home: home, environment: ["CI_KEY_TOKEN": "ci-plaintext-token-0004"])
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        let environments = try #require(json["environments"] as? [[String: Any]])
        #expect(environments.map { $0["tag"] as? String } == ["ci", "release"])
        #expect(environments.first?["keys"] as? [String] == ["token@builtin"])
        #expect(environments.last?["type"] as? String == "CompiledKeysRelease")
        let source = try String(contentsOfFile: output, encoding: .utf8)
        #expect(!source.contains("CompiledKeysDebug"), "--environment release leaves debug out")
        #expect(source.contains("public enum CompiledKeysCi"))
        #expect(GeneratedSourceScan.forms(of: Data("ci-plaintext-token-0004".utf8), foundIn: source).isEmpty)
        #expect(GeneratedSourceScan.forms(of: Data("release-plaintext-key-0003".utf8), foundIn: source).isEmpty)

        let missing = try keysmith(["generate", "--input", input, "--output", output, "--environment", "staging"], home: home)
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("has no environment \"staging\""))
        let malformed = try keysmith(
            ["generate", "--input", try writeFile("bad.json", #"{"debug": "not a dictionary"}"#, in: home), "--output", output],
            home: home)
        #expect(malformed.status == 1, "\(malformed)")
        #expect(malformed.stderr.contains("malformed key file"))
        let badPrefix = try keysmith(["generate", "--input", input, "--output", output, "--type-prefix", "2bad"], home: home)
        #expect(badPrefix.status == 2, "\(badPrefix)")
    }
}
