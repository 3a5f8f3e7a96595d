#if os(Linux)
import CLoadOnUse
import Foundation
import Testing

/// The TPM key store against software TPMs (swtpm), each a "machine" of its own: the device
/// key sealed by the TPM, a copy that opens nothing elsewhere, PCR binding and its recovery
/// path, and the errors that say what is wrong.
@Suite(.enabled(if: SoftwareTPM.isInstalled, "swtpm is not installed (make deps installs it)"))
struct TPM2KeyStoreTests {
    /// Runs keysmith with the keychain's TPM at `tpm` (and nothing else of the key store set,
    /// unless `extra` says so: later commands find the store by themselves).
    func run(_ arguments: [String], _ home: TemporaryHome, _ tpm: SoftwareTPM?, keychain: URL? = nil,
             standardInput: String? = nil, extra: [String: String] = [:]) throws -> RunResult {
        var environment = extra
        if let tpm { environment["KEYSMITH_TPM2_TCTI"] = tpm.tcti }
        if let keychain {
            return try keysmith(["--keychain", keychain.path] + arguments, home: home, standardInput: standardInput,
                                environment: environment, useKeychainFlag: false)
        }
        return try keysmith(arguments, home: home, standardInput: standardInput, environment: environment)
    }

    /// The device key, unsealed here from the keychain's device.tpm2 with the same TPM (what
    /// the keychain does when it opens), to look for it.
    func deviceKey(in keychain: URL, tpm: SoftwareTPM) throws -> [UInt8] {
        let file = try Data(contentsOf: keychain.appendingPathComponent("device.tpm2"))
        #expect(file.prefix(8) == Data("KSTPM201".utf8))
        let blob = [UInt8](file.dropFirst(8))
        var key = [UInt8](repeating: 0, count: 64)
        var length = 0
        let outcome = tpm.tcti.withCString { tpm2_sealed_key_unseal($0, blob, blob.count, &key, key.count, &length) }
        try #require(outcome.failure == KEYSMITH_TPM2_SUCCESS, "unseal failed: \(outcome.failure) \(outcome.code)")
        try #require(length == 32)
        return Array(key[0..<32])
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test func keychainSealedByTheTPMReadsItsItemsFromAnotherProcessAndNoFileHoldsTheKey() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "a", logging: true)
        defer { tpm.stop() }
        let created = try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm)
        #expect(created.status == 0, "\(created)")
        for (account, accessibility, secret) in [("d", "always", "class-d-secret"), ("c", "afterFirstUnlock", "class-c-secret")] {
            let added = try run(
                ["add-generic-password", "-s", "tpm.test", "-a", account, "--stdin", "--accessible", accessibility], home, tpm,
                standardInput: secret + "\n")
            #expect(added.status == 0, "\(added)")
        }
        // Other processes, without KEYSMITH_KEY_STORE: the keychain's device.tpm2 says where its key is.
        for (account, secret) in [("d", "class-d-secret"), ("c", "class-c-secret")] {
            let read = try run(["find-generic-password", "-s", "tpm.test", "-a", account, "-w"], home, tpm)
            #expect(read.status == 0, "\(read)")
            #expect(read.stdout == secret + "\n")
        }
        let status = try run(["status"], home, tpm)
        #expect(status.stdout.contains("device key        TPM 2.0 (\(tpm.tcti)), sealed key \(home.keychain.path)/device.tpm2"), "\(status)")

        let key = try deviceKey(in: home.keychain, tpm: tpm)
        #expect(Set(key).count > 8, "the device key looks like random bytes")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.key").path))
        let names = try FileManager.default.contentsOfDirectory(atPath: home.keychain.path)
        #expect(names.contains("keychain.db") && names.contains("device.tpm2"), "\(names)")
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: home.keychain.appendingPathComponent(name)))
            #expect(!Self.contains(bytes, key), "\(name) holds the device key")
            #expect(!Self.contains(bytes, Array(key[0..<8])), "\(name) holds the start of the device key")
        }
        // Parameter encryption: the key crossed the bus to the TPM (sealing) and back (every
        // unseal) only encrypted. The log holds the commands (TPM2_Unseal, 0x0000015E, was sent).
        let exchanged = try tpm.loggedBytes()
        #expect(Self.contains(exchanged, [0x00, 0x00, 0x01, 0x5E]), "swtpm logged no TPM2_Unseal")
        #expect(!Self.contains(exchanged, Array(key[0..<8])), "the device key crossed the bus in the clear")
    }

    @Test func keychainCopiedToAnotherMachineOpensNothing() throws {
        let home = TemporaryHome()
        let first = try SoftwareTPM(in: home, name: "first")
        defer { first.stop() }
        let second = try SoftwareTPM(in: home, name: "second")
        defer { second.stop() }
        #expect(try run(["create", "--no-passphrase"], home, first, extra: ["KEYSMITH_KEY_STORE": "tpm2"]).status == 0)
        let added = try run(
            ["add-generic-password", "-s", "tpm.copy", "-a", "d", "--stdin", "--accessible", "always"], home, first,
            standardInput: "copied-class-d\n")
        #expect(added.status == 0, "\(added)")
        let copy = home.url.appendingPathComponent("copied")
        try FileManager.default.copyItem(at: home.keychain, to: copy)

        let elsewhere = try run(["find-generic-password", "-s", "tpm.copy", "-a", "d", "-w"], home, second, keychain: copy)
        #expect(elsewhere.status != 0)
        #expect(!elsewhere.stdout.contains("copied-class-d") && !elsewhere.stderr.contains("copied-class-d"))
        #expect(elsewhere.stderr.contains("sealed by another TPM"), "\(elsewhere)")
        #expect(elsewhere.stderr.contains("keysmith export"), "\(elsewhere)")
        // Asking for the key file store does not open it either.
        let asFile = try run(["find-generic-password", "-s", "tpm.copy", "-a", "d", "-w"], home, second, keychain: copy,
                             extra: ["KEYSMITH_KEY_STORE": "file"])
        #expect(asFile.status != 0)
        #expect(asFile.stderr.contains("sealed by the TPM"), "\(asFile)")
        // On its own machine the copy opens (it is the same keychain).
        let home2 = try run(["find-generic-password", "-s", "tpm.copy", "-a", "d", "-w"], home, first, keychain: copy)
        #expect(home2.stdout == "copied-class-d\n", "\(home2)")
    }

    @Test func absentTPMIsAClearErrorNamingCauseAndFix() throws {
        let home = TemporaryHome()
        let nowhere = try run(
            ["create", "--no-passphrase", "--key-store", "tpm2"], home, nil,
            extra: ["KEYSMITH_TPM2_TCTI": "device:\(home.url.path)/no-such-tpm"])
        #expect(nowhere.status != 0)
        #expect(nowhere.stderr.contains("No TPM: \(home.url.path)/no-such-tpm does not exist"), "\(nowhere)")
        #expect(nowhere.stderr.contains("KEYSMITH_KEY_STORE=file"), "\(nowhere)")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.tpm2").path))

        let tpm = try SoftwareTPM(in: home, name: "gone")
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        let tcti = tpm.tcti
        tpm.stop()
        let stopped = try run(["find-generic-password", "-s", "x", "-a", "y"], home, nil, extra: ["KEYSMITH_TPM2_TCTI": tcti])
        #expect(stopped.status != 0)
        #expect(stopped.stderr.contains("Cannot reach the TPM through KEYSMITH_TPM2_TCTI=\(tcti)"), "\(stopped)")
        #expect(stopped.stderr.contains("the TPM or simulator is running"), "\(stopped)")
    }

    @Test func keyFileKeychainIsNotTakenForATPMOne() throws {
        let home = TemporaryHome()
        #expect(try run(["create", "--no-passphrase"], home, nil).status == 0)
        let asTPM = try run(["status"], home, nil, extra: ["KEYSMITH_KEY_STORE": "tpm2"])
        #expect(asTPM.status != 0)
        #expect(asTPM.stderr.contains("device key is in the key file"), "\(asTPM)")
        let badStore = try run(["create", "--no-passphrase", "--key-store", "enclave"], home, nil, keychain: home.url.appendingPathComponent("other"))
        #expect(badStore.status != 0)
        #expect(badStore.stderr.contains("--key-store enclave is not a key store"), "\(badStore)")
    }

    @Test func changedPCRRefusesWithTheRecoveryPathAndAnEarlierExportRecovers() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "pcr")
        defer { tpm.stop() }
        // PCR 16, the debug PCR: anyone may extend it, as a firmware update changes PCR 7.
        let created = try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm, extra: ["KEYSMITH_TPM2_PCRS": "16"])
        #expect(created.status == 0, "\(created)")
        #expect(try run(["add-generic-password", "-s", "tpm.pcr", "-a", "d", "--stdin", "--accessible", "always"], home, tpm,
                        standardInput: "pcr-bound\n").status == 0)
        let status = try run(["status"], home, tpm)
        #expect(status.stdout.contains("bound to PCR 16"), "\(status)")
        let archive = home.url.appendingPathComponent("before.ksexport")
        let exported = try run(["export", archive.path, "--stdin"], home, tpm, standardInput: "archive passphrase\n")
        #expect(exported.status == 0, "\(exported)")

        try extendPCR16(tpm)
        let refused = try run(["find-generic-password", "-s", "tpm.pcr", "-a", "d", "-w"], home, tpm)
        #expect(refused.status != 0)
        #expect(!refused.stdout.contains("pcr-bound"))
        #expect(refused.stderr.contains("PCR 16 no longer holds the value"), "\(refused)")
        #expect(refused.stderr.contains("'keysmith import'"), "\(refused)")

        let fresh = home.url.appendingPathComponent("fresh")
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm, keychain: fresh).status == 0)
        let imported = try run(["import", archive.path, "--stdin"], home, tpm, keychain: fresh, standardInput: "archive passphrase\n")
        #expect(imported.status == 0, "\(imported)")
        let read = try run(["find-generic-password", "-s", "tpm.pcr", "-a", "d", "-w"], home, tpm, keychain: fresh)
        #expect(read.stdout == "pcr-bound\n", "\(read)")
    }

    @Test func tpm2TSSIsLoadedOnlyByKeychainsThatUseTheTPM() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "load")
        defer { tpm.stop() }
        let sealed = home.url.appendingPathComponent("sealed")
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm, keychain: sealed).status == 0)
        #expect(try run(["create", "--no-passphrase"], home, nil).status == 0)
        // The dynamic loader lists every library it opens (LD_DEBUG=files, on standard error).
        let withFile = try run(["find-generic-password", "-s", "none", "-a", "none"], home, nil, extra: ["LD_DEBUG": "files"])
        #expect(withFile.stderr.contains("file=libsodium"), "LD_DEBUG listed nothing: \(withFile)")
        #expect(!withFile.stderr.contains("libtss2"), "a key file keychain loaded tpm2-tss")
        let withTPM = try run(["find-generic-password", "-s", "none", "-a", "none"], home, tpm, keychain: sealed, extra: ["LD_DEBUG": "files"])
        #expect(withTPM.stderr.contains("file=libtss2-esys.so.0"), "\(withTPM.stderr.suffix(2000))")
    }

    /// Extends PCR 16 from outside, with tpm2-tools.
    func extendPCR16(_ tpm: SoftwareTPM) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tpm2_pcrextend")
        process.arguments = ["-T", tpm.tcti, "16:sha256=" + String(repeating: "ab", count: 32)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitForExit(process, seconds: 60)
        try #require(process.terminationStatus == 0, "tpm2_pcrextend failed")
    }
}
#endif
