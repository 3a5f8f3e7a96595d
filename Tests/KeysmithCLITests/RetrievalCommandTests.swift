import Foundation
import Testing

/// Writes a file into the test's temporary home and returns its path.
func writeFile(_ name: String, _ text: String, in home: TemporaryHome) throws -> String {
    let url = home.url.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url.path
}

/// `resolve`, `explain`, `audit` and `rotate`, run as the built binary against a config file
/// and a temporary keychain.
struct RetrievalCommandTests {
    /// A JSON key file: api_key (nested, base64, version 2024.06.01) and maps_key (bare text).
    static let keysJSON = """
        {
          "api_key": { "value": "\(Data("config-api-key-1".utf8).base64EncodedString())", "version": "2024.06.01" },
          "maps_key": "plain-maps-key-2"
        }
        """

    @Test func resolveAndExplainAgainstAConfigFileAndTheKeychain() throws {
        let home = TemporaryHome()
        let keys = try writeFile("Keys.json", Self.keysJSON, in: home)

        // Only the config file holds the key: it answers, under a camelCase request too.
        let fromFile = try keysmith(["resolve", "apiKey", "--config", keys], home: home)
        #expect(fromFile.status == 0, "\(fromFile)")
        for expected in ["identifier    apiKey", "matched name  api_key", "version       2024.06.01", "ConfigFile(json)", keys] {
            #expect(fromFile.stdout.contains(expected), "missing \(expected): \(fromFile)")
        }
        #expect(!fromFile.stdout.contains("config-api-key-1"))
        #expect(fromFile.stderr.isEmpty)

        let json = try keysmith(["resolve", "api_key", "--config", keys, "--json"], home: home).json()
        #expect(json["source"] as? String == "configFile")
        #expect(json["sourceDescription"] as? String == "ConfigFile(json)")
        #expect(json["version"] as? String == "2024.06.01")
        #expect(json["matchedName"] as? String == "api_key")
        #expect(json["secret"] == nil && json["secretBase64"] == nil)

        // The explain trace: every keychain candidate misses, then the config file hits.
        let explained = try keysmith(["explain", "api_key", "--config", keys], home: home)
        #expect(explained.status == 0, "\(explained)")
        let lines = explained.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Lookup of \"api_key\" (newest version)") == true, "\(explained)")
        #expect(lines.contains { $0.contains("priority: Keychain > ConfigFile > Environment") })
        #expect(lines.contains { $0.contains("candidates: api_key, API_KEY, apiKey") })
        #expect(lines.filter { $0.contains("Keychain") && $0.contains("miss") }.count == 3, "\(explained)")
        #expect(lines.contains { $0.contains("ConfigFile(json)") && $0.contains("hit 2024.06.01") })
        #expect(lines.contains { $0.contains("=> ConfigFile(json) \"api_key\" version 2024.06.01") })
        #expect(lines.contains { $0.hasPrefix("  total: ") })
        #expect(!explained.stdout.contains("config-api-key-1"))

        // Store the key in the keychain: now the keychain wins, over the file's copy.
        let stored = try keysmith(
            ["rotate", "api_key", "--stdin", "--version", "2024.06.02"], home: home, standardInput: "keychain-api-key-3")
        #expect(stored.status == 0, "\(stored)")
        #expect(!stored.stdout.contains("keychain-api-key-3"))
        let fromKeychain = try keysmith(["resolve", "api_key", "--config", keys, "--json"], home: home).json()
        #expect(fromKeychain["source"] as? String == "keychain")
        #expect(fromKeychain["version"] as? String == "2024.06.02")
        #expect((fromKeychain["location"] as? String)?.contains("keysmith.keys") == true)

        let trace = try keysmith(["explain", "api_key", "--config", keys, "--json"], home: home).json()
        #expect(trace["result"] as? String == "found")
        let winner = try #require(trace["winner"] as? [String: Any])
        #expect(winner["source"] as? String == "keychain")
        #expect(winner["version"] as? String == "2024.06.02")
        let steps = try #require(trace["steps"] as? [[String: Any]])
        #expect(steps.count == 1, "the first keychain candidate answers: \(steps)")
        #expect(steps.first?["outcome"] as? String == "hit")
        #expect(steps.first?["durationMicroseconds"] is Double)
        #expect(trace["candidates"] as? [String] == ["api_key", "API_KEY", "apiKey"])
        #expect(trace["sources"] as? [String] == ["Keychain", "ConfigFile(json)"])
    }

    @Test func resolveRevealsTheKeyOnlyWhenAsked() throws {
        let home = TemporaryHome()
        let stored = try keysmith(["rotate", "token", "--stdin", "--version", "1"], home: home, standardInput: "tok-secret-9")
        #expect(stored.status == 0, "\(stored)")
        let plain = try keysmith(["resolve", "token"], home: home)
        #expect(plain.status == 0 && !plain.stdout.contains("tok-secret-9"), "\(plain)")
        let revealed = try keysmith(["resolve", "token", "--reveal"], home: home)
        #expect(revealed.stdout.contains("secret        \"tok-secret-9\""), "\(revealed)")
        let bare = try keysmith(["resolve", "token", "--reveal", "--quiet"], home: home)
        #expect(bare.standardOutput == Data("tok-secret-9\n".utf8))
        let json = try keysmith(["resolve", "token", "--reveal", "--json"], home: home).json()
        #expect(json["secret"] as? String == "tok-secret-9")
        #expect(json["secretBase64"] as? String == Data("tok-secret-9".utf8).base64EncodedString())
        let quiet = try keysmith(["resolve", "token", "--quiet"], home: home)
        #expect(quiet.status == 0 && quiet.standardOutput.isEmpty)
    }

    @Test func notFoundExitsWith44AndTwoLinesOnStandardError() throws {
        let home = TemporaryHome()
        let keys = try writeFile("Keys.json", Self.keysJSON, in: home)
        for command in ["resolve", "explain"] {
            let result = try keysmith([command, "missing_key", "--config", keys], home: home)
            #expect(result.status == 44, "\(result)")
            let errors = result.stderr.split(separator: "\n")
            #expect(errors.count == 2, "\(result)")
            #expect(errors.first?.hasPrefix("keysmith: \(command): no key \"missing_key\" in Keychain") == true)
            #expect(errors.last?.hasPrefix("  to fix: ") == true)
            #expect(errors.last?.contains("keysmith audit --config") == true)
            #expect(command == "explain" ? result.stdout.contains("=> not found") : result.stdout.isEmpty)
        }
        // Suffixes are removed, never added: api is not api_key.
        #expect(try keysmith(["resolve", "api", "--config", keys], home: home).status == 44)
        // The explain trace of a miss, as JSON, still parses.
        let trace = try keysmith(["explain", "missing_key", "--config", keys, "--json"], home: home)
        #expect(trace.status == 44)
        #expect(try trace.json()["result"] as? String == "notFound")
    }

    @Test func environmentIsConsultedOnlyWithAPrefix() throws {
        let home = TemporaryHome()
        let variables = ["XY_API_KEY": "env-api-key-4"]
        let without = try keysmith(["resolve", "api_key"], home: home, environment: variables)
        #expect(without.status == 44, "\(without)")
        let with = try keysmith(["resolve", "api_key", "--env-prefix", "XY", "--json"], home: home, environment: variables)
        #expect(with.status == 0, "\(with)")
        let json = try with.json()
        #expect(json["source"] as? String == "environment")
        #expect(json["version"] as? String == "env")
        #expect(json["location"] as? String == "environment variable XY_API_KEY")
        #expect(!with.stdout.contains("env-api-key-4"))
    }

    @Test func sensitiveKeyInAPlaintextSourceIsRefusedWithExitStatus3() throws {
        let home = TemporaryHome()
        let keys = try writeFile("Keys.json", Self.keysJSON, in: home)
        let refused = try keysmith(["resolve", "maps_key", "--config", keys, "--sensitive", "maps_key"], home: home)
        #expect(refused.status == 3, "45 is macOS security's duplicate item: \(refused)")
        let errors = refused.stderr.split(separator: "\n")
        #expect(errors.count == 2, "\(refused)")
        #expect(errors.first?.contains("refused to serve sensitive key \"maps_key\"") == true)
        #expect(errors.first?.contains(keys) == true, "names the file")
        #expect(errors.last?.contains("keysmith rotate maps_key --stdin") == true)
        #expect(!refused.stderr.contains("plain-maps-key-2"))
        let explained = try keysmith(["explain", "maps_key", "--config", keys, "--sensitive", "maps_key"], home: home)
        #expect(explained.status == 3)
        #expect(explained.stdout.contains("REFUSED"))
        // Once the keychain holds it, the keychain copy is served.
        #expect(try keysmith(["rotate", "maps_key", "--generate", "16", "--version", "1"], home: home).status == 0)
        let served = try keysmith(["resolve", "maps_key", "--config", keys, "--sensitive", "maps_key", "--json"], home: home)
        #expect(served.status == 0, "\(served)")
        #expect(try served.json()["source"] as? String == "keychain")
    }

    @Test func malformedOrMissingConfigFilesAreErrorsNotMisses() throws {
        let home = TemporaryHome()
        let bad = try writeFile("Bad.json", #"{ "api_key": { "value": "not base64!" } }"#, in: home)
        let malformed = try keysmith(["resolve", "api_key", "--config", bad], home: home)
        #expect(malformed.status == 1, "\(malformed)")
        #expect(malformed.stderr.contains("malformed key file: entry \"api_key\" of \(bad)"))
        #expect(malformed.stderr.split(separator: "\n").count == 2)
        let missing = try keysmith(["audit", "--config", home.url.appendingPathComponent("nope.plist").path], home: home)
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("cannot read the key file"))
    }

    @Test(arguments: [
        (["resolve"], "ID is required"),
        (["explain", "a", "--version", "1", "--min-version", "2"], "not both"),
        (["resolve", "a", "--min-version="], "--min-version needs a version"),
        (["rotate", "a", "--generate", "8"], "--version VERSION is required"),
        (["rotate", "a", "--version", "1"], "no key"),
        (["rotate", "a", "--version", "1", "--generate", "0"], "from 1 to 4096"),
        (["rotate", "a", "--version", "1@2", "--generate", "8"], "may not contain \"@\""),
        (["rotate", "a", "--version", "1", "--generate", "8", "--stdin"], "not both"),
        (["migrate-service", "one"], "give the old and the new service"),
        (["migrate-service", "same", "same"], "the same service"),
        (["generate", "--output", "x.swift"], "say where the keys come from"),
        (["generate", "--input", "k.json"], "--output FILE.swift is required"),
        (["generate", "--from-environment", "CI", "--output", "x.swift"], "needs --tag"),
        (["generate", "--input", "k.json", "--output", "x.swift", "--access", "open"], "internal or public"),
        (["audit", "extra"], "unexpected argument 'extra'"),
    ])
    func badUsageOfRetrievalCommandsExitsWith2(_ arguments: [String], _ message: String) throws {
        let home = TemporaryHome()
        let result = try keysmith(arguments, home: home)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
        #expect(result.stderr.contains("usage: keysmith \(arguments[0])"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.path), "a usage error touches no keychain")
    }

    @Test func rotateWithExactStandardInputKeepsEveryByte() throws {
        let home = TemporaryHome()
        let key = Data([0x00, 0xFF, 0x7F]) + Data("key\r\n".utf8)
        let stored = try keysmith(
            ["rotate", "signing_key", "--stdin-exact", "--version", "1", "--json"], home: home, standardInputBytes: key)
        #expect(stored.status == 0, "\(stored)")
        #expect(try stored.json()["bytes"] as? Int == key.count, "nothing removed")
        let line = try keysmith(
            ["rotate", "signing_key", "--stdin", "--version", "2", "--json"], home: home, standardInputBytes: key)
        #expect(try line.json()["bytes"] as? Int == key.count - 2, "--stdin removes the CR LF")
        let both = try keysmith(
            ["rotate", "signing_key", "--stdin", "--stdin-exact", "--version", "3"], home: home, standardInputBytes: key)
        #expect(both.status == 2, "\(both)")
    }

    @Test func rotateThenResolveWithAMinimumVersion() throws {
        let home = TemporaryHome()
        let first = try keysmith(["rotate", "db_key", "--generate", "32", "--version", "2024.06.01"], home: home)
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("Stored version 2024.06.01 of \"db_key\""))
        #expect(first.stdout.contains("32 random bytes"))
        let second = try keysmith(
            ["rotate", "db_key", "--stdin", "--version", "2024.7.1", "--json"], home: home, standardInput: "new-db-key\n")
        #expect(second.status == 0, "\(second)")
        let report = try second.json()
        #expect(report["versions"] as? [String] == ["2024.06.01", "2024.7.1"])
        #expect(report["newest"] as? String == "2024.7.1")
        #expect(report["bytes"] as? Int == 10, "one trailing newline removed")
        #expect(report["origin"] as? String == "stdin")
        #expect(report["replaced"] as? Bool == false)
        #expect(!second.stdout.contains("new-db-key"))

        // The newest by default; at or above a minimum (numerically: 2024.07.01 == 2024.7.1).
        let newest = try keysmith(["resolve", "db_key", "--json"], home: home).json()
        #expect(newest["version"] as? String == "2024.7.1")
        let atLeast = try keysmith(["resolve", "db_key", "--min-version", "2024.07.01", "--json"], home: home).json()
        #expect(atLeast["version"] as? String == "2024.7.1")
        let lower = try keysmith(["resolve", "db_key", "--min-version", "2024.6.30", "--json"], home: home).json()
        #expect(lower["version"] as? String == "2024.7.1", "newest at or above the minimum")
        // The old version stays retrievable by exact version.
        let old = try keysmith(["resolve", "db_key", "--version", "2024.06.01", "--json"], home: home).json()
        #expect(old["version"] as? String == "2024.06.01")
        #expect(old["location"] as? String == "keychain service \"keysmith.keys\", account \"db_key@2024.06.01\", access group \"keysmith.shared\"")
        let revealed = try keysmith(["resolve", "db_key", "--min-version", "2024.07.01", "--reveal", "--quiet"], home: home)
        #expect(revealed.stdout == "new-db-key\n")
        // Too high a minimum: exit 44.
        let tooHigh = try keysmith(["resolve", "db_key", "--min-version", "2024.08"], home: home)
        #expect(tooHigh.status == 44, "\(tooHigh)")
        #expect(tooHigh.stderr.contains("has a version >= 2024.08"))

        // An existing version is not overwritten without --replace.
        let again = try keysmith(["rotate", "db_key", "--generate", "16", "--version", "2024.07.01"], home: home)
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("already exists") && again.stderr.contains("--replace"))
        let replaced = try keysmith(
            ["rotate", "db_key", "--generate", "16", "--version", "2024.07.01", "--replace", "--json"], home: home)
        #expect(replaced.status == 0, "\(replaced)")
        #expect(try replaced.json()["replaced"] as? Bool == true)
        #expect(try replaced.json()["versions"] as? [String] == ["2024.06.01", "2024.7.1"])

        // Storing an older version works but warns that resolve keeps serving the newest.
        let older = try keysmith(["rotate", "db_key", "--generate", "16", "--version", "2023.1"], home: home)
        #expect(older.status == 0)
        #expect(older.stderr.contains("warning: version 2023.1 is not the newest"), "\(older)")

        // Another service is another set of keys.
        let elsewhere = try keysmith(["resolve", "db_key", "--service", "other.keys"], home: home)
        #expect(elsewhere.status == 44)
    }

    @Test func auditListsEveryKeyItsEffectiveCopyShadowedCopiesAndWarnings() throws {
        let home = TemporaryHome()
        let keys = try writeFile("Keys.json", Self.keysJSON, in: home)
        #expect(try keysmith(["rotate", "api_key", "--generate", "24", "--version", "2024.07.01"], home: home).status == 0)
        let variables = ["XY_MAPS_KEY": "env-maps", "XY_ONLY_ENV": "env-only"]

        let text = try keysmith(["audit", "--config", keys, "--env-prefix", "XY"], home: home, environment: variables)
        #expect(text.status == 0, "\(text)")
        #expect(text.stderr.isEmpty, "no progress when piped: \(text)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first { $0.hasPrefix("KEY ") })
        for column in ["COPY", "SOURCE", "NAME", "VERSION", "VERSIONS", "LOCATION"] {
            #expect(header.contains(column), "missing column \(column)")
        }
        // ColumnTable alignment: every column starts where its header does.
        let sourceColumn = try #require(header.range(of: "SOURCE")).lowerBound.utf16Offset(in: header)
        let apiRow = try #require(lines.first { $0.hasPrefix("api_key ") })
        #expect(apiRow.contains("effective") && apiRow.contains("2024.07.01"))
        #expect(String(apiRow.dropFirst(sourceColumn)).hasPrefix("Keychain"), "\(apiRow)")
        #expect(lines.contains { $0.contains("shadowed") && $0.contains("ConfigFile(json)") && $0.contains("2024.06.01") })
        #expect(lines.contains { $0.hasPrefix("maps_key ") && $0.contains("ConfigFile(json)") })
        #expect(lines.contains { $0.contains("shadowed") && $0.contains("environment variable XY_MAPS_KEY") })
        #expect(lines.contains { $0.hasPrefix("only_env ") && $0.contains("Environment") })
        #expect(lines.contains("Warnings:"))
        #expect(lines.contains { $0.contains("! api_key: sources disagree on the version") })
        #expect(lines.last == "3 keys, 5 copies, 1 warning", "\(text)")
        for secret in ["config-api-key-1", "plain-maps-key-2", "env-maps", "env-only"] {
            #expect(!text.stdout.contains(secret))
        }

        let result = try keysmith(
            ["audit", "--config", keys, "--env-prefix", "XY", "--json", "--sensitive", "maps_key"], home: home,
            environment: variables)
        #expect(result.status == 0, "\(result)")
        let json = try result.json()
        #expect(json["count"] as? Int == 3)
        #expect(json["copies"] as? Int == 5)
        #expect(json["sources"] as? [String] == ["Keychain", "ConfigFile(json)", "Environment"])
        #expect(json["priority"] as? [String] == ["Keychain", "ConfigFile", "Environment", "Compiled", "Remote"])
        let entries = try #require(json["keys"] as? [[String: Any]])
        let api = try #require(entries.first { $0["identifier"] as? String == "api_key" })
        let effective = try #require(api["effective"] as? [String: Any])
        #expect(effective["source"] as? String == "keychain")
        #expect(api["effectiveVersion"] as? String == "2024.07.01")
        let shadowed = try #require(api["shadowed"] as? [[String: Any]])
        #expect(shadowed.map { $0["sourceDescription"] as? String } == ["ConfigFile(json)"])
        #expect(shadowed.first?["versions"] as? [String] == ["2024.06.01"])
        let maps = try #require(entries.first { $0["identifier"] as? String == "maps_key" })
        #expect(maps["sensitive"] as? Bool == true)
        #expect(maps["effective"] is NSNull, "a sensitive key is not served from plaintext")
        let warnings = try #require(json["warnings"] as? [String])
        #expect(warnings.contains { $0.contains("sensitive key \"maps_key\" has a plaintext copy") })
        #expect(warnings.contains { $0.contains("sources disagree") })

        // An empty keychain and no files: no keys, exit 0.
        let empty = try keysmith(["audit", "--service", "nothing.here"], home: home)
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.stdout.contains("No keys in any source."))
    }
}

/// The trace's header names how the tool itself was built: the installed (release) tool does
/// not call itself a debug build.
struct ExplainBuildLabelTests {
    @Test func explainNamesTheToolsOwnBuild() throws {
        let home = TemporaryHome()
        let keys = try writeFile("Keys.json", RetrievalCommandTests.keysJSON, in: home)
        let explained = try keysmith(["explain", "api_key", "--config", keys], home: home)
        #expect(explained.status == 0, "\(explained)")
        let header = try #require(explained.stdout.split(separator: "\n").first)
        #if DEBUG
        #expect(header.hasSuffix("[cli, debug build]"), "\(explained)")
        #else
        #expect(header.hasSuffix("[cli, release build]"), "\(explained)")
        #endif
    }
}
