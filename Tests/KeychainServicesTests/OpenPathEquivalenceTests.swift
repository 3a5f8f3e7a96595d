// Opening a keychain reads its environment variables, trims the machine identity and the
// access-group list, and names the machine with a hexadecimal tag without Foundation's
// general-purpose routines (each costs a short-lived process its first-use setup). These
// tests give the plain-Swift versions the same inputs as the Foundation ones they replace
// and expect the same answers.
import Foundation
import Testing

@testable import KeychainServices

struct OpenPathEquivalenceTests {
    /// Every Unicode scalar, in the positions trimming looks at.
    private static var samples: [String] {
        var samples = ["", " ", "\t\n", "abc", " a b ", "\u{3000}x\u{2029}", "e\u{301} ", " \u{301}", "\r\n\r\nid\r\n"]
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(Character(scalar))
            if value <= 0xFFFF || value % 97 == 0 {
                samples.append(text)
                samples.append(text + "x" + text)
            }
        }
        return samples
    }

    @Test func whitespaceTrimmingMatchesFoundation() {
        for sample in Self.samples {
            #expect(
                sample.trimmingScalars(where: ProcessVariables.isWhitespace) == sample.trimmingCharacters(in: .whitespaces),
                "whitespace around \(sample.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(
                sample.trimmingScalars(where: ProcessVariables.isWhitespaceOrNewline)
                    == sample.trimmingCharacters(in: .whitespacesAndNewlines),
                "whitespace and newlines around \(sample.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    @Test func substringTrimmingMatchesFoundation() {
        let list = " TEAM.app ,\u{00A0}TEAM.shared\t,, \u{2003} ,x"
        let parts = list.split(separator: ",")
        #expect(
            parts.map { $0.trimmingScalars(where: ProcessVariables.isWhitespace) }
                == parts.map { $0.trimmingCharacters(in: .whitespaces) })
    }

    @Test func namedVariablesMatchTheProcessEnvironment() {
        let names = ["PATH", "HOME", "KEYSMITH_MACHINE_ID", "KEYSMITH_KEY_STORE", "CREDENTIALS_DIRECTORY", "NO_SUCH_VARIABLE_X"]
        let environment = ProcessInfo.processInfo.environment
        let named = ProcessVariables.named("PATH", "HOME", "KEYSMITH_MACHINE_ID", "KEYSMITH_KEY_STORE", "CREDENTIALS_DIRECTORY", "NO_SUCH_VARIABLE_X")
        for name in names {
            #expect(named[name] == environment[name], "\(name)")
        }
        #expect(named.count == names.filter { environment[$0] != nil }.count)
    }

    @Test func hexadecimalMatchesFormat() {
        let every = (0...255).map { UInt8($0) }
        #expect(KeyHierarchy.hexadecimal(every) == every.map { String(format: "%02x", $0) }.joined())
        #expect(KeyHierarchy.hexadecimal([UInt8]()) == "")
        #expect(KeyHierarchy.hexadecimal(Data([0x0f, 0xa0])) == "0fa0")
    }

    /// The empty-database check (a `stat` now): an empty database file without a key file
    /// is a keychain still to be made, so the first add creates the key; a database with
    /// content whose key file is missing is refused rather than given a new key.
    @Test func emptyDatabaseFileStartsAKeychainAndAFullOneNeedsItsKey() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        try FileManager.default.createDirectory(
            at: keychain.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let database = keychain.directory.appendingPathComponent(KeychainEngine.databaseName).path
        #expect(FileManager.default.createFile(atPath: database, contents: Data(), attributes: [.posixPermissions: 0o600]))
        keychain.run { #expect(SecItemAdd(genp().with(kSecValueData, Data("1".utf8)) as CFDictionary, nil) == errSecSuccess) }
        KeychainEngine.close(directory: keychain.directory)
        let keyFile = keychain.directory.appendingPathComponent(KeychainEngine.keyFileName).path
        #expect(FileManager.default.fileExists(atPath: keyFile))
        try FileManager.default.removeItem(atPath: keyFile)
        keychain.run { #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecNotAvailable) }
        #expect(!FileManager.default.fileExists(atPath: keyFile), "no new key is made for a keychain with items")
    }

    @Test func machineIdentityTrimsAsBefore() throws {
        // The variable wins over /etc/machine-id and is used as given (not trimmed).
        #expect(try MachineIdentity.current(["KEYSMITH_MACHINE_ID": " id "]) == Data(" id ".utf8))
        if let text = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8) {
            let expected = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !expected.isEmpty {
                #expect(try MachineIdentity.current([:]) == Data(expected.utf8))
            }
        }
    }
}
