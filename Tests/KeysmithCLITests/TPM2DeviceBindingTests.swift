#if os(Linux)
import CLoadOnUse
import Foundation
import Testing

/// ThisDeviceOnly items of a TPM keychain are bound to the TPM, not only to the machine-id
/// text: the same machine id (and even the same device key) on another machine's TPM opens
/// none of them, and rows written before the binding existed still open. Two software TPMs
/// (swtpm) stand in for two machines.
@Suite(.enabled(if: SoftwareTPM.isInstalled, "swtpm is not installed (make deps installs it)"))
struct TPM2DeviceBindingTests {
    /// The same machine identity everywhere: only the TPM tells the machines apart.
    static let sameMachineID = ["KEYSMITH_MACHINE_ID": "0123456789abcdef0123456789abcdef"]

    func run(_ arguments: [String], _ home: TemporaryHome, _ tpm: SoftwareTPM?, keychain: URL,
             standardInput: String? = nil, extra: [String: String] = [:]) throws -> RunResult {
        var environment = Self.sameMachineID.merging(extra) { $1 }
        if let tpm { environment["KEYSMITH_TPM2_TCTI"] = tpm.tcti }
        return try keysmith(["--keychain", keychain.path] + arguments, home: home, standardInput: standardInput,
                            environment: environment, useKeychainFlag: false)
    }

    func add(_ account: String, _ secret: String, accessible: String, _ home: TemporaryHome, _ tpm: SoftwareTPM?,
             keychain: URL, update: Bool = false) throws {
        let added = try run(
            ["add-generic-password"] + (update ? ["-U"] : []) + ["-s", "binding", "-a", account, "--stdin", "--accessible", accessible],
            home, tpm, keychain: keychain, standardInput: secret + "\n")
        #expect(added.status == 0, "\(added)")
    }

    func read(_ account: String, _ home: TemporaryHome, _ tpm: SoftwareTPM?, keychain: URL) throws -> RunResult {
        try run(["find-generic-password", "-s", "binding", "-a", account, "-w"], home, tpm, keychain: keychain)
    }

    /// The device key sealed in `keychain`'s device.tpm2 by `tpm`.
    static func unsealedKey(in keychain: URL, tpm: SoftwareTPM) throws -> [UInt8] {
        let blob = [UInt8](try Data(contentsOf: keychain.appendingPathComponent("device.tpm2")).dropFirst(8))
        var key = [UInt8](repeating: 0, count: 64)
        var length = 0
        let outcome = tpm.tcti.withCString { tpm2_sealed_key_unseal($0, blob, blob.count, &key, key.count, &length) }
        try #require(outcome.failure == KEYSMITH_TPM2_SUCCESS && length == 32)
        return Array(key[0..<32])
    }

    /// Seals `key` with `tpm` into `keychain`'s device.tpm2 (what moving a key into a TPM
    /// leaves), removing device.key.
    static func seal(_ key: [UInt8], into keychain: URL, tpm: SoftwareTPM) throws {
        var blob = [UInt8](repeating: 0, count: Int(KEYSMITH_TPM2_BLOB_CAPACITY))
        var length = 0
        let outcome = tpm.tcti.withCString { tpm2_sealed_key_seal($0, key, key.count, 0, &blob, &length) }
        try #require(outcome.failure == KEYSMITH_TPM2_SUCCESS)
        let url = keychain.appendingPathComponent("device.tpm2")
        try? FileManager.default.removeItem(at: url)
        try Data(Array("KSTPM201".utf8) + blob[0..<length]).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        try? FileManager.default.removeItem(at: keychain.appendingPathComponent("device.key"))
    }

    @Test func thisDeviceOnlyItemsStayClosedOnAnotherTPMWithTheSameMachineIDAndDeviceKey() throws {
        let home = TemporaryHome()
        let first = try SoftwareTPM(in: home, name: "first")
        defer { first.stop() }
        let second = try SoftwareTPM(in: home, name: "second")
        defer { second.stop() }
        let keychain = home.url.appendingPathComponent("keychain-tpm")
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, first, keychain: keychain).status == 0)
        try add("bound", "this device only", accessible: "alwaysThisDeviceOnly", home, first, keychain: keychain)
        try add("portable", "any device", accessible: "always", home, first, keychain: keychain)
        #expect(try read("bound", home, first, keychain: keychain).stdout == "this device only\n")

        // The worst case for the binding: the files copied *and* the device key taken (here
        // unsealed from the first TPM and sealed again by the second), the same machine id.
        let copy = home.url.appendingPathComponent("copy-on-second-machine")
        try FileManager.default.copyItem(at: keychain, to: copy)
        try Self.seal(try Self.unsealedKey(in: keychain, tpm: first), into: copy, tpm: second)
        // Its anchor is bound to the first TPM's counter: accepted on purpose, as an attacker can.
        FileManager.default.createFile(atPath: copy.appendingPathComponent("keychain.anchor.reset").path, contents: nil)
        let portable = try read("portable", home, second, keychain: copy)
        #expect(portable.stdout == "any device\n", "the copy has the same device key: \(portable)")
        let bound = try read("bound", home, second, keychain: copy)
        #expect(bound.status != 0)
        #expect(!bound.stdout.contains("this device only") && !bound.stderr.contains("this device only"))
        let status = try run(["status"], home, second, keychain: copy)
        #expect(status.stdout.contains("other machine"), "\(status)")
    }

    @Test func thisDeviceOnlyItemsWrittenBeforeTheTPMBindingStillOpenAndMoveToItWhenWritten() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "upgrade")
        defer { tpm.stop() }
        let other = try SoftwareTPM(in: home, name: "elsewhere")
        defer { other.stop() }
        // A key file keychain: its ThisDeviceOnly rows are bound to the machine identity.
        let keychain = home.url.appendingPathComponent("keychain-moved")
        #expect(try run(["create", "--no-passphrase"], home, nil, keychain: keychain).status == 0)
        try add("old", "bound to the machine id", accessible: "alwaysThisDeviceOnly", home, nil, keychain: keychain)
        try add("rewritten", "first version", accessible: "alwaysThisDeviceOnly", home, nil, keychain: keychain)
        let file = [UInt8](try Data(contentsOf: keychain.appendingPathComponent("device.key")))
        try #require(file.count == 40 && file.prefix(8).elementsEqual("KSDEVK01".utf8))
        let key = Array(file[8...])
        // Its device key moved into the TPM: from here on it is a TPM keychain.
        try Self.seal(key, into: keychain, tpm: tpm)
        #expect(try read("old", home, tpm, keychain: keychain).stdout == "bound to the machine id\n")
        try add("rewritten", "second version", accessible: "alwaysThisDeviceOnly", home, tpm, keychain: keychain, update: true)
        #expect(try read("rewritten", home, tpm, keychain: keychain).stdout == "second version\n")
        #expect(try read("old", home, tpm, keychain: keychain).stdout == "bound to the machine id\n")

        // The rewritten row is bound to the TPM now; the one never written again is not (the
        // limit docs/SECURITY.md states): with the device key and the machine id on another
        // TPM, only the old row opens.
        let copy = home.url.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: keychain, to: copy)
        try Self.seal(key, into: copy, tpm: other)
        FileManager.default.createFile(atPath: copy.appendingPathComponent("keychain.anchor.reset").path, contents: nil)
        #expect(try read("rewritten", home, other, keychain: copy).status != 0)
        #expect(try read("old", home, other, keychain: copy).stdout == "bound to the machine id\n")
    }
}
#endif
